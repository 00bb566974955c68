"""Cover cuts of capacity cuts (lp/covers.py): valid for every 0/1 pattern that meets the
capacity cut (checked by enumeration here, not by the module's own reasoning), violated where
returned, and OPT with them keeps its optimum and its audited patterns (issue 26)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import lp_protected, sized_problem

from argusqt.protection.lp.covers import cover_cut, cover_cuts
from argusqt.protection.lp.separation import Cut
from argusqt.protection.suppress.optimal import solve_optimal


def _cut(coef: list[float]) -> Cut:
    cells = np.arange(len(coef))
    a = np.asarray(coef, dtype=float)
    return Cut(0, "upper", cells, a, 1.0, cells, a, 1.0)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(0.01, 1.0), min_size=2, max_size=9).flatmap(
        lambda a: st.tuples(
            st.just(a), st.lists(st.floats(0.0, 1.0), min_size=len(a), max_size=len(a))
        )
    )
)
def test_cover_cut_holds_for_every_pattern_meeting_the_capacity_cut(data) -> None:
    coef, point = data
    cut = _cut(coef)
    x = np.asarray(point)
    cc = cover_cut(cut, x)
    if cc is None:
        return
    assert cc.kind == "cover" and np.all(cc.coef == 1.0) and cc.rhs == 1.0
    assert float(x[cc.cells].sum()) < 1.0  # violated at the point it was made for
    a = np.asarray(coef)
    for bits in itertools.product((0, 1), repeat=a.size):
        z = np.asarray(bits, dtype=float)
        if float(a @ z) >= 1.0:  # z meets the capacity cut: it must meet the cover cut
            assert float(z[cc.cells].sum()) >= 1.0, (coef, bits, cc.cells)


def test_cover_cut_of_small_cells_paying_for_a_big_one() -> None:
    # three small cells at 1 (capacity 0.3 each) and a big one at 0.2: 0.9 + 0.2 ≥ 1 meets
    # the capacity cut, but the small cells alone cannot, so the big one (or another) must go
    cut = _cut([0.3, 0.3, 0.3, 1.0, 0.5])
    x = np.array([1.0, 1.0, 1.0, 0.2, 0.0])
    assert cut.lhs(x) >= 1.0
    cc = cover_cut(cut, x)
    assert cc is not None
    assert set(cc.cells.tolist()) == {3, 4}
    assert cover_cuts([cut, Cut(-1, "bridgeless", cut.cells, cut.coef, 0.0, cut.cells,
                                cut.coef, 0.0)], x)[0].cells.tolist() == cc.cells.tolist()  # fmt: skip


def test_no_cover_cut_when_the_point_meets_it() -> None:
    cut = _cut([0.6, 0.6, 1.0])
    assert cover_cut(cut, np.array([0.0, 0.0, 1.0])) is None  # the big cell alone
    assert cover_cut(cut, np.array([0.0, 0.0, 0.0])) is None  # nothing in C


def test_opt_with_covers_keeps_the_optimum_and_the_audit() -> None:
    """The same optimum with and without cover cuts on generated 1H2D tables (both proven),
    the pattern protected by the independent LP attacker, and cover cuts made on some."""
    made = 0
    for seed in range(3):
        p = sized_problem("1H2D", 150, seed=seed)
        p.cost = np.abs(p.values)
        runs = {}
        for covers in (True, False):
            r = solve_optimal(p, {"max_time": 600, "covers": covers})
            assert r.optimal, r.log
            runs[covers] = r
            assert lp_protected(p, r.status != p.status) or lp_protected(
                p, (r.status != p.status) | p.primary
            )
        assert runs[True].cost == runs[False].cost
        line = next(x for x in runs[True].log if x.startswith("SCIP status"))
        made += int(line.split("cover cuts ")[1].split(",")[0])
    assert made > 0
