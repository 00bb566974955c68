"""What the outsider audit found per component, for one problem: a component met again with
the same inputs is not attacked again (D-114).

A component's attacker bounds are a function of what its LP loop reads: its cells and rows,
their bounds and right-hand sides, its targets, the running extremes its cells start from
(the true values and the hints' points) and the interval choice, given the problem (values,
relations, levels, tolerance). Its HiGHS model is built afresh each time and solved in the
same order, so a replay gives the very numbers a fresh attack gives. MOD's polish audits
patterns a few cells apart: most components are the ones met before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from argusqt.protection.audit.outsider import COMPONENTS

if TYPE_CHECKING:
    from argusqt.protection.core.problem import CSPProblem

#: components remembered at most (the oldest dropped first): a count, not a clock
MAX_COMPONENTS = 4096


class OutsiderMemo:
    """Per component key: its targets' bounds and the LPs they took."""

    def __init__(self, problem: CSPProblem) -> None:
        self.problem = problem
        self.seen: dict[bytes, tuple[np.ndarray, np.ndarray, int]] = {}
        self.hits = 0

    @staticmethod
    def key(intervals: bool, cells: np.ndarray, rows: np.ndarray, *parts: np.ndarray) -> bytes:
        """Every input the component's LP loop reads, as one key (sizes first: no two
        different inputs give the same bytes)."""
        arrays = [np.asarray(cells, dtype=np.int64), np.asarray(rows, dtype=np.int64)]
        arrays += [np.asarray(p) for p in parts]
        head = np.array([int(intervals)] + [a.nbytes for a in arrays], dtype=np.int64)
        return head.tobytes() + b"".join(a.tobytes() for a in arrays)

    def replay(self, key: bytes) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(targets' lower bounds, upper bounds, LPs) found before, or None."""
        got = self.seen.get(key)
        if got is not None:
            self.hits += 1
        return got

    def store(self, key: bytes, lower: np.ndarray, upper: np.ndarray, n_lps: int) -> None:
        """The component's outcome (copies: the caller's arrays change later)."""
        if len(self.seen) >= MAX_COMPONENTS:
            self.seen.pop(next(iter(self.seen)))
        self.seen[key] = (lower.copy(), upper.copy(), int(n_lps))


@contextmanager
def remembered_components(problem: CSPProblem) -> Iterator[OutsiderMemo]:
    """Within the block, outsider audits of `problem` (no published intervals) replay the
    components met before with the same inputs."""
    memo = OutsiderMemo(problem)
    token = COMPONENTS.set(memo)
    try:
        yield memo
    finally:
        COMPONENTS.reset(token)
