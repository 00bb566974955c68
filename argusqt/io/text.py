"""Lexical helpers shared by every τ-Argus text format (argusqt/docs/formats.md §0).

Lines, tokens and path resolution are done once here so every reader reports the same
file/line positions and resolves Windows paths the same way.
"""

from __future__ import annotations

import re
from pathlib import Path, PureWindowsPath

from argusqt.errors import InputError


def decode_bytes(data: bytes) -> str:
    """UTF-8 when valid, otherwise Latin-1 (τ-Argus files are 8-bit)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def split_lines(text: str) -> list[str]:
    """Lines without terminators; LF, CRLF and stray CRs (`\\r\\r\\n`) all end one line.

    A file with CRs but no LF at all (old Mac files) is split on CR.
    """
    if "\n" not in text and "\r" in text:
        text = text.replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1].strip("\r") == "":
        lines.pop()  # text after the last terminator is not a line
    return [ln.rstrip("\r") for ln in lines]


#: Bytes read at a time: the first block is sniffed for binary content before the rest.
BLOCK = 1 << 20


def not_a_file(path: Path) -> str | None:
    """What `path` is when it exists but is not a regular file ("a folder", "a device …")."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a file (an endless or raw stream of bytes)"
    if stat.S_ISFIFO(mode):
        return "a pipe, not a file"
    return "not a regular file"


def _mostly_nul(b: bytes) -> bool:
    return b.count(b"\0") * 4 >= len(b) * 3


def _mostly_text(b: bytes) -> bool:
    return b.count(b"\0") * 4 <= len(b)


def binary_reason(block: bytes) -> str | None:
    """Why the first block of a file is not 8-bit text (τ-Argus's text formats), or None:
    UTF-16 (by its byte-order mark or its NUL every other byte) or other binary content."""
    if block.startswith((b"\xff\xfe", b"\xfe\xff")):
        return (
            "the file is UTF-16 text (it starts with a UTF-16 byte-order mark); save it as "
            "UTF-8 or Latin-1 (8-bit text, as τ-Argus reads)"
        )
    head = block[:512]
    odd, even = head[1::2], head[0::2]
    if len(head) >= 4 and (
        (_mostly_nul(odd) and _mostly_text(even)) or (_mostly_nul(even) and _mostly_text(odd))
    ):
        return (
            "the file is UTF-16 text (a NUL byte every other byte); save it as UTF-8 or "
            "Latin-1 (8-bit text, as τ-Argus reads)"
        )
    nuls = block.count(b"\0")
    if nuls * 4 > len(block):
        return (
            f"the file is binary, not text ({nuls} of its first {len(block)} bytes are NUL "
            "bytes); name the text file of this kind"
        )
    return None


def open_text(path: Path, what: str = "file"):
    """The file opened for reading in binary mode, after the checks every text reader needs:
    it exists, is a regular file, and its first block is not binary or UTF-16."""
    kind = not_a_file(path)
    if kind is not None:
        raise InputError(f"the {what} named here is {kind}", file=path)
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{what} not found", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read the {what} ({exc.strerror})", file=path) from None
    try:
        reason = binary_reason(fh.read(BLOCK))
        if reason is not None:
            raise InputError(reason, file=path, line=1)
        fh.seek(0)
    except BaseException:
        fh.close()
        raise
    return fh


def read_text_bytes(path: str | Path, what: str = "file", stop_at_nul: bool = True) -> bytes:
    """The bytes of a text file, read block by block: binary content is refused at its first
    block and (`stop_at_nul`) at the line of its first NUL byte, so a huge binary file is
    never read whole. A UTF-8 byte-order mark is dropped."""
    path = Path(path)
    chunks: list[bytes] = []
    lines = 0
    with open_text(path, what) as fh:
        try:
            while block := fh.read(BLOCK):
                nul = block.find(b"\0") if stop_at_nul else -1
                if nul >= 0:
                    line = lines + block.count(b"\n", 0, nul) + 1
                    start = block.rfind(b"\n", 0, nul) + 1
                    column = nul - start + 1 if start > 0 or not chunks else None
                    raise InputError(
                        "unexpected control character 0x00 (is this a text file of the "
                        "right kind?)",
                        file=path,
                        line=line,
                        column=column,
                    )
                lines += block.count(b"\n")
                chunks.append(block)
        except OSError as exc:
            raise InputError(f"cannot read the {what} ({exc.strerror})", file=path) from None
    data = b"".join(chunks)
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def read_lines(path: str | Path) -> list[str]:
    """All lines of a text file (line number = index + 1); InputError when unreadable, not a
    file, binary or UTF-16 (found at the first block or the first NUL, never after reading a
    huge file whole)."""
    return split_lines(decode_bytes(read_text_bytes(path)))


#: Control characters other than tab: never part of a τ-Argus text file.
CONTROL_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


def control_char_at(text: str) -> int | None:
    """Index of the first control character (not tab) in `text`, or None.

    Text formats never contain them; one is the sign of a damaged or binary file.
    """
    m = CONTROL_RE.search(text)
    return m.start() if m else None


def check_no_control(text: str, file: str | Path | None, lineno: int | None) -> None:
    """InputError at the first control character of a line, naming it and its column."""
    i = control_char_at(text)
    if i is not None:
        raise InputError(
            f"unexpected control character 0x{ord(text[i]):02X} (is this a text file of "
            "the right kind?)",
            file=file,
            line=lineno,
            column=i + 1,
        )


def is_comment(line: str) -> bool:
    """Blank lines and lines starting with `//` carry nothing (`.rda`, `.arb`, `.hst`, `.tab`)."""
    s = line.strip()
    return not s or s.startswith("//")


def tokenize(line: str, file: str | Path | None = None, lineno: int | None = None) -> list[str]:
    """Blank-separated tokens; `"…"` keeps inner blanks and loses its quotes; `<KW>` is a token.

    Tabs count as blanks. A `<` starts a keyword token that runs to the next `>` (so
    `<NUMERIC><SHADOW>` gives two tokens). An unterminated quote or keyword is an InputError.
    """
    s = line.replace("\t", " ").strip()
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == " ":
            i += 1
        elif c == '"':
            j = s.find('"', i + 1)
            if j < 0:
                raise InputError(
                    f"a quoted text starting at column {i + 1} has no closing '\"'",
                    file=file,
                    line=lineno,
                )
            out.append(s[i + 1 : j])
            i = j + 1
        elif c == "<":
            j = s.find(">", i + 1)
            if j < 0:
                raise InputError(
                    f"a keyword starting at column {i + 1} has no closing '>'",
                    file=file,
                    line=lineno,
                )
            out.append(s[i : j + 1])
            i = j + 1
        else:
            j = i
            while j < n and s[j] not in ' "<':
                j += 1
            out.append(s[i:j])
            i = j
    return out


def _find_case_insensitive(candidate: Path) -> Path | None:
    """`candidate` itself, or a file in its folder whose name differs only in case."""
    if candidate.is_file():
        return candidate
    folder = candidate.parent
    if not folder.is_dir():
        return None
    wanted = candidate.name.lower()
    matches = sorted(p for p in folder.iterdir() if p.name.lower() == wanted and p.is_file())
    return matches[0] if matches else None


#: Words of resolve_path's not-found message (callers with their own wording look for them).
NOT_FOUND = "was not found"


def resolve_path(
    name: str,
    relative_to: str | Path,
    log: list[str] | None = None,
    line: int | None = None,
) -> Path:
    """Find a file named inside another file: as given, next to the naming file, by base name.

    `relative_to` is the file that contains the name (its folder is used) or a folder;
    `line` is where the name stands, for the error message.
    An absolute name is tried as given; a relative one relative to the naming file's
    folder first (the working folder depends on how argusqt was started, so it is only the
    last resort). Then the base name (Windows and UNC paths split with PureWindowsPath) in
    that folder, then a relative name in the working folder. Each step also accepts a name
    differing only in case. A log line says which file was used.
    """
    ref = Path(relative_to)
    folder = ref if ref.is_dir() else ref.parent
    win = PureWindowsPath(name)
    posix = Path(name)
    candidates: list[tuple[Path, str]] = []
    if posix.is_absolute():
        candidates.append((posix, "as given"))
    elif not win.is_absolute() and not win.drive:
        candidates.append((folder / Path(*win.parts) if win.parts else folder, "relative"))
    if win.name:
        candidates.append((folder / win.name, "by base name"))
    if not posix.is_absolute() and not win.drive:
        candidates.append((Path.cwd() / posix, "relative to the working folder"))
    for cand, how in candidates:
        found = _find_case_insensitive(cand)
        if found is None:
            kind = not_a_file(cand) if cand.name else None
            if kind is not None:  # there, but a folder or a device: say so, not "not found"
                raise InputError(f"'{name}' named here is {kind} ({cand})", file=ref, line=line)
            continue
        if found.name != cand.name:
            how += ", file name matched ignoring case"
        if log is not None:
            log.append(f"{ref.name}: '{name}' → using {found} ({how})")
        return found
    raise InputError(
        f"the file '{name}' named here {NOT_FOUND} (looked for it as given, next to this "
        f"file and by its base name '{win.name}' in {folder})",
        file=ref,
        line=line,
    )
