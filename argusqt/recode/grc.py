"""Global recode files `.grc` (argusqt/docs/formats.md §6): read, resolve against a variable's
codes, write.

Flat files map old codes (single codes, ranges, open ranges) to new codes; `<TREERECODE>`
files name hierarchy nodes to collapse. Errors carry file, line and column; doubtful but
legal input (unknown codes, overlaps, untouched codes) becomes warnings the caller logs.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path

from argusqt.dataclass import dataclass
from argusqt.errors import InputError
from argusqt.io.atomic import atomic_write_text
from argusqt.io.text import check_no_control, read_lines, tokenize

_SPECIAL = ' \t,-:"'


@dataclass
class RecodeItem:
    """One selector: a single code (`lo is hi`), a range `lo-hi`, or an open range (None end)."""

    lo: str | None
    hi: str | None
    single: bool = False
    source: str | None = None  # the item as written in the file (kept for writing back)

    def text(self) -> str:
        if self.source is not None:
            return self.source
        if self.single:
            return _quote(self.lo or "")
        lo = _quote(self.lo) if self.lo is not None else ""
        hi = _quote(self.hi) if self.hi is not None else ""
        return f"{lo}-{hi}"


@dataclass
class RecodeLine:
    """`dest: item, item, …` with its 1-based line number in the file (0 when built in code)."""

    dest: str
    items: list[RecodeItem]
    line: int = 0


@dataclass
class RecodeSpec:
    """A parsed recode: flat lines or tree collapses, plus the mapping resolved for given codes."""

    width: int
    tree: bool = False
    lines: list[RecodeLine] = field(default_factory=list)
    missing: list[str] | None = None  # <MISSING> as written (None = keep old missing codes)
    codelist_file: str | None = None  # <CODELIST> labels for the new codes
    codelist_line: int | None = None  # where <CODELIST> stands (for a not-found error)
    collapse: list[str] = field(default_factory=list)  # tree: node codes that become leaves
    path: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)  # old code → new code (flat)
    new_missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_groups(
        cls,
        width: int,
        groups: dict[str, Sequence[str]],
        missing: Sequence[str] | None = None,
        codelist_file: str | None = None,
    ) -> RecodeSpec:
        """A flat recode built in code (GUI): destination → list of old codes."""
        lines = [
            RecodeLine(dest, [RecodeItem(c, c, single=True) for c in codes])
            for dest, codes in groups.items()
        ]
        return cls(
            width=width,
            lines=lines,
            missing=list(missing) if missing is not None else None,
            codelist_file=codelist_file,
        )

    @classmethod
    def tree_collapse(cls, codes: Sequence[str], width: int = 0) -> RecodeSpec:
        """A tree recode built in code: these node codes become leaves."""
        return cls(width=width, tree=True, collapse=list(codes))


def _quote(code: str) -> str:
    if code == "" or any(ch in _SPECIAL for ch in code) or code != code.strip():
        return f'"{code}"'
    return code


def _read_lines(path: Path) -> list[str]:
    """Lines of the file (UTF-8 or Latin-1, any line ending, BOM dropped), tabs as blanks."""
    return [line.replace("\t", " ") for line in read_lines(path)]


# ---------------------------------------------------------------------------- tokens
def _tokenize(text: str, path: str | None, line_no: int) -> list[tuple[str, str, int]]:
    """(kind, text, column) with kinds CODE, QCODE, '-', ',', ':'; columns are 1-based."""
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == " ":
            i += 1
        elif ch in ",-:":
            out.append((ch, ch, i + 1))
            i += 1
        elif ch == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise InputError(
                    f"column {i + 1}: a quoted code is not closed (expected a second '\"')",
                    file=path,
                    line=line_no,
                )
            out.append(("QCODE", text[i + 1 : end], i + 1))
            i = end + 1
        else:
            j = i
            while j < n and text[j] not in _SPECIAL:
                j += 1
            out.append(("CODE", text[i:j], i + 1))
            i = j
    return out


def _pad_source(code: str, width: int, col: int, path: str | None, line_no: int) -> str:
    if len(code) > width:
        raise InputError(
            f"column {col}: code {code!r} is longer than the variable width {width}",
            file=path,
            line=line_no,
        )
    return code.rjust(width)


def _parse_items(
    toks: list[tuple[str, str, int]], width: int, path: str | None, line_no: int, eol: int
) -> list[RecodeItem]:
    """item {',' item}, item := code | code '-' code | '-' code | code '-'."""
    items: list[RecodeItem] = []
    i = 0

    def fail(msg: str, col: int) -> InputError:
        return InputError(f"column {col}: {msg}", file=path, line=line_no)

    if not toks:
        raise fail("expected at least one code or range after ':'", eol)
    while i < len(toks):
        start = i
        kind, text, col = toks[i]
        lo: str | None = None
        hi: str | None = None
        if kind in ("CODE", "QCODE"):
            lo = _pad_source(text, width, col, path, line_no)
            i += 1
            if i < len(toks) and toks[i][0] == "-":
                i += 1
                if i < len(toks) and toks[i][0] in ("CODE", "QCODE"):
                    hi = _pad_source(toks[i][1], width, toks[i][2], path, line_no)
                    i += 1
                    if lo > hi:
                        raise fail(f"range {lo.strip()!r}-{hi.strip()!r}: lower > upper", col)
                    items.append(RecodeItem(lo, hi))
                else:
                    items.append(RecodeItem(lo, None))
            else:
                items.append(RecodeItem(lo, lo, single=True))
        elif kind == "-":
            i += 1
            if i >= len(toks) or toks[i][0] not in ("CODE", "QCODE"):
                raise fail("expected a code after '-'", toks[i][2] if i < len(toks) else eol)
            hi = _pad_source(toks[i][1], width, toks[i][2], path, line_no)
            i += 1
            items.append(RecodeItem(None, hi))
        else:
            raise fail(f"expected a code or a range, got {text!r}", col)
        items[-1].source = "".join(f'"{t[1]}"' if t[0] == "QCODE" else t[1] for t in toks[start:i])
        if i < len(toks):
            if toks[i][0] != ",":
                got = toks[i][1]
                dash = got[:1] in ("\u2013", "\u2014", "\u2212")
                hint = " (ranges use the ASCII '-')" if dash else ""
                raise fail(f"expected ',' between items, got {got!r}{hint}", toks[i][2])
            i += 1
            if i >= len(toks):
                raise fail("expected a code or a range after ','", eol)
    return items


def _keyword_args(rest: str, path: str | None, line_no: int) -> list[str]:
    return [t[1] for t in _tokenize(rest, path, line_no) if t[0] in ("CODE", "QCODE")]


# ---------------------------------------------------------------------------- reading
def read_grc(
    path: str | Path,
    var_width: int,
    codes: Sequence[str],
    missing: Sequence[str] = (),
) -> RecodeSpec:
    """Parse a `.grc` and resolve it against the variable's codes (valid codes, then missing).

    Tree files: `codes` are the hierarchy's node codes; an unknown code is an error.
    Flat files: warnings (no sense, overlap, untouched count) go to `spec.warnings`.
    """
    p = Path(path)
    lines = _read_lines(p)
    if not any(ln.strip() and not ln.strip().startswith("//") for ln in lines):
        raise InputError(
            "the recode file is empty (expected lines 'new code: old codes' or <TREERECODE>)",
            file=p,
        )
    return parse_grc(lines, var_width, codes, missing, str(p))


def parse_grc(
    lines: Sequence[str],
    var_width: int,
    codes: Sequence[str],
    missing: Sequence[str] = (),
    where: str | None = None,
) -> RecodeSpec:
    """`read_grc` on text lines (the GUI's recode editor); `where` names the source in errors."""
    lines = [line.replace("\t", " ") for line in lines]
    spec = RecodeSpec(width=var_width, path=where)
    first = True
    for line_no, raw in enumerate(lines, start=1):
        text = raw.rstrip()
        stripped = text.strip()
        if not stripped or stripped.startswith("//"):
            continue
        check_no_control(text, where, line_no)
        if first and stripped.upper() == "<TREERECODE>":
            spec.tree = True
            first = False
            continue
        first = False
        if spec.tree:
            spec.collapse.append(_tree_code(text, codes, where, line_no))
            continue
        if stripped.startswith("<"):
            end = stripped.find(">")
            word = stripped[: end + 1].upper() if end > 0 else stripped.upper()
            rest = stripped[end + 1 :] if end > 0 else ""
            if word == "<MISSING>":
                args = _keyword_args(rest, where, line_no)
                if not 1 <= len(args) <= 2:
                    raise InputError(
                        f"<MISSING> expects one or two codes, got {len(args)}",
                        file=where,
                        line=line_no,
                    )
                spec.missing = args
            elif word == "<CODELIST>":
                names = tokenize(rest, where, line_no)
                if len(names) != 1 or not names[0]:
                    raise InputError(
                        f'<CODELIST> expects one file name ("file.cdl"), got {rest.strip()!r}',
                        file=where,
                        line=line_no,
                    )
                spec.codelist_file = names[0]
                spec.codelist_line = line_no
            elif word == "<TREERECODE>":
                raise InputError(
                    "<TREERECODE> must be the first line of the file", file=where, line=line_no
                )
            else:
                raise InputError(
                    f"unknown keyword {word}; expected <MISSING> or <CODELIST>",
                    file=where,
                    line=line_no,
                )
            continue
        toks = _tokenize(text, where, line_no)
        colon = next((k for k, t in enumerate(toks) if t[0] == ":"), None)
        if colon is None:
            col = (toks[0][2] + len(toks[0][1])) if toks else 1
            raise InputError(
                f"column {col}: expected ':' after the destination code", file=where, line=line_no
            )
        head = toks[:colon]
        if len(head) != 1 or head[0][0] not in ("CODE", "QCODE"):
            col = head[0][2] if head else toks[colon][2]
            raise InputError(
                f"column {col}: expected one destination code before ':'",
                file=where,
                line=line_no,
            )
        items = _parse_items(toks[colon + 1 :], var_width, where, line_no, len(text) + 1)
        spec.lines.append(RecodeLine(head[0][1], items, line_no))
    if not spec.tree:
        valid = [c for c in codes if c not in set(missing)]
        spec.mapping, spec.new_missing, spec.warnings = resolve_flat(spec, valid, missing)
    return spec


def _tree_code(text: str, codes: Sequence[str], where: str | None, line_no: int) -> str:
    """Match a tree-recode line to a node code: exactly, then with blanks trimmed."""
    if text in codes:
        return text
    want = text.strip()
    for c in codes:
        if c.strip() == want:
            return c
    raise InputError(
        f"code {want!r} is not a node of the hierarchy (expected one code per line)",
        file=where,
        line=line_no,
    )


# ---------------------------------------------------------------------------- resolving
def resolve_flat(
    spec: RecodeSpec, codes: Sequence[str], missing: Sequence[str] = ()
) -> tuple[dict[str, str], list[str], list[str]]:
    """Old code → new code for valid `codes` and `missing` codes; new missing codes; warnings.

    Ranges select valid codes only; a missing code is recoded only when named by itself.
    """
    where = spec.path
    warnings: list[str] = []
    valid = sorted(set(codes) - set(missing))
    valid_set = set(valid)
    miss = list(dict.fromkeys(missing))
    miss_set = set(miss)
    assigned: dict[str, tuple[str, int]] = {}  # old code → (dest, line)
    for rl in spec.lines:
        for item in rl.items:
            if item.single:
                code = item.lo or ""
                if code not in valid_set and code not in miss_set:
                    warnings.append(
                        f"line {rl.line}: code {code.strip()!r} does not occur (no sense)"
                    )
                    continue
                selected = [code]
            else:
                lo = 0 if item.lo is None else bisect_left(valid, item.lo)
                hi = len(valid) if item.hi is None else bisect_right(valid, item.hi)
                selected = valid[lo:hi]
                if not selected:
                    warnings.append(
                        f"line {rl.line}: range {item.text()} selects no code (no sense)"
                    )
                else:
                    ends = [e for e in (item.lo, item.hi) if e is not None and e not in valid_set]
                    if ends:  # legal, but a typo in a bound silently widens or narrows it
                        warnings.append(
                            f"line {rl.line}: range {item.text()}: {ends[0].strip()!r} is not "
                            f"a code; the range selects {selected[0].strip()!r} to "
                            f"{selected[-1].strip()!r} ({len(selected)} codes)"
                        )
            for c in selected:
                if c in assigned:
                    warnings.append(
                        f"line {rl.line}: code {c.strip()!r} was already recoded on line "
                        f"{assigned[c][1]}; the later assignment wins (overlap)"
                    )
                assigned[c] = (rl.dest, rl.line)
    untouched = [c for c in valid if c not in assigned]
    if untouched:
        warnings.append(f"{len(untouched)} code(s) not mentioned keep their own code (untouched)")
    dests = [rl.dest for rl in spec.lines]
    new_missing_raw = list(spec.missing) if spec.missing is not None else miss
    width = max([len(d) for d in dests] + [len(c) for c in untouched] + [1])
    new_missing = list(dict.fromkeys(m.rjust(width) for m in new_missing_raw))
    mapping: dict[str, str] = {}
    for c in valid:
        mapping[c] = assigned[c][0].rjust(width) if c in assigned else c.rjust(width)
    for m in miss:
        if m in assigned:
            dest, line = assigned[m]
            if dest.rjust(width) not in new_missing:
                raise InputError(
                    f"missing code {m.strip()!r} may only be recoded into a missing code "
                    f"({', '.join(repr(x.strip()) for x in new_missing) or 'none declared'}), "
                    f"got {dest!r}",
                    file=where,
                    line=line,
                )
            mapping[m] = dest.rjust(width)
        elif m.rjust(width) in new_missing or not new_missing:
            mapping[m] = m.rjust(width)
        else:
            mapping[m] = new_missing[0]
            warnings.append(
                f"old missing code {m.strip()!r} is not a new missing code: "
                f"recoded into {new_missing[0].strip()!r}"
            )
    for c, new in mapping.items():
        if new in new_missing and c not in miss_set:
            raise InputError(
                f"valid code {c.strip()!r} is recoded into the missing code {new.strip()!r}; "
                "only missing codes may become missing",
                file=where,
                line=assigned[c][1] if c in assigned else None,
            )
    return mapping, new_missing, warnings


# ---------------------------------------------------------------------------- writing
def grc_text(spec: RecodeSpec) -> str:
    """The `.grc` text of a spec (LF line endings)."""
    if spec.tree:
        return "\n".join(["<TREERECODE>", *spec.collapse]) + "\n"
    out: list[str] = []
    if spec.missing is not None:
        out.append("<MISSING> " + " ".join(_quote(m) for m in spec.missing))
    if spec.codelist_file is not None:
        out.append(f'<CODELIST> "{spec.codelist_file}"')
    for rl in spec.lines:
        out.append(f"{_quote(rl.dest)}: " + ", ".join(item.text() for item in rl.items))
    return "\n".join(out) + "\n"


def write_grc(path: str | Path, spec: RecodeSpec) -> None:
    """Write a spec as a `.grc` file (atomic); `read_grc` gives the same recode back."""
    atomic_write_text(path, grc_text(spec))


def absolute_codelist(text: str, folder: Path) -> str:
    """`.grc` text with a relative `<CODELIST> "file"` made absolute against `folder` (so the
    text still finds its labels when written somewhere else)."""
    out = []
    for line in text.splitlines():
        head = line.strip()
        if head.upper().startswith("<CODELIST>"):
            name = head[len("<CODELIST>") :].strip().strip('"')
            if name and not Path(name).is_absolute():
                line = f'<CODELIST> "{Path(folder) / name}"'
        out.append(line)
    return "\n".join(out) + "\n"
