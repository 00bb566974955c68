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

    Checks: depth starts at 1 and grows by at most 1 per line, no empty code, no code
    repeated where it would publish two rows under one code (`repeated_code`), no code
    equal to a missing code or the total code (compared ignoring surrounding blanks for the
    total).
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
    clash = repeated_code(entries)
    if clash is not None:
        raise InputError(clash[1], file=path, line=clash[0])
    return entries


def repeated_code(entries: Sequence[tuple[int, str, int]]) -> tuple[int, str] | None:
    """(line, message) of the first code a hierarchy may not repeat, naming both lines.

    A leaf code is unique among all codes (else two different cells are published under
    one code), and no code is its own ancestor. A non-leaf code may repeat under different
    parents: τ-Argus's NUTS.hrc lists `11` under `1` and under `2` (two nodes, as in
    τ-Argus's output).
    """
    first: dict[str, tuple[int, bool]] = {}  # code → (line, leaf) of its first appearance
    path: list[tuple[str, int]] = []  # ancestors of the current line: (code, line)
    for i, (depth, code, lineno) in enumerate(entries):
        leaf = i + 1 == len(entries) or entries[i + 1][0] <= depth
        del path[depth - 1 :]
        above = next((ln for c, ln in path if c == code), None)
        if above is not None:
            return lineno, (
                f"code '{code}' is under itself: it is also its ancestor on line {above}; "
                "a code appears once on each branch of a hierarchy"
            )
        seen = first.get(code)
        if seen is not None and (leaf or seen[1]):
            kinds = f"{'a leaf' if seen[1] else 'a parent'} on line {seen[0]} and " + (
                "a leaf here" if leaf else "a parent here"
            )
            return lineno, (
                f"code '{code}' appears twice: {kinds}; the published table would have two "
                "different rows with this code. Give each node its own code"
            )
        first.setdefault(code, (lineno, leaf))
        path.append((code, lineno))
    return None


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
