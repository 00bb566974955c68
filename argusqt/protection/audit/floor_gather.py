"""The floor audit's per-component pieces of its attacker matrices, gathered from CSC arrays
built once per audit: scipy's slicing cost more than a small component's LPs (D-101).

Each gather gives what the scipy expression it replaces gives (entries in the same order),
so the audit solves the same LPs and finds the same disclosures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from argusqt.model.distinct import sorted_distinct
from argusqt.model.smallcsr import concat_ranges

if TYPE_CHECKING:
    import scipy.sparse as sp

    from argusqt.protection.core.respondents import Floors


class Columns:
    """A sparse attackers × cells matrix by columns: the entries of some cells at a time."""

    def __init__(self, m: sp.csr_matrix | sp.csc_matrix) -> None:
        c = m.tocsc()
        if not c.has_canonical_format:
            c = c.copy()
            c.sum_duplicates()
        self.indptr = c.indptr
        self.indices = c.indices.astype(np.int64)
        self.data = c.data
        self.shape = c.shape

    def entries(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, local cell, value) of the nonzero entries in `cells` (ascending), by row
        then cell: the order of scipy's `m.tocsr()[:, cells]` with its zeros eliminated."""
        starts = self.indptr[cells]
        lens = self.indptr[cells + 1] - starts
        pos = concat_ranges(starts, lens)
        row = self.indices[pos]
        col = np.repeat(np.arange(cells.size, dtype=np.int64), lens)
        val = self.data[pos]
        keep = val != 0
        row, col, val = row[keep], col[keep], val[keep]
        order = np.lexsort((col, row))
        return row[order], col[order], val[order]

    def marks(self, cells: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Whether the entry (row, cells[c]) is positive for each key k = row · m + c (m =
        cells.size): `dense(rows, cells)[r, c]` of any rows holding those rows, no array."""
        row, col, val = self.entries(cells)
        pos = val > 0
        have = row[pos] * cells.size + col[pos]  # ascending: entries by row, then cell
        at = np.searchsorted(have, keys)
        out = at < have.size
        out[out] = have[at[out]] == keys[out]
        return out

    def dense(self, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """`m.tocsr()[rows][:, cells].toarray() > 0` for ascending `rows` and `cells`."""
        out = np.zeros((rows.size, cells.size), dtype=bool)
        row, col, val = self.entries(cells)
        row, col = row[val > 0], col[val > 0]
        at = np.searchsorted(rows, row)
        inside = at < rows.size
        inside[inside] = rows[at[inside]] == row[inside]
        out[at[inside], col[inside]] = True
        return out


def attacker_block(
    eff: Columns, cells: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The attackers with a bound in `cells`: (their rows ascending, the CSR indptr, local
    cells and bounds of their entries)."""
    row, col, val = eff.entries(cells)
    rows = sorted_distinct(row)
    counts = np.bincount(np.searchsorted(rows, row), minlength=rows.size)
    indptr = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return rows, indptr, col, val


def barred_of(floors: Floors) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Floors.barred with its exempt matrix gathered by columns (built at the first call)."""
    cols: list[Columns] = []

    def barred(rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        if not cols:
            cols.append(Columns(floors.exempt))
        out = cols[0].dense(rows, cells)
        if floors.table_of is not None and floors.cells_of is not None:
            out |= ~floors.cells_of[floors.table_of[rows][:, None], cells[None, :]]
        return out

    return barred
