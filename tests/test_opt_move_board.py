"""Moves borrowed between attackers (lp/separation.py MoveBoard, docs/design.md D-113): an
LP is spared only where the attacker's own LP would reach the level, and OPT with the board
still proves the floor model's enumerated optimum; without `borrow_root` the root runs the
path without the board (D-116)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from test_insider_floors import assert_enumerated_optimum, opt_on_survey

from argusqt.protection.lp import separation
from argusqt.protection.lp.separation import MoveBoard
from argusqt.protection.suppress import scip_plugins


def _lp_reach(sep: separation.Separator, p: int, sense: int) -> float:
    """The attacker's own LP at its current point, solved apart: max sense·δₚ."""
    xf = sep._xf
    rel = sp.csr_matrix(sep.problem.relations, dtype=float)
    c = np.zeros(rel.shape[1])
    c[p] = -float(sense)
    bounds = list(zip(-sep.lb * xf, np.where(xf > 0, sep.ub * xf, 0.0), strict=True))
    res = linprog(c, A_eq=rel, b_eq=sep.rhs_dev, bounds=bounds, method="highs")
    assert res.status == 0
    return float(-res.fun)


@pytest.mark.parametrize("seed", [5, 9, 11])
def test_opt_proves_the_enumerated_optimum_with_borrowed_moves(monkeypatch, seed):
    """Every LP the board spares reaches the level in the attacker's own LP (solved apart
    here), and OPT proves the optimum enumeration finds; its pattern passes the attacker."""
    real = separation.Separator._reach
    spared: list[tuple[float, float, float]] = []  # (need, the board's reach, the LP's)

    def reach(self, p, sense, need):  # type: ignore[no-untyped-def]
        before = self.certs.borrowed
        moved = real(self, p, sense, need)
        if self.certs.borrowed > before:  # checked after the run (SCIP swallows errors)
            spared.append((need, moved, _lp_reach(self, p, sense)))
        return moved

    monkeypatch.setattr(separation.Separator, "_reach", reach)
    p, cost, got = opt_on_survey(seed, monkeypatch, borrow_moves=True, borrow_root=True)
    assert spared  # the board spared some LP on every survey
    for need, moved, own in spared:
        assert need <= moved <= own + 1e-6 * max(1.0, abs(moved))
    assert_enumerated_optimum(p, cost, got)


def _attacker_line(p) -> str:  # type: ignore[no-untyped-def]
    """The run's counts (LPs, cuts, checks, guided runs) without its seconds."""
    return re.sub(r"\d+\.\d+ s\b", "", next(x for x in p.result.log if "attacker LPs" in x))


@pytest.mark.parametrize("seed", [5, 9, 11])
def test_without_borrow_root_the_root_runs_the_path_without_the_board(monkeypatch, seed):
    """The surveys close at the root: with the board from the tree on, the run is the run
    without the board (the same LPs, cuts, checks, pattern and bound), while the board at
    the root would have spared LPs there (so the gate is what keeps the root's path)."""
    off, _, got_off = opt_on_survey(seed)
    tree, cost, got = opt_on_survey(seed, monkeypatch, borrow_moves=True)
    assert tree.result.figures["nodes"] == 1
    assert _attacker_line(tree) == _attacker_line(off)
    assert tree.result.figures["attacker_lps"] == off.result.figures["attacker_lps"]
    assert got == got_off
    assert tree.result.lower_bound == off.result.lower_bound
    root, _, _ = opt_on_survey(seed, monkeypatch, borrow_moves=True, borrow_root=True)
    assert root.result.figures["attacker_lps"] < off.result.figures["attacker_lps"]
    assert_enumerated_optimum(tree, cost, got)


def test_the_board_opens_with_the_tree(monkeypatch):
    """Without `borrow_root` no attacker borrows while SCIP's node count is 1, and every
    attacker does once the tree has started (seed 25's survey branches)."""
    real = scip_plugins._CapacityHandler._separate
    seen: list[tuple[int, bool, bool]] = []  # (nodes, the outsider borrows, every insider)

    def spy(self, sep, x, primaries=None, **kw):  # type: ignore[no-untyped-def]
        out = real(self, sep, x, primaries, **kw)
        insiders = [s.board is not None for s, _ in self.insider_pool.values()]
        seen.append((self.model.getNNodes(), self.sep.board is not None, all(insiders)))
        return out

    monkeypatch.setattr(scip_plugins._CapacityHandler, "_separate", spy)
    p, cost, got = opt_on_survey(25, monkeypatch, borrow_moves=True)
    assert any(n > 1 for n, _, _ in seen)
    for n, outsider, insiders in seen:
        assert outsider == (n > 1)
        assert insiders or n == 1
    assert_enumerated_optimum(p, cost, got)


def test_the_board_scales_a_move_to_the_borrower_s_bounds():
    """A move is scaled to the borrower's room (its floors), refused through a cell at x = 0
    (published, or known to the borrower) and never offered back to the attacker that made
    it; the newest KEEP moves stay."""
    board = MoveBoard()
    cells = np.array([0, 1, 2])
    d = np.array([4.0, -2.0, -2.0])  # δ₀ = 4, its two parts down by 2 each
    board.post(0, 1, cells, d, 4.0, owner="outsider")
    lb = np.array([0.0, 1.0, 2.0])  # the borrower may lower cell 1 by 1 only
    ub = np.array([10.0, 10.0, 10.0])
    x = np.ones(3)
    got = board.reach(0, 1, x, lb, ub, owner="insider")
    assert got is not None
    assert got[0] == pytest.approx(2.0)  # t = 1/2
    assert np.allclose(got[2], d / 2)
    assert board.reach(0, 1, np.array([1.0, 0.0, 1.0]), lb, ub, owner="insider") is None
    assert board.reach(0, 1, x, lb, ub, owner="outsider") is None
    for k in range(MoveBoard.KEEP + 1):
        board.post(0, 1, cells, d, 4.0, owner=k)
    assert len(board.moves[(0, 1)]) == MoveBoard.KEEP
