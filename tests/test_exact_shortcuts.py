"""D-71: work HEUR and the rule on combined cells no longer do twice, with the same answers.

The clean-up's second cell set equal to its first is not solved again, the rule's relations
are read at once, and the rule's rounds judge each sum once. Each is checked against the
work done in full: a loop over the relations written here, the clean-up's every area
solved, every sum judged afresh."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import mixed_problem

import argusqt
from argusqt.model.status import is_suppressed
from argusqt.protection.lp import cleanup as cleanup_module
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.rules.combined import combined_disclosures, determined_sums


def _sums_by_loop(rel: sp.csr_matrix, sup: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
    """The test's own reading: per relation in order, one total (negative coefficient)
    published and two or more suppressed parts (positive ones) give a known sum; each
    group of parts once."""
    out, seen = [], set()
    for r in range(rel.shape[0]):
        entries = list(
            zip(
                rel.indices[rel.indptr[r] : rel.indptr[r + 1]].tolist(),
                rel.data[rel.indptr[r] : rel.indptr[r + 1]].tolist(),
                strict=True,
            )
        )
        totals = [c for c, a in entries if a < 0]
        hidden = sorted(c for c, a in entries if a > 0 and sup[c])
        if len(totals) != 1 or sup[totals[0]] or len(hidden) < 2:
            continue
        if tuple(hidden) not in seen:
            seen.add(tuple(hidden))
            out.append((totals[0], tuple(hidden)))
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_relations_read_at_once_give_the_loops_sums(seed):
    """Rows with no, one or two totals, explicit zeros and repeated cells (a matrix not in
    canonical form), suppressed totals: the same sums, in the same order."""
    rng = np.random.default_rng(seed)
    n_cells, n_rows = int(rng.integers(3, 30)), int(rng.integers(0, 25))
    lens = rng.integers(0, 8, size=n_rows)
    indptr = np.r_[0, np.cumsum(lens)].astype(np.int32)
    indices = rng.integers(0, n_cells, size=int(indptr[-1])).astype(np.int32)
    data = rng.choice([-1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 2.0], size=indices.size)
    rel = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cells))
    sup = rng.random(n_cells) < rng.uniform(0.2, 0.9)
    got = determined_sums(SimpleNamespace(relations=rel), sup)
    assert [(t, tuple(g.tolist())) for t, g in got] == _sums_by_loop(rel, sup)


def _table(seed: int):
    """A protected NACE × region table with dominated cells (the rule's sums to judge)."""
    rng = np.random.default_rng(seed)
    sections = {d: s for s, ds in {"B": ["B05", "B06", "B07"], "C": ["C10", "C11"]}.items()
                for d in ds}  # fmt: skip
    rows = []
    for d in sections:
        for r in ["R1", "R2", "R3"]:
            v = np.round(rng.lognormal(4, 1.0, size=int(rng.integers(1, 5)))) + 1
            if rng.random() < 0.4:
                v[0] *= 10
            rows += [(d, r, float(x)) for x in v]
    frame = pd.DataFrame(rows, columns=["nace", "reg", "x"])
    return argusqt.protect(
        frame, explanatory=["nace", "reg"], response="x", rules="NK(2,80)",
        hierarchies={"nace": sections}, method="HEUR", progress=False,
    )[0].table  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_sum_judged_once_is_judged_as_afresh(seed):
    """Patterns of one table (its own and random ones), the memo shared by all of them: the
    same unsafe sums, causes and needs as each judged without it."""
    table = _table(seed)
    rng = np.random.default_rng(seed)
    masks = [is_suppressed(np.asarray(table.status))]
    masks += [rng.random(table.n_cells) < rng.uniform(0.2, 0.7) for _ in range(12)]
    memo: dict = {}
    seen_unsafe = 0
    for sup in masks:
        view = copy.copy(table)
        fresh = combined_disclosures(view, sup)
        assert combined_disclosures(view, sup, memo) == fresh
        assert combined_disclosures(view, sup, memo) == fresh  # every sum from the memo
        seen_unsafe += len(fresh)
    assert memo and seen_unsafe  # sums judged through it, some of them unsafe


def _find_witness_every_area(ctx, key, sup, permanent):
    """The clean-up's search before D-71: every area built, each solved in turn."""
    cell, direction = key
    score = cleanup_module._SupScore(sup)
    tries = []
    for climb in (1, 1 << 30):
        n = ctx.grid.neighbourhood(cell, score, k_free=0, k_sup=1 << 30, climb=climb)
        tries.append(n[sup[n]])
    n_lps = 0
    for cells in tries:
        d = ctx.path_move(cell, direction, cells, np.where(permanent[cells], 1e-3, 1.0))
        n_lps += 1
        if d is not None:
            return (cells[d != 0], d[d != 0]), n_lps
    return None, n_lps


@pytest.mark.parametrize("seed", range(1, 9))
def test_the_clean_ups_search_finds_the_same_moves_with_fewer_lps(seed):
    """Every primary and side of a table, half its cells suppressed at random: the same
    move (cells and shifts, bit for bit) or none, as when every area is solved."""
    problem = mixed_problem(seed)
    ctx = MoveContext(problem)
    assert ctx.grid is not None
    rng = np.random.default_rng(seed)
    sup = ctx.primary | (ctx.movable & (rng.random(problem.n_cells) < 0.5))
    permanent = ctx.primary & sup
    lps = {"before": 0, "after": 0}
    calls = [0]
    path_move = ctx.path_move

    def counted(*args):
        calls[0] += 1
        return path_move(*args)

    ctx.path_move = counted
    for cell in np.flatnonzero(ctx.primary).tolist():
        for direction in (UP, DOWN):
            if ctx.required(cell, direction) <= 0:
                continue
            want, n = _find_witness_every_area(ctx, (cell, direction), sup, permanent)
            lps["before"] += n
            calls[0] = 0
            got = cleanup_module.find_witness(ctx, (cell, direction), sup, permanent, 0)
            lps["after"] += calls[0]
            if want is None:
                assert got is None
            else:
                assert got is not None
                assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert lps["after"] <= lps["before"]
