"""A block's attacker LPs met again at the same point are replayed, not solved
(lp/block_memo.py, docs/design.md D-72): the same outcomes, cuts and LP count as solving
them, so MOD's subtables give the same patterns with fewer HiGHS solves.

The outcomes are compared with a separator without the memo, and at 0/1 points with the
test's own linprog attacker (protect_helpers.lp_protected), which shares no code with
either."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import lp_protected, mixed_problem

import argusqt.protection.suppress.modular as modular
from argusqt.protection.lp.block_memo import BlockMemo
from argusqt.protection.lp.separation import Separator


def _same(a, b) -> bool:
    """Two lists of attacker outcomes are the same, cut by cut."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x.primary, x.low, x.high, len(x.cuts)) != (y.primary, y.low, y.high, len(y.cuts)):
            return False
        for c, d in zip(x.cuts, y.cuts, strict=True):
            same_cells = np.array_equal(c.cells, d.cells) and np.array_equal(c.coef, d.coef)
            if not same_cells or (c.kind, c.rhs) != (d.kind, d.rhs):
                return False
    return True


def _points(p, sep: Separator, rng: np.random.Generator) -> list[np.ndarray]:
    """Fractional and 0/1 master points over the free cells, each asked twice or more, in
    an order that mixes them (a block comes back after others were solved)."""
    free = np.flatnonzero(sep.free)
    pts = []
    for k in range(6):
        x = np.zeros(p.n_cells)
        if k % 2:
            x[free] = rng.random(free.size)
        else:
            x[free] = (rng.random(free.size) < 0.5).astype(float)
        pts.append(x)
    pts.append(np.where(sep.free, 1.0, 0.0))  # every free cell suppressed
    order = rng.permutation(np.r_[np.arange(len(pts)), np.arange(len(pts)), [0, 3, 6]])
    return [pts[i] for i in order]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_a_replayed_block_gives_what_solving_it_gives(seed):
    p = mixed_problem(seed)
    plain, memo = Separator(p), Separator(p)
    for s in (plain, memo):
        s.sweep = seed % 2 == 0  # the coverage LPs too (MOD's searches have them off)
    memo.memo = BlockMemo()
    rng = np.random.default_rng(seed)
    for x in _points(p, plain, rng):
        for first in (False, True):
            want = plain.separate(x, stop_at_first=first)
            got = memo.separate(x, stop_at_first=first)
            assert _same(want, got)
            assert memo.n_lps == plain.n_lps  # replayed LPs count as work: the same budget
            if not first and np.all((x == 0) | (x == 1)):
                mask = plain.full_point(x) > 0.5
                assert (not want) == lp_protected(p, mask)  # the test's own attacker
    assert memo.memo.hits > 0 and memo.memo.spared > 0


def test_the_memo_stays_off_with_remembered_moves():
    """With `reuse` an outcome depends on the moves remembered so far: never replayed."""
    p = mixed_problem(3)
    sep = Separator(p)
    sep.reuse = True
    sep.memo = BlockMemo()
    x = np.where(sep.free, 1.0, 0.0)
    for _ in range(3):
        sep.separate(x)
    assert sep.memo.hits == 0 and not sep.memo.entries


def test_a_small_memo_drops_its_oldest_blocks(monkeypatch):
    p = mixed_problem(4)
    monkeypatch.setattr(BlockMemo, "MAX_BYTES", 1)
    sep = Separator(p)
    sep.memo = BlockMemo()
    rng = np.random.default_rng(0)
    for x in _points(p, sep, rng):
        sep.separate(x)
        assert len(sep.memo.entries) <= 1


@pytest.mark.parametrize("seed", [1, 2, 5, 6])
def test_mod_gives_the_same_pattern_and_work_with_fewer_solves(monkeypatch, seed):
    from argusqt.protection.run import run_method

    p = mixed_problem(seed)
    replays: list[int] = []
    real = BlockMemo.replay

    def counting(self, *a, **kw):
        hits = self.hits
        out = real(self, *a, **kw)
        replays.append(self.hits - hits)
        return out

    monkeypatch.setattr(BlockMemo, "replay", counting)
    with_memo = run_method(p, "MOD", {"polish": False})
    monkeypatch.setattr(modular, "MEMO_BLOCKS", False)
    without = run_method(p, "MOD", {"polish": False})
    assert np.array_equal(with_memo.status, without.status)
    assert with_memo.figures["scip_lps"] == without.figures["scip_lps"]
    assert sum(replays) > 0  # blocks of the subtables' searches were replayed
    assert with_memo.verdict is not None and with_memo.verdict.ok
