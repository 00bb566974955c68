"""Reads a suppression pattern made elsewhere (a τ-Argus or pytauargus code-value output,
with or without its status column) onto the cells of a table, to audit it (US#314)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from argusqt.errors import InputError
from argusqt.io.text import read_lines
from argusqt.model.status import is_suppressed
from argusqt.model.table import Table

#: values τ-Argus writes for a cell it does not publish (`x`, `-`, `?`) or an empty one
HIDDEN_VALUES = {"x", "-", "?", ""}


@dataclass
class Pattern:
    """Which cells a file suppresses: `cells` of the table, their `suppressed` flag and the
    τ-Argus status the file gives (0 when it gives none), `lines` for messages."""

    path: Path
    cells: np.ndarray
    suppressed: np.ndarray
    status: np.ndarray
    lines: np.ndarray
    notes: list[str] = field(default_factory=list)


def _key(code: str) -> str:
    """A code as compared: blanks around it and quotes dropped, `"` inside read as `'`."""
    return code.strip().replace('"', "'")


def _code_columns(table: Table) -> list[np.ndarray]:
    """Per dimension, the code (as compared) of every cell, in the table's cell order."""
    per_dim = [np.asarray([_key(c) for c in d.codes], dtype=object) for d in table.dims]
    nodes = np.unravel_index(np.arange(table.n_cells), table.shape)
    return [codes[nodes[d]] for d, codes in enumerate(per_dim)]


def _status(text: str) -> int:
    """The status column of a τ-Argus output (1–14), 0 when the text is none."""
    t = text.strip()
    return int(t) if t.isdigit() and 1 <= int(t) <= 14 else 0


def _rows(path: Path, table: Table) -> list[tuple[int, tuple[str, ...], list[str]]]:
    """(line, codes, the fields after the codes) of every cell line of the file."""
    sep = ";" if path.suffix.lower() == ".csv" and _has_semicolons(path) else ","
    ndim = table.ndim
    names = [n.lower() for n in table.spec.explanatory]
    rows: list[tuple[int, tuple[str, ...], list[str]]] = []
    for no, row in enumerate(csv.reader(read_lines(path), delimiter=sep), start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("//"):
            continue
        if len(row) < ndim + 1:
            raise InputError(
                f"expected {ndim} code(s) and a value, got {len(row)} field(s)", path, no
            )
        codes = tuple(_key(c) for c in row[:ndim])
        if not rows and codes[0].lower() in names:  # a header line (`HR+`)
            continue
        rows.append((no, codes, row[ndim:]))
    if not rows:
        raise InputError("the pattern file has no cell lines", path)
    return rows


def _cells(path: Path, table: Table, rows) -> list[int]:
    """The cell of each row: by position when the file lists every cell in the table's
    order (τ-Argus's own outputs: a code may repeat at two hierarchy levels), else by codes."""
    cols = _code_columns(table)
    if len(rows) == table.n_cells and all(
        all(cols[d][k] == code for d, code in enumerate(codes))
        for k, (_, codes, _) in enumerate(rows)
    ):
        return list(range(table.n_cells))
    index: dict[tuple[str, ...], int] = {}
    twice: set[tuple[str, ...]] = set()
    for k, key in enumerate(zip(*cols, strict=True)):
        if key in index:
            twice.add(key)
        index[key] = k
    cells: list[int] = []
    seen: dict[int, int] = {}
    for no, codes, _ in rows:
        if codes in twice:
            raise InputError(
                f"the codes {', '.join(codes)} name more than one cell of the table (a code "
                "at two hierarchy levels); give the file with every cell in the table's order, "
                "as τ-Argus writes it",
                path,
                no,
            )
        cell = index.get(codes)
        if cell is None:
            raise InputError(
                f"the codes {', '.join(codes)} are not a cell of table "
                f"{' × '.join(table.spec.explanatory)} (expected the codes of the table the "
                "pattern was made for, in its variables' order)",
                path,
                no,
            )
        if cell in seen:
            raise InputError(f"cell {', '.join(codes)} given twice (also line {seen[cell]})",
                             path, no)  # fmt: skip
        seen[cell] = no
        cells.append(cell)
    return cells


def read_pattern(path: str | Path, table: Table) -> Pattern:
    """The pattern of a code-value file: one line per cell, the table's codes first (in the
    order of its explanatory variables), then the value and, with `AS+`, the status."""
    path = Path(path)
    rows = _rows(path, table)
    cells = _cells(path, table, rows)
    sup, status, lines = [], [], []
    for no, _, rest in rows:
        given = _status(rest[-1]) if len(rest) >= 2 else 0
        hidden = rest[0].strip().lower() in HIDDEN_VALUES
        sup.append(bool(is_suppressed(given)) if given else hidden)
        status.append(given)
        lines.append(no)
    pattern = Pattern(
        path,
        np.asarray(cells, dtype=np.int64),
        np.asarray(sup, dtype=bool),
        np.asarray(status, dtype=np.int64),
        np.asarray(lines, dtype=np.int64),
    )
    missing = table.n_cells - len(cells)
    if missing:
        pattern.notes.append(
            f"{missing} cell(s) of the table are not in {path.name}; they keep their statuses"
        )
    return pattern


def _has_semicolons(path: Path) -> bool:
    """A `.csv` output written with `;` (a decimal-comma locale) instead of `,`."""
    for line in read_lines(path)[:5]:
        if ";" in line:
            return True
    return False
