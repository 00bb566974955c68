"""The respondents' group tests read a failed group LP's duals (D-106): a weak-duality
bound with a member's own bounds proves it narrows alone without its LP. The bound never
passes the member's own LP, and the audit finds the same disclosures as the plain path."""

from __future__ import annotations

import numpy as np
import pytest
from test_floor_running_points import _key, _table

from argusqt.model.status import Status
from argusqt.protection.audit import insider_floor
from argusqt.protection.audit.insider_floor import UP, floor_audit
from argusqt.protection.core.problem import CSPProblem


def _pattern(seed: int):
    table = _table(seed)
    problem = CSPProblem.from_table(table)
    rng = np.random.default_rng(100 + seed)
    nonempty = ~np.isin(np.asarray(table.status), [Status.EMPTY, Status.EMPTY_NONSTRUCTURAL])
    return problem, problem.primary | (nonempty & (rng.random(problem.n_cells) < 0.2))


@pytest.mark.parametrize(("seed", "anchor"), [(0, 1 << 60), (1, 1 << 60), (0, 1)])
def test_the_dual_bound_never_passes_a_members_own_lp(seed, anchor, monkeypatch):
    """Each member a proof is asked about: its own LP (the table's bounds and its own, the
    primary's off) reaches no further than the proof's bound says; also from the anchor's
    duals (the coalition's bounds, D-103)."""
    problem, sup = _pattern(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", anchor)
    real_init = insider_floor._Proof.__init__
    real_settle = insider_floor._Proof.settle
    checked = []

    def init(self, lp, att, key, need, tol, reach):
        real_init(self, lp, att, key, need, tol, reach)
        self.lp = lp

    def settle(self, group, found, k, stack):
        if self.valid:
            c, d = self.key
            lp, att = self.lp, self.att
            j = int(lp.pos[c])
            sums = self._sums(group)[group]
            for a, s in list(zip(group.tolist(), sums.tolist(), strict=True)):
                gc, glo, ghi = att.together(np.array([a]), j, *_table_bounds(lp))
                lp.set_bounds(gc, glo, ghi)
                reach, _ = lp.extreme(c, d)
                lp.set_bounds(gc, *(b[gc] for b in _table_bounds(lp)))
                bound = self.reach(self.base + s)
                slack = 1e-7 * (1 + abs(reach))
                assert (bound >= reach - slack) if d == UP else (bound <= reach + slack)
                checked.append(a)
        return real_settle(self, group, found, k, stack)

    monkeypatch.setattr(insider_floor._Proof, "__init__", init)
    monkeypatch.setattr(insider_floor._Proof, "settle", settle)
    floor_audit(problem, sup, problem.floors)
    assert len(checked) > 50


def _table_bounds(lp):
    lo = lp.values.copy()
    hi = lp.values.copy()
    lo[lp.cells], hi[lp.cells] = lp.lo, lp.hi
    return lo, hi


@pytest.mark.parametrize("anchor", [1, 1 << 60])
def test_proofs_find_the_plain_disclosures_with_fewer_lps(anchor, monkeypatch):
    """With and without the anchor (D-103): the same disclosures, reaches and pairs as the
    plain path, some members proven without their LP, and fewer respondents' LPs."""
    problem, sup = _pattern(0)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", anchor)
    proven = []
    real_settle = insider_floor._Proof.settle

    def settle(self, group, found, k, stack):
        before = len(found) + len(stack)
        rest = real_settle(self, group, found, k, stack)
        proven.append(len(found) + len(stack) - before)
        return rest

    monkeypatch.setattr(insider_floor._Proof, "settle", settle)
    plain = floor_audit(problem, sup, problem.floors, shortcuts=False)
    fast = floor_audit(problem, sup, problem.floors)
    assert _key(fast) == _key(plain)
    assert fast.pairs_left == plain.pairs_left
    assert sum(proven) > 0
    assert fast.lp_counts["respondents"] < plain.lp_counts["respondents"] / 2


def test_a_local_point_that_breaks_a_relation_settles_nothing(monkeypatch):
    """The first group's restricted LP (floor_local, D-106) is checked before its point
    stands for the group: a fake one (only the primary moved, to its bound: every floor
    holds, a relation does not) would fit every member and hide the plain disclosures."""
    problem, sup = _pattern(0)
    plain = floor_audit(problem, sup, problem.floors, shortcuts=False)
    assert plain.disclosures
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    monkeypatch.setattr(insider_floor, "DECIDE", False)  # the restricted LP's turn (D-109)
    real = insider_floor.local_point
    faked = []

    def local_point(a, miss, base, bounds, anchor, j, direction, depth=6):
        point = real(a, miss, base, bounds, anchor, j, direction, depth)
        fake = base.copy()
        fake[j] = bounds[1][j] if direction == UP else bounds[0][j]
        faked.append(point is not None)
        return fake

    monkeypatch.setattr(insider_floor, "local_point", local_point)
    fast = floor_audit(problem, sup, problem.floors)
    assert faked
    assert _key(fast) == _key(plain)
