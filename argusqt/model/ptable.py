"""A perturbation table (ptable) of the cell key method, as checked data
(argusqt/docs/formats.md §13); io.ptable reads and writes the files."""

from __future__ import annotations

from dataclasses import field
from typing import Literal

import numpy as np

from argusqt.dataclass import dataclass

PTableKind = Literal["freq", "cont"]


@dataclass
class PRow:
    """One row i of a ptable: the transitions i → j with their probabilities."""

    i: int
    j: np.ndarray
    p: np.ndarray
    v: np.ndarray
    ub: np.ndarray  # running sum of p (the upper ends of the key intervals)
    line: int = 0  # file line of the row's first transition


@dataclass
class PTable:
    """A checked ptable: rows per type (`all`, `even`, `odd`; frequency ptables: `all`)."""

    kind: PTableKind
    rows: dict[str, list[PRow]] = field(default_factory=dict)
    source: str = ""  # file name, or "DataFrame"

    def table(self, row_type: str = "all") -> list[PRow]:
        """The rows of one type, i ascending from 0."""
        return self.rows.get(row_type, [])

    @property
    def max_deviation(self) -> float:
        """D: the largest |v| of the ptable (confidential, argusqt/docs/formats.md §13)."""
        return max(float(np.abs(r.v).max()) for rows in self.rows.values() for r in rows)

    @property
    def min_v(self) -> float:
        return min(float(r.v.min()) for rows in self.rows.values() for r in rows)

    @property
    def max_v(self) -> float:
        return max(float(r.v.max()) for rows in self.rows.values() for r in rows)

    def n_transitions(self) -> int:
        return sum(len(r.j) for rows in self.rows.values() for r in rows)
