"""The pairs an audit found passing, so a later pattern's audit skips those still passing (D-117).

A (primary, side) pair that no attacker narrowed on one pattern passes on every pattern that
suppresses the cells of its component there: each attacker's LP of the pair is over that
component, every other cell at its value, and a pattern suppressing more cells only frees
some of those, each with bounds (and a respondent's floors) around its value, so every
feasible set contains the old one (recheck_after_growth's argument, per component). MOD's
subtable floor checks use it, and the insider audits within its polish (insider_memo).
"""

from __future__ import annotations

import numpy as np

from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.components import DOWN, UP, variable_components

#: audited patterns remembered (a count: the oldest goes first)
KEPT = 64


class PassedPairs:
    """Audited patterns' passing pairs and the cells of their components: a pair whose
    component in some audited pattern is suppressed in a new one passes there too (its
    attackers' LPs there contain those of the audited pattern: every cell they add was fixed
    at its value, which stays within its bounds and floors), so it is not attacked again."""

    def __init__(self, work: CSPProblem) -> None:
        self.rel = work.relations.tocsr()
        self.primary = np.asarray(work.primary, dtype=bool)
        self.up = np.asarray(work.upl, dtype=float) > 0
        self.down = np.asarray(work.lpl, dtype=float) > 0
        #: per checked pattern: its cells' component labels (-1: published), then the cells
        #: and sides of the pairs that passed there
        self.kept: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def targets(self, sup: np.ndarray) -> list[tuple[int, int]]:
        """The audits' pairs on `sup`: (primary, side) with a level on that side."""
        cells = np.flatnonzero(self.primary & sup).tolist()
        return [(c, d) for c in cells for d in (UP, DOWN) if (self.up if d == UP else self.down)[c]]

    def pairs(self, sup: np.ndarray) -> list[tuple[int, int]] | None:
        """The pairs to attack on `sup` (sorted), None: every pair (none known to pass)."""
        known: set[tuple[int, int]] = set()
        for labels, cells, sides in self.kept:
            broken = np.zeros(int(labels.max()) + 2, dtype=bool)
            broken[labels[(labels >= 0) & ~sup]] = True  # a component cell published now
            ok = ~broken[labels[cells]]
            known.update(zip(cells[ok].tolist(), sides[ok].tolist(), strict=True))
        if not known:
            return None
        wanted = self.targets(sup)
        if known.isdisjoint(wanted):
            return None
        return sorted(set(wanted) - known)

    def add(self, sup: np.ndarray, failed: list[tuple[int, int]]) -> None:
        """An audited pattern and the pairs it failed (every other pair of it passed)."""
        passed = sorted(set(self.targets(sup)) - set(failed))
        if not passed:
            return
        labels = np.full(sup.size, -1, dtype=np.int64)
        for k, comp in enumerate(variable_components(self.rel, sup)):
            labels[comp.cells] = k
        if len(self.kept) >= KEPT:
            self.kept.pop(0)
        cells = np.array([c for c, _ in passed], dtype=np.int64)
        sides = np.array([d for _, d in passed], dtype=np.int64)
        self.kept.append((labels, cells, sides))
