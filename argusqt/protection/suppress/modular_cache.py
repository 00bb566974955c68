"""MOD's subtable patterns remembered for the reruns of the rule on combined cells
(suppress/combined.py runs MOD again with a few more secondaries kept): a subtable whose
local inputs are the very same gives the same pattern, since its solve is bounded by counts
only; it is taken again instead of solved again (docs/design.md, D-58).

The memory rides on the problem object: protect_combined's reruns copy it shallowly and so
share it, while every new problem (another table, another test) starts empty.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from argusqt.protection.core.problem import CSPProblem

#: subtable patterns remembered per problem at most (a rerun needs one per subtable)
MAX_ENTRIES = 4_096

_ATTR = "_mod_subtable_cache"


class SubtableCache:
    """(inputs digest) → (the subtable cells' statuses after it, attacker LPs it spent)."""

    def __init__(self) -> None:
        self.entries: dict[bytes, tuple[np.ndarray | None, int]] = {}
        self.hits = 0

    @classmethod
    def of(cls, problem: CSPProblem) -> SubtableCache:
        """The problem's memory (created on first use)."""
        cache = problem.__dict__.get(_ATTR)
        if not isinstance(cache, cls):
            cache = cls()
            problem.__dict__[_ATTR] = cache
        return cache

    @staticmethod
    def key(local: CSPProblem, fixed: np.ndarray, ltrue: np.ndarray, knobs: Any) -> bytes:
        """Digest of everything the subtable's solve reads: its local problem, the fixed
        cells, the true primaries and the options and budgets (`knobs`, by repr)."""
        h = hashlib.sha1()
        arrays = [
            local.values,
            local.lower,
            local.upper,
            local.cost,
            local.status,
            local.lpl,
            local.upl,
            fixed,
            ltrue,
            np.asarray(local.relations.shape),
        ]
        if local.freq is not None:
            arrays.append(np.asarray(local.freq))
        for a in arrays:
            a = np.ascontiguousarray(a)
            h.update(str((a.dtype.str, a.shape)).encode())
            h.update(a.tobytes())
        h.update(repr((local.decimals, knobs)).encode())
        return h.digest()

    def get(self, key: bytes) -> tuple[np.ndarray | None, int] | None:
        found = self.entries.get(key)
        if found is not None:
            self.hits += 1
            part, lps = found
            return (None if part is None else part.copy()), lps
        return None

    def put(self, key: bytes, part: np.ndarray | None, lps: int) -> None:
        if len(self.entries) >= MAX_ENTRIES:
            self.entries.pop(next(iter(self.entries)))
        self.entries[key] = (part, int(lps))
