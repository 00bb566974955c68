"""D-65: the insider audit's coalition settles each side of a primary on its own.

A coalition point (every respondent's suppressed cells at their values) that shifts a
primary by its level on one side is a point of every respondent's attacker, so that side
needs no cover LP even when the other side fails. Checked against an attacker that shares
none of the audit's code (test_insider_fast's HiGHS model per respondent, and
protect_helpers' scipy linprog judge).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given
from hypothesis import strategies as st
from protect_helpers import lp_publishable
from test_insider_fast import (
    PROPERTY,
    _Attacker,
    _pattern,
    _problem,
    assert_agrees_with_brute_force,
    brute_force,
)

from argusqt.protection.audit import insider
from argusqt.protection.audit.insider import insider_audit, respondents_of
from argusqt.protection.lp.components import DOWN, UP, MoveContext


def _coalition_sides(problem, sup):
    """The (up, down) masks the audit's coalition returns for the pattern's unknown primaries."""
    resp = respondents_of(problem).padded(problem.n_cells)
    ksup = (resp.known.tocsr() @ sp.diags(sup.astype(float))).tocsr()
    ksup.eliminate_zeros()
    prim = problem.primary & sup
    return insider._coalition(problem, sup, ksup, prim, None, None, None)


def _reaches(problem, cell, direction, lo, hi) -> bool:
    """The independent attacker's interval reaches the cell's level on that side."""
    v, tol = float(problem.values[cell]), problem.tolerance
    if direction == UP:
        return hi >= v + problem.upl[cell] - tol
    return lo <= v - problem.lpl[cell] + tol


def _sides_hold_against_every_respondent(problem, sup) -> int:
    """Every side the coalition settles is reached by each respondent's own attacker (its
    cells fixed, HiGHS on the whole table); returns how many one-sided settlements it saw."""
    up, down = _coalition_sides(problem, sup)
    resp = respondents_of(problem)
    known = resp.known.tocsr()
    attackers = [np.zeros(problem.n_cells, dtype=bool)]  # the outsider too
    for r in range(known.shape[0]):
        mine = known.indices[known.indptr[r] : known.indptr[r + 1]]
        if sup[mine].any():
            fixed = np.zeros(problem.n_cells, dtype=bool)
            fixed[mine] = True
            attackers.append(fixed)
    one_sided = 0
    cells = np.flatnonzero(up | down)
    for fixed in attackers:
        judge = _Attacker(problem, sup, fixed)
        for cell in cells.tolist():
            lo, hi = judge.interval(cell)
            for direction, mask in ((UP, up), (DOWN, down)):
                if mask[cell] and problem.primary[cell]:
                    assert _reaches(problem, cell, direction, lo, hi), (cell, direction)
    one_sided += int((up ^ down).sum())
    return one_sided


@pytest.mark.parametrize("seed", range(8))
def test_each_side_the_coalition_settles_holds_against_every_respondent(seed):
    problem = _problem(seed)
    sup = _pattern(problem, seed)
    _sides_hold_against_every_respondent(problem, sup)


def test_some_primaries_are_settled_on_one_side_only():
    one_sided = 0
    for seed in range(40):
        problem = _problem(seed)
        sup = _pattern(problem, seed)
        one_sided += _sides_hold_against_every_respondent(problem, sup)
        if one_sided >= 3:
            break
    assert one_sided >= 3, "the generator gives primaries the coalition settles on one side"


@PROPERTY
@given(st.integers(0, 10**6))
@example(1128)  # a level's edge decided by the last bit (assert_agrees_with_brute_force)
def test_audit_with_one_sided_coalition_agrees_with_the_independent_attackers(seed):
    problem = _problem(seed)
    sup = _pattern(problem, seed)
    out = insider_audit(problem, sup)
    found = {(d.respondent, d.cell) for d in out.disclosures}
    assert_agrees_with_brute_force(problem, sup, found)
    if lp_publishable(problem, sup):
        assert out.ok


@pytest.mark.parametrize("seed", [0, 2, 5, 9, 13, 38])
def test_a_sliding_level_is_judged_on_the_width_not_on_the_sides(seed):
    # τ-Argus's sliding form (lower and upper levels 0): the true value reaches both sides,
    # so only the interval's width tells; a level between the coalition's width and the
    # outsider's must send the primary to the respondents' attacks (review of D-65: settling
    # both sides from the coalition's points let every such disclosure through)
    problem = _problem(seed)
    sup = _pattern(problem, seed)
    resp = respondents_of(problem).padded(problem.n_cells)
    ksup = (resp.known.tocsr() @ sp.diags(sup.astype(float))).tocsr()
    ksup.eliminate_zeros()
    kall = np.zeros(problem.n_cells, dtype=bool)
    kall[ksup.indices] = True
    unknown = np.flatnonzero(problem.primary & sup & ~kall)
    outsider = _Attacker(problem, sup, np.zeros(problem.n_cells, dtype=bool))
    coalition = _Attacker(problem, sup, kall)
    spl = np.zeros(problem.n_cells)
    for cell in unknown.tolist():
        lo_o, hi_o = outsider.interval(cell)
        lo_c, hi_c = coalition.interval(cell)
        if (hi_o - lo_o) - (hi_c - lo_c) > 1.0:
            spl[cell] = ((hi_o - lo_o) + (hi_c - lo_c)) / 2
    assert spl.any(), "the case needs a primary the coalition narrows"
    problem.lpl = np.zeros(problem.n_cells)
    problem.upl = np.zeros(problem.n_cells)
    problem.spl = spl
    out = insider_audit(problem, sup)
    found = {(d.respondent, d.cell) for d in out.disclosures}
    wanted = {(r, c) for r, c in brute_force(problem, sup) if spl[c] > 0}
    assert wanted, "the case needs a respondent who narrows a sliding interval"
    assert wanted <= found
    assert not out.ok


@pytest.mark.parametrize("seed", range(4))
def test_a_path_lp_solved_again_with_other_costs_is_a_cheapest_move(seed):
    # the cover's next LP in one area re-costs the loaded LP (D-65): its move must keep every
    # relation, reach the level, and cost what a fresh LP with those costs costs
    problem = _problem(seed)
    sup = _pattern(problem, seed)
    ctx = MoveContext(problem)
    ctx.movable = sup.copy()
    m = problem.relations.tocsr()
    cells = np.flatnonzero(sup)
    rng = np.random.default_rng(seed)
    checked = 0
    for cell in np.flatnonzero(problem.primary & sup).tolist()[:6]:
        first = ctx.path_move(cell, UP, cells, np.ones(cells.size))
        if first is None:
            continue
        cost = rng.choice([1e-3, 1.0, 1e4], size=cells.size)
        again = ctx.path_move_again(cost)
        fresh = ctx.path_move(cell, UP, cells, cost)
        assert again is not None and fresh is not None
        move = np.zeros(problem.n_cells)
        move[cells] = again
        assert np.abs(m @ move).max() <= 1e-7 * max(1.0, np.abs(again).max())
        assert again[cells == cell][0] >= ctx.required(cell, UP) - problem.tolerance
        spent, best = float(cost @ np.abs(again)), float(cost @ np.abs(fresh))
        assert spent == pytest.approx(best, rel=1e-6, abs=1e-6)
        checked += 1
    assert checked > 0


def test_no_path_lp_means_no_move_when_solved_again():
    problem = _problem(1)
    sup = _pattern(problem, 1)
    ctx = MoveContext(problem)
    cell = int(np.flatnonzero(problem.primary & sup)[0])
    ctx.upl = ctx.upl.copy()
    ctx.upl[cell] = ctx.ub[cell] + 1.0  # beyond the cell's room: no LP is built
    cells = np.flatnonzero(sup)
    assert ctx.path_move(cell, UP, cells, np.ones(cells.size)) is None
    assert ctx.path_move_again(np.ones(cells.size)) is None
