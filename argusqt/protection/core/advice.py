"""Which suppression method, and how much time, suits a table of a given size — and why.

The thresholds come from the measurements in benchmarks/bench_vs_tauargus.py (figures in
docs/design.md, D-20): OPT proves many small tables optimal in
seconds (520 cells with 61 unsafe, the enterprise and tau_testW tables) but not all of them
(the sample data's 738 × 63 and 328 × 63 tables: gap 48–51 % after a minute, MOD 7–13 %
cheaper), and its branch-and-cut grows fast with the number of primaries (738 × 159: gap
57–60 %); MOD's subtables keep hierarchical tables of a few thousand cells in minutes; beyond
that only the heuristic finishes in reasonable time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from argusqt.dataclass import dataclass
from argusqt.model.status import is_primary

if TYPE_CHECKING:
    from argusqt.model.table import Table

#: OPT: at most this many cells and primaries (the 520-cell table, 61 primaries: optimal in
#: seconds; the 738-cell sample table with 159 primaries: gap 57–60 % after a minute)
OPT_CELLS = 1_000
OPT_PRIMARIES = 100
#: MOD: hierarchical tables up to this many cells
MOD_CELLS = 20_000


@dataclass(frozen=True)
class Advice:
    """A method (batch name), its time limit in minutes and the reason, in the user's words."""

    method: str
    minutes: int
    reason: str

    @property
    def params(self) -> dict[str, float]:
        """The method's parameters as a batch file gives them (MOD: minutes per subtable)."""
        return {"max_minutes": self.minutes}


def recommend(n_cells: int, n_primary: int, hierarchical: bool) -> Advice:
    """The suppression method and time limit we suggest for a table of this size."""
    size = f"{n_cells:,} cells, {n_primary:,} unsafe"
    if n_primary == 0:
        return Advice("HEUR", 1, f"{size}: nothing to protect, any method is instant")
    if n_cells <= OPT_CELLS and n_primary <= OPT_PRIMARIES:
        return Advice(
            "OPT",
            1,
            f"{size}: small enough for the optimal method, which often proves the cheapest "
            "pattern within seconds; when it cannot within the time limit it keeps its best "
            "safe pattern and says how far from optimal it may be (then try MOD)",
        )
    if hierarchical and n_cells <= MOD_CELLS:
        return Advice(
            "MOD",
            1,
            f"{size}: too many unsafe cells to prove an optimum in reasonable time; the "
            "modular method solves the hierarchy's subtables one by one",
        )
    if n_cells <= OPT_CELLS:
        return Advice(
            "OPT",
            2,
            f"{size}: many unsafe cells for the optimal method; it keeps the best safe "
            "pattern it found when the time is up and reports how far from optimal it may be",
        )
    return Advice(
        "HEUR",
        10,
        f"{size}: a large table; the fast heuristic finds a safe pattern in seconds to "
        "minutes where the optimal and modular methods would take hours",
    )


def recommend_for_table(table: Table) -> Advice:
    """`recommend` for a Table (its cells, primary cells and hierarchies)."""
    import numpy as np

    status = np.asarray(table.status)
    hierarchical = any(bool(np.any(np.asarray(d.depth) > 1)) for d in table.dims)
    return recommend(int(status.size), int(is_primary(status).sum()), hierarchical)
