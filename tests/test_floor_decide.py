"""The respondents' groups decided from the values (floor_decide, D-109): a decision's point
settles a group only once checked, and HiGHS's "no point" only sends a group to halving, so
the disclosures and their reaches stay the plain path's whatever the decisions say."""

from __future__ import annotations

import numpy as np
import pytest
from test_floor_dual_proof import _pattern
from test_floor_running_points import _key

from argusqt.protection.audit import floor_decide, insider_floor
from argusqt.protection.audit.insider_floor import UP, floor_audit


def _plain(seed: int):
    problem, sup = _pattern(seed)
    return problem, sup, floor_audit(problem, sup, problem.floors, shortcuts=False)


@pytest.mark.parametrize("seed", [0, 1])
def test_decisions_find_the_plain_disclosures(seed, monkeypatch):
    """Every block anchored, so decided: the same disclosures, reaches and pairs as the
    plain path and as without decisions; some groups are settled by a decision's point
    and some halved on its "no point"."""
    problem, sup, plain = _plain(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    real = insider_floor._decide
    verdicts: list[str] = []

    def decide(*args):
        got = real(*args)
        verdicts.append(got[0])
        return got

    monkeypatch.setattr(insider_floor, "_decide", decide)
    fast = floor_audit(problem, sup, problem.floors)
    monkeypatch.setattr(insider_floor, "DECIDE", False)
    before = floor_audit(problem, sup, problem.floors)
    assert _key(fast) == _key(plain) == _key(before)
    assert fast.pairs_left == plain.pairs_left
    assert "found" in verdicts and "none" in verdicts
    assert fast.lp_counts["decision"] == len(verdicts)


@pytest.mark.parametrize("verdict", ["none", "unknown"])
def test_whatever_highs_says_without_a_point_the_disclosures_stay(verdict, monkeypatch):
    """A decider that never finds a point (every group "short", or never sure): the groups
    are halved or go the plain way, and the disclosures are still the plain path's."""
    problem, sup, plain = _plain(0)
    assert plain.disclosures
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    calls = []

    def point(self, lo, hi, j, direction, level):
        calls.append(j)
        return verdict, None

    monkeypatch.setattr(floor_decide.Decider, "point", point)
    fast = floor_audit(problem, sup, problem.floors)
    assert calls
    assert _key(fast) == _key(plain)


def test_a_decision_point_that_breaks_a_relation_settles_nothing(monkeypatch):
    """A fake decision point (only the primary moved, to its level: every floor holds, a
    relation does not) would fit every member and hide the plain disclosures; the check
    against the block's relations keeps them."""
    problem, sup, plain = _plain(0)
    assert plain.disclosures
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    faked = []

    def point(self, lo, hi, j, direction, level):
        moves = np.zeros(lo.size)
        moves[j] = hi[j] if direction == UP else lo[j]
        faked.append(j)
        return "found", moves

    monkeypatch.setattr(floor_decide.Decider, "point", point)
    fast = floor_audit(problem, sup, problem.floors)
    assert faked
    assert _key(fast) == _key(plain)


@pytest.mark.parametrize(("seed", "depth"), [(0, 1), (1, 1), (0, 2)])
def test_neighbourhood_decisions_find_the_plain_disclosures(seed, depth, monkeypatch):
    """Decisions on the primary's neighbourhood first (D-112), made small so that some
    say "no point" where the block's model finds one: such a "none" only halves the group,
    a local point is checked as any, so the disclosures and reaches stay the plain path's."""
    problem, sup, plain = _plain(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    monkeypatch.setattr(floor_decide, "LOCAL_DEPTH", depth)
    monkeypatch.setattr(floor_decide, "LOCAL_SHARE", 1.0)
    real = floor_decide.Decider.point
    wrong: list[int] = []
    local: list[int] = []

    def point(self, lo, hi, j, direction, level):
        verdict, moves = real(self, lo, hi, j, direction, level)
        near = self._neighbourhood(j)
        if near is not None and near[0].size < self.n:
            local.append(j)
            block, _ = self.block.point(lo, hi, j, direction, level)
            if verdict == "none" and block == "found":
                wrong.append(j)
        return verdict, moves

    monkeypatch.setattr(floor_decide.Decider, "point", point)
    fast = floor_audit(problem, sup, problem.floors)
    assert local
    assert _key(fast) == _key(plain)
    assert fast.pairs_left >= plain.pairs_left
    if depth == 1:
        assert wrong  # the neighbourhood's "none" was wrong, and cost nothing but halving


@pytest.mark.parametrize("seed", [0, 1])
def test_decisions_without_anchors_find_the_plain_disclosures(seed, monkeypatch):
    """Blocks decided but not anchored (DECIDE_MIN_CELLS below ANCHOR_MIN_CELLS, D-112): the
    groups a decision leaves take the plain group LPs, and the disclosures, reaches and
    pairs stay the plain path's."""
    problem, sup, plain = _plain(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1 << 60)
    monkeypatch.setattr(insider_floor, "DECIDE_MIN_CELLS", 1)
    fast = floor_audit(problem, sup, problem.floors)
    assert fast.lp_counts.get("decision", 0) > 0
    assert _key(fast) == _key(plain)
    assert fast.pairs_left == plain.pairs_left


@pytest.mark.parametrize("seed", [0, 1])
def test_proof_splits_find_the_plain_disclosures(seed, monkeypatch):
    """A group a decision finds short split by the bounds its infeasibility proof uses
    (D-115), not in halves: the parts cover the group, so the disclosures, reaches and
    pairs stay the plain path's and the halves'; some groups are split that way."""
    problem, sup, plain = _plain(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    real = insider_floor._proof_split
    splits: list[int] = []

    def split(*args):
        parts = real(*args)
        if parts is not None:
            assert np.array_equal(np.sort(np.concatenate(parts)), np.sort(args[1]))
            splits.append(len(parts))
        return parts

    monkeypatch.setattr(insider_floor, "_proof_split", split)
    fast = floor_audit(problem, sup, problem.floors)
    assert splits
    monkeypatch.setattr(insider_floor, "SPLIT_BY_PROOF", False)
    halves = floor_audit(problem, sup, problem.floors)
    assert _key(fast) == _key(plain) == _key(halves)
    assert fast.pairs_left == plain.pairs_left


def test_the_bounds_a_proof_uses_prove_it_alone():
    """The ceilings `proof_bounds` names are enough: every other part's ceiling lifted far,
    the bounds stay infeasible (the same dual ray proves it), and lifting the named ones
    too makes them feasible."""
    import scipy.sparse as sp

    # x0 = x1 + x2 + x3 and x4 = x5; x0 held at 10 going up, x1..x3 each at most 2 up
    a = sp.csc_matrix(
        np.array([[1.0, -1.0, -1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0, -1.0]])
    )
    model = floor_decide._Split(a, np.zeros(2))
    lo = np.full(6, -5.0)
    hi = np.array([50.0, 2.0, 2.0, 2.0, 1.0, 1.0])
    verdict, _ = model.point(lo, hi, 0, UP, 10.0)
    assert verdict == "none"
    used = model.proof_bounds()
    assert used is not None
    low, high = used
    # x1..x3's ceilings, and x0's own other side (shut): never x4, x5
    assert np.flatnonzero(high).tolist() == [1, 2, 3] and np.flatnonzero(low).tolist() == [0]
    lifted_lo, lifted_hi = np.where(low, lo, -1e3), np.where(high, hi, 1e3)
    assert model.point(lifted_lo, lifted_hi, 0, UP, 10.0)[0] == "none"
    assert model.point(np.full(6, -1e3), np.full(6, 1e3), 0, UP, 10.0)[0] == "found"


@pytest.mark.parametrize("seed", [0, 1])
def test_scaled_offers_find_the_plain_disclosures(seed, monkeypatch):
    """Pool points scaled to the level or reflected to the primary's other side (D-120):
    each one offered is in the table's bounds, keeps the relations and reaches the level
    (checked here apart), some fit members, and the disclosures, reaches and pairs stay
    the plain path's and those without the scaled offers."""
    problem, sup, plain = _plain(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    real_offer, real_add = insider_floor._Pool.offer, insider_floor._Points.add
    offered: list[tuple[bool, bool, bool]] = []  # (moved?, reaches, admitted)
    state: dict = {}

    def add(self, x, only_new=None):
        if "pool" in state:
            pool, j, need, d, tol = state["pool"]
            moved = not np.any(np.all(pool.rows[: min(pool.n, len(pool.rows))] == x, axis=1))
            reach = bool(x[j] >= need - tol if d == UP else x[j] <= need + tol)
            offered.append((moved, reach, bool(pool.lp.admits(x, tol))))
        return real_add(self, x, only_new)

    def offer(self, points, members, j, need, d, tol):
        state["pool"] = (self, j, need, d, tol)
        try:
            return real_offer(self, points, members, j, need, d, tol)
        finally:
            del state["pool"]

    monkeypatch.setattr(insider_floor._Points, "add", add)
    monkeypatch.setattr(insider_floor._Pool, "offer", offer)
    fast = floor_audit(problem, sup, problem.floors)
    assert all(ok and reach for _, reach, ok in offered)
    assert any(moved for moved, _, _ in offered)  # some offered scaled or reflected
    monkeypatch.setattr(insider_floor, "SCALED_OFFERS", False)
    before = floor_audit(problem, sup, problem.floors)
    assert _key(fast) == _key(plain) == _key(before)
    assert fast.pairs_left == plain.pairs_left


@pytest.mark.parametrize("seed", [0, 1])
def test_scaled_running_points_settle_only_what_they_reach(seed, monkeypatch):
    """The coalition's running points scaled or reflected (D-120): every target one settles
    gets a point in the coalition's bounds, keeping the relations, at its level (checked
    here apart); the disclosures, reaches and pairs stay the plain path's."""
    problem, sup, plain = _plain(seed)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    real = insider_floor._Running._scaled
    kept: list[tuple[bool, bool]] = []

    def scaled(self, x, v):
        before = {k: self.out.points.get(k) for k in self.targets}
        real(self, x, v)
        for k, (c, d) in enumerate(self.targets):
            got = self.out.points.get((c, d))
            if got is not None and got is not before[(c, d)]:
                point = got[1][-1]
                j = int(self.lp.pos[c])
                reach = (
                    point[j] >= self.need[k] - self.tol
                    if d == UP
                    else point[j] <= self.need[k] + self.tol
                )
                kept.append(
                    (bool(self.lp.admits(point, self.tol, self.c_lo, self.c_hi)), bool(reach))
                )

    monkeypatch.setattr(insider_floor._Running, "_scaled", scaled)
    fast = floor_audit(problem, sup, problem.floors)
    assert kept and all(ok and reach for ok, reach in kept)
    assert _key(fast) == _key(plain)
    assert fast.pairs_left == plain.pairs_left
