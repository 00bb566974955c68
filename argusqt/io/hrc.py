"""Read and write hierarchy files `.hrc` (argusqt/docs/formats.md §4.1).

Codes keep their leading blanks (`@ 1` is the code `" 1"`); nodes are returned in file order
with their line numbers so later checks (codes in the data, recodes) can point at the line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from argusqt.errors import InputError
from argusqt.io.atomic import atomic_write_text
from argusqt.io.text import control_char_at, read_lines


def read_hrc(
    path: str | Path,
    lead: str,
    missing: Sequence[str] = (),
    total_code: str | None = None,
) -> list[tuple[int, str, int]]:
    """(depth, code, line number) per node in pre-order; InputError with the line on mistakes.

    Checks: depth starts at 1 and grows by at most 1 per line, no empty code, leaf codes
    unique (non-leaf codes may repeat: NUTS.hrc), no code equal to a missing code or the
    total code (when given; compared ignoring surrounding blanks for the total).
    """
    path = Path(path)
    if not lead:
        raise InputError("the hierarchy lead string (<HIERLEADSTRING>) is empty", file=path)
    entries: list[tuple[int, str, int]] = []
    prev_depth = 0
    for lineno, raw in enumerate(read_lines(path), start=1):
        line = raw.rstrip(" \t\r")
        if not line:
            continue
        depth = 1
        pos = 0
        while line.startswith(lead, pos):
            pos += len(lead)
            depth += 1
        code = line[pos:]
        bad = control_char_at(code)
        if bad is not None:
            raise InputError(
                f"the code contains the control character 0x{ord(code[bad]):02X}; a hierarchy "
                f"file holds one code per line, each preceded by {lead!r} per level",
                file=path,
                line=lineno,
                column=pos + bad + 1,
            )
        if not code.strip():
            raise InputError(
                f"expected a code after {depth - 1} × '{lead}', the code is empty",
                file=path,
                line=lineno,
            )
        if depth > prev_depth + 1:
            raise InputError(
                f"code '{code}' is at depth {depth} but the line before is at depth "
                f"{prev_depth}; depth may grow by one '{lead}' at a time",
                file=path,
                line=lineno,
            )
        if code in missing:
            raise InputError(
                f"code '{code}' is a missing code; missing codes must not be in the hierarchy",
                file=path,
                line=lineno,
            )
        if total_code is not None and code.strip() == total_code.strip():
            raise InputError(
                f"code '{code}' is the total code; the total must not be in the hierarchy",
                file=path,
                line=lineno,
            )
        entries.append((depth, code, lineno))
        prev_depth = depth
    if not entries:
        raise InputError("the hierarchy file has no codes", file=path)
    seen: dict[str, int] = {}
    for i, (depth, code, lineno) in enumerate(entries):
        is_leaf = i + 1 == len(entries) or entries[i + 1][0] <= depth
        if not is_leaf:
            continue
        if code in seen:
            raise InputError(
                f"leaf code '{code}' appears twice (first on line {seen[code]}); leaf codes "
                "must be unique",
                file=path,
                line=lineno,
            )
        seen[code] = lineno
    return entries


def hrc_text(entries: Iterable[tuple[int, str] | tuple[int, str, int]], lead: str = "@") -> str:
    """The `.hrc` text: each code preceded by depth-1 lead strings, one per line (LF)."""
    lines = []
    for entry in entries:
        depth, code = entry[0], entry[1]
        if depth < 1:
            raise ValueError(f"depth must be at least 1, got {depth} for {code!r}")
        lines.append(lead * (depth - 1) + code)
    return "\n".join(lines) + "\n"


def write_hrc(
    entries: Iterable[tuple[int, str] | tuple[int, str, int]],
    path: str | Path,
    lead: str = "@",
) -> None:
    """Write (depth, code[, line]) entries as an `.hrc` file atomically."""
    atomic_write_text(path, hrc_text(entries, lead))
