"""Reads a suppression pattern made elsewhere (a τ-Argus or pytauargus code-value output,
with or without its status column) onto the cells of a table, to audit it (US#314)."""

from __future__ import annotations

import csv
from dataclasses import field
from pathlib import Path

import numpy as np

from argusqt.dataclass import dataclass
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


def _is_jj(path: Path) -> bool:
    """A JJ file (argusqt/docs/formats.md §9): its first line is the single number 0."""
    if path.suffix.lower() == ".jj":
        return True
    lines = [x for x in read_lines(path)[:3] if x.strip()]
    return bool(lines) and lines[0].split("//")[0].strip() == "0"


def _read_jj_pattern(path: Path, table: Table) -> Pattern:
    """The statuses of a JJ file written for this table (one cell per table cell, in its
    order, as τ-Argus and argusqt write it without `TR+`): `u` and `m` are suppressed."""
    from argusqt.io.jj import read_jj

    problem = read_jj(path)
    if problem.n_cells != table.n_cells:
        raise InputError(
            f"the JJ file has {problem.n_cells} cells, table "
            f"{' × '.join(table.spec.explanatory)} has {table.n_cells} (expected a JJ file "
            "of this table written without TR+)",
            path,
        )
    values = np.asarray(table.value, dtype=float)
    tol = 10.0 ** (-max(int(table.decimals), 0)) / 2 + 1e-9 * np.abs(values)
    off = np.flatnonzero(np.abs(np.asarray(problem.values, dtype=float) - values) > tol)
    if off.size:
        c = int(off[0])
        raise InputError(
            f"cell {c} of the JJ file has the value {problem.values[c]:g}, the table "
            f"{values[c]:g}: not a JJ file of this table",
            path,
        )
    status = np.asarray(problem.status, dtype=np.int64)
    cells = np.arange(table.n_cells, dtype=np.int64)
    return Pattern(path, cells, is_suppressed(status), status, np.zeros_like(cells))


def read_pattern(path: str | Path, table: Table) -> Pattern:
    """The pattern of a code-value file — one line per cell, the table's codes first (in the
    order of its explanatory variables), then the value and, with `AS+`, the status — or of
    a JJ file of the table."""
    path = Path(path)
    if _is_jj(path):
        return _read_jj_pattern(path, table)
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
