"""Read codelist files `.cdl` (argusqt/docs/formats.md §5): labels for codes, display only."""

from __future__ import annotations

from pathlib import Path

from argusqt.errors import InputError
from argusqt.io.text import check_no_control, read_lines


def read_cdl(path: str | Path) -> dict[str, str]:
    """Code → label; only the first comma splits, codes keep their leading blanks.

    Besides the exact code, the trimmed code is also a key (when not already taken), so a
    lookup finds a label exactly first, then by the trimmed code.
    """
    path = Path(path)
    labels: dict[str, str] = {}
    for lineno, raw in enumerate(read_lines(path), start=1):
        line = raw.rstrip(" \t\r")
        if not line.strip():
            continue
        check_no_control(line, path, lineno)
        code, sep, label = line.partition(",")
        if not sep:
            raise InputError(
                f"expected 'code,label', got '{line}' (no comma)", file=path, line=lineno
            )
        code = code.rstrip(" \t")
        if not code.strip():
            raise InputError(
                "expected a code before the comma, got nothing", file=path, line=lineno
            )
        labels.setdefault(code, label.strip())
    for code in list(labels):
        labels.setdefault(code.strip(), labels[code])
    return labels


def label_of(labels: dict[str, str], code: str) -> str:
    """The label of `code`: exact match, then trimmed, else the code itself."""
    return labels.get(code) or labels.get(code.strip()) or code
