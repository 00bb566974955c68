"""Cover cuts from capacity cuts (argusqt/docs/methods.md §3.2): a stronger bound for OPT.

A capacity cut Σ aᵢxᵢ ≥ 1 (0 < aᵢ ≤ 1) holds for every protected 0/1 pattern. If a set C
of its cells has Σ_{C} aᵢ < 1, suppressing C alone cannot meet it, so every protected
pattern suppresses some other cell of the cut: Σ_{T∖C} xᵢ ≥ 1 (T: the cut's cells). That
inequality is valid wherever the capacity cut is, and at a fractional master point it is
often violated where the capacity cut is not: small cells with x* = 1 pay for a big one
at x* < 1. No LP is solved: C is filled greedily by x*ᵢ/aᵢ.
"""

from __future__ import annotations

import numpy as np

from argusqt.protection.lp.separation import Cut

#: Σ_{C} aᵢ stays this far below 1: cut coefficients carry LP round-off, and a C that
#: only rounding makes fit must not pass for one
ROOM = 1e-6
#: the cover cut must be violated by this much at x* to be worth a row
MIN_VIOLATION = 1e-6


def cover_cut(cut: Cut, x: np.ndarray) -> Cut | None:
    """The cover cut of `cut` most violated at `x` (greedy), or None when it is not violated."""
    a = np.asarray(cut.coef, dtype=float)
    if a.size < 2 or cut.rhs != 1.0:
        return None
    xs = np.asarray(x, dtype=float)[cut.cells]
    small = np.flatnonzero((a < 1.0 - ROOM) & (xs > 1e-9))
    if small.size == 0:
        return None
    order = small[np.argsort(-(xs[small] / a[small]), kind="stable")]
    room = 1.0 - ROOM
    in_c = np.zeros(a.size, dtype=bool)
    for k in order:
        if a[k] < room:
            in_c[k] = True
            room -= a[k]
    rest = ~in_c
    if not in_c.any() or not rest.any() or float(xs[rest].sum()) >= 1.0 - MIN_VIOLATION:
        return None
    cells = cut.cells[rest]
    one = np.ones(cells.size)
    return Cut(cut.primary, "cover", cells, one, 1.0, cells, one, 1.0)


def cover_cuts(cuts: list[Cut], x: np.ndarray) -> list[Cut]:
    """Violated cover cuts of the capacity cuts among `cuts` at the master point `x`."""
    out = []
    for c in cuts:
        if c.kind in ("upper", "lower", "sliding"):
            cc = cover_cut(c, x)
            if cc is not None:
                out.append(cc)
    return out
