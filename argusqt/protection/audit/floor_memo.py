"""What the floor audit found per component, for one problem and its floors: a component met
again is not attacked again (D-101).

A component's outcome (its disclosures, the pairs its coalition narrows, its attacker
points) is a function of its cells, their bounds (the attackers' and the coalition's) and
its targets alone, given the problem and the floors: every other cell is published at its
value, and the component's LP is built afresh each time. MOD's subtables' search and its
polish audit patterns that differ in a few components; the others are the same ones.
Seeds only spare LPs and never change a disclosure, so a component found with or without
them serves both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from argusqt.protection.audit.insider_floor import FloorDisclosure, FloorOutcome, Key
    from argusqt.protection.core.problem import CSPProblem
    from argusqt.protection.core.respondents import Floors

#: components remembered at most (the oldest dropped first): a count, not a clock
MAX_COMPONENTS = 4096


class FloorMemo:
    """Per component key: (its disclosures, the pairs its coalition narrowed, its points)."""

    def __init__(self, problem: CSPProblem, floors: Floors) -> None:
        self.problem = problem
        self.floors = floors
        self.seen: dict[
            bytes, tuple[list[FloorDisclosure], int, dict[Key, tuple[np.ndarray, np.ndarray]]]
        ] = {}
        self.hits = 0

    def serves(self, problem: CSPProblem, floors: Floors) -> bool:
        """Only the problem and the floors it was made for (by identity)."""
        return problem is self.problem and floors is self.floors

    @staticmethod
    def key(
        cells: np.ndarray,
        bounds: tuple[np.ndarray, ...],
        targets: list[Key],
    ) -> bytes:
        """The component's cells, their bounds on them and its targets, as one key."""
        sizes = np.array([cells.size, len(targets)], dtype=np.int64)
        parts = [sizes.tobytes(), np.asarray(cells, dtype=np.int64).tobytes()]
        parts += [np.asarray(b[cells], dtype=float).tobytes() for b in bounds]
        parts.append(np.asarray(targets, dtype=np.int64).tobytes())
        return b"".join(parts)

    def replay(self, key: bytes, out: FloorOutcome) -> bool:
        """Add what the component gave before to `out` (False: not met before)."""
        got = self.seen.get(key)
        if got is None:
            return False
        found, left, points = got
        self.hits += 1
        out.disclosures += found
        out.pairs_left += left
        for k, (cells, rows) in points.items():
            out.keep(k, cells, rows)
        return True

    def store(
        self, key: bytes, out: FloorOutcome, mark: tuple[int, int], targets: list[Key]
    ) -> None:
        """What the component added to `out` since `mark` (disclosures, pairs left)."""
        n_found, n_left = mark
        points = {k: out.points[k] for k in targets if k in out.points}
        if len(self.seen) >= MAX_COMPONENTS:
            self.seen.pop(next(iter(self.seen)))
        self.seen[key] = (out.disclosures[n_found:], out.pairs_left - n_left, points)
