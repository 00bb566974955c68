"""Moves borrowed between attackers (lp/separation.py MoveBoard, docs/design.md D-113): an
LP is spared only where the attacker's own LP would reach the level, and OPT with the board
still proves the floor model's enumerated optimum."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from test_insider_floors import assert_enumerated_optimum, opt_on_survey

from argusqt.protection.lp import separation
from argusqt.protection.lp.separation import MoveBoard


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
    p, cost, got = opt_on_survey(seed, monkeypatch, borrow_moves=True)
    assert spared  # the board spared some LP on every survey
    for need, moved, own in spared:
        assert need <= moved <= own + 1e-6 * max(1.0, abs(moved))
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
