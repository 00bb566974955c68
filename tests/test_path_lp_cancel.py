"""A cancel stops a big path LP inside HiGHS (issue 15: HEUR's whole-table path LPs kept a
cancel waiting 3.6 s on 10⁵ cells); small path LPs and uncancelled runs are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import sized_problem

from argusqt.errors import Cancelled
from argusqt.progress import CancelToken
from argusqt.protection.lp.cleanup import Witnesses
from argusqt.protection.lp.components import INTERRUPTIBLE_CELLS, UP, MoveContext
from argusqt.protection.lp.protector import primary_order, protect_all


def _big():
    p = sized_problem("3D", 3 * INTERRUPTIBLE_CELLS, seed=3)
    assert p.n_cells >= INTERRUPTIBLE_CELLS
    return p


def test_a_cancelled_token_interrupts_a_whole_table_path_lp():
    p = _big()
    ctx = MoveContext(p)
    cell = int(np.flatnonzero(p.primary)[0])
    cells = np.arange(p.n_cells)
    cost = np.ones(p.n_cells)
    assert ctx.path_move(cell, UP, cells, cost) is not None  # no token: solved
    token = CancelToken()
    token.cancel()
    ctx.cancel = token
    with pytest.raises(Cancelled):
        ctx.path_move(cell, UP, cells, cost)
    ctx.cancel = None
    assert ctx.path_move(cell, UP, cells, cost) is not None  # and usable again


def test_protect_all_leaves_no_token_behind():
    p = _big()
    ctx = MoveContext(p)
    sup = p.primary.copy()
    order = primary_order(ctx)[:3]
    token = CancelToken()
    protect_all(ctx, sup, Witnesses(), order, cancel=token)
    assert ctx.cancel is None
    token.cancel()
    with pytest.raises(Cancelled):
        protect_all(ctx, sup, Witnesses(), primary_order(ctx), cancel=token)
    assert ctx.cancel is None
