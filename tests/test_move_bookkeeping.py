"""D-79: the bookkeeping around HEUR's, the clean-up's and the insider cover's path LPs made
cheaper, with the same numbers. Each is checked against the form it replaced, written here:
`proves` per sign, the grid's neighbourhood walk with numpy scalars, the clean-up's LPs
solved every time, the cover's areas and shifts computed afresh."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protect_helpers import mixed_problem, random_3d

from argusqt.protection.lp import cleanup as cleanup_module
from argusqt.protection.lp.cleanup import PathMemo, find_witness
from argusqt.protection.lp.components import DOWN, UP, Grid, MoveContext, solve


def _proves_per_sign(ctx, cells, d):
    """`MoveContext.proves` as it was before D-79: ratios and shifts per sign."""
    pos = d > 0
    neg = d < 0
    ub = ctx.ub[cells]
    lb = ctx.lb[cells]
    with np.errstate(divide="ignore", invalid="ignore"):
        t_up = min(
            np.min(ub[pos] / d[pos], initial=np.inf), np.min(lb[neg] / -d[neg], initial=np.inf)
        )
        t_dn = min(
            np.min(lb[pos] / d[pos], initial=np.inf), np.min(ub[neg] / -d[neg], initial=np.inf)
        )
        eps = 0.25 * ctx.tol
        rise = np.maximum(np.where(pos, d * t_up, 0.0), np.where(neg, -d * t_dn, 0.0))
        fall = np.maximum(np.where(neg, -d * t_up, 0.0), np.where(pos, d * t_dn, 0.0))
    prim = ctx.primary[cells]
    return prim & (rise >= ctx.upl[cells] - eps), prim & (fall >= ctx.lpl[cells] - eps)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_proves_gives_the_per_sign_masks(seed):
    """Moves of every scale, unmoved cells, cells without room and with infinite room:
    the same masks, and no warning (0·inf is never computed)."""
    rng = np.random.default_rng(seed)
    ctx = MoveContext(mixed_problem(seed))
    n = ctx.values.size
    ctx.ub = ctx.ub.copy()
    ctx.ub[rng.random(n) < 0.1] = np.inf
    ctx.ub[rng.random(n) < 0.1] = 0.0
    for _ in range(20):
        m = int(rng.integers(1, n + 1))
        cells = rng.choice(n, m, replace=False)
        d = rng.normal(size=m) * float(rng.choice([1e-3, 1.0, 1e4]))
        d[rng.random(m) < 0.2] = 0.0
        if rng.random() < 0.2:
            d = np.abs(d)
        with np.errstate(all="raise"):
            up, dn = ctx.proves(cells, d)
        ref_up, ref_dn = _proves_per_sign(ctx, cells, d)
        assert np.array_equal(up, ref_up) and np.array_equal(dn, ref_dn)


def _product_before(grid: Grid, cell, score, k_free, k_sup, climb) -> np.ndarray:
    """`Grid.product` as it was before D-79 (np.unravel_index, numpy scalars)."""
    coords = np.unravel_index(cell, grid.shape)
    per_dim = []
    for d in range(len(grid.shape)):
        i = int(coords[d])
        stride = grid.strides[d]
        par = grid.parent[d]
        kids = grid.children[d]

        def pick(nodes, _i=i, _s=stride):
            if nodes.size == 0:
                return nodes
            sc = score[cell + (nodes - _i) * _s]
            sup_nodes = nodes[sc == 0][:k_sup]
            if k_free <= 0:
                return sup_nodes
            free = np.isfinite(sc) & (sc > 0)
            fn = nodes[free]
            if fn.size > k_free:
                fn = fn[np.argsort(sc[free], kind="stable")[:k_free]]
            return np.concatenate([sup_nodes, fn])

        chosen = {i}
        stack: list[int] = []
        a = i
        step = 0
        while par[a] >= 0 and step < climb:
            pa = int(par[a])
            sib = kids[pa]
            sel = pick(sib[sib != a])
            chosen.update(int(x) for x in sel)
            stack.extend(int(x) for x in sel)
            step += 1
            if step >= climb:
                break
            chosen.add(pa)
            a = pa
        stack.append(i)
        while stack:
            ch = kids[stack.pop()]
            if ch.size == 0:
                continue
            for x in pick(ch):
                if int(x) not in chosen:
                    chosen.add(int(x))
                    stack.append(int(x))
        per_dim.append(np.fromiter(sorted(chosen), dtype=np.int64))
    flat = per_dim[0] * grid.strides[0]
    for d in range(1, len(per_dim)):
        flat = (flat[:, None] + per_dim[d] * grid.strides[d]).ravel()
    return flat


@pytest.mark.parametrize("seed", range(6))
def test_the_grid_walk_gives_the_same_neighbourhoods(seed):
    """Every option set HEUR, the clean-up and the cover use, and a few others, on random
    scores with suppressed, unusable and tied cells; cells given as int and np.int64."""
    rng = np.random.default_rng(seed)
    problem = random_3d(rng, [2, 3], [3, 2], 4)
    grid = Grid(problem)
    n = grid.size
    options = [(0, 1 << 30, 1), (0, 1 << 30, 1 << 30), (5, 6, 1), (3, 6, 1 << 30), (2, 3, 1)]
    for _ in range(15):
        score = rng.uniform(0.5, 9.0, n)
        score[rng.random(n) < rng.uniform(0.05, 0.6)] = 0.0
        score[rng.random(n) < 0.2] = np.inf
        score[rng.random(n) < 0.1] = 3.0
        for cell in rng.integers(0, n, 8).tolist():
            for k_free, k_sup, climb in options + [(1, 2, 2)]:
                want = _product_before(grid, cell, score, k_free, k_sup, climb)
                for c in (cell, np.int64(cell)):
                    got = grid.product(c, score, k_free, k_sup, climb)
                    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_solve_reads_the_solution_as_before():
    """fromiter reads HiGHS's column values into the same float64s as np.asarray."""
    ctx = MoveContext(mixed_problem(3))
    prim = np.flatnonzero(ctx.primary)
    cells = np.flatnonzero(ctx.movable)
    d = ctx.path_move(int(prim[0]), UP, cells, np.ones(cells.size))
    assert d is not None
    lp = ctx._lp
    assert lp is not None
    status, x, _ = solve(lp)
    assert status == "optimal" and x is not None and x.dtype == np.float64
    assert x.tobytes() == np.asarray(lp.getSolution().col_value).tobytes()


@pytest.mark.parametrize("seed", range(8))
def test_the_cleanups_memo_gives_the_lps_answers(seed, monkeypatch):
    """The same clean-up with every LP solved: the same pattern, LP count and witnesses,
    and each LP the memo answers, solved again, gives its move bit for bit."""
    from argusqt.protection.lp.protector import primary_order, protect_all

    problem = mixed_problem(seed)
    ctx = MoveContext(problem)
    sup = ctx.primary.copy()
    wit = cleanup_module.Witnesses()
    protect_all(ctx, sup, wit, primary_order(ctx))
    runs = []
    for memo_on in (True, False):
        if not memo_on:
            monkeypatch.setattr(cleanup_module, "PathMemo", lambda: _NoMemo())
        w = cleanup_module.Witnesses()
        for m, s in zip(wit.moves, wit.shifts, strict=True):
            w.add_move(m, s, ctx)
        out, info = cleanup_module.cleanup(problem, sup, w, ctx=ctx)
        runs.append(
            (
                out,
                info["lps"],
                [(m.tobytes(), s.tobytes()) for m, s in zip(w.moves, w.shifts, strict=True)],
            )
        )
    assert np.array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1] and runs[0][2] == runs[1][2]


class _NoMemo(PathMemo):
    """A memo that never answers: every LP solved."""

    def path_move(self, ctx, cell, direction, cells, permanent):
        return ctx.path_move(cell, direction, cells, np.where(permanent[cells], 1e-3, 1.0))


def test_a_memo_hit_is_the_lp_solved_again():
    """Each LP asked twice: the second answer is the memo's, equal to a fresh solve."""
    problem = mixed_problem(5)
    ctx = MoveContext(problem)
    sup = ctx.movable.copy()
    perm = ctx.primary & sup
    memo = PathMemo(size=2)
    keys = [(int(c), direction) for c in np.flatnonzero(perm)[:6] for direction in (UP, DOWN)]
    for key in keys + keys[::-1]:
        got = find_witness(ctx, key, sup, perm, 10**6, memo)
        fresh = find_witness(ctx, key, sup, perm, 10**6)
        assert (got is None) == (fresh is None)
        if got is not None and fresh is not None:
            assert got[0].tobytes() == fresh[0].tobytes() and got[1].tobytes() == fresh[1].tobytes()
    assert memo.hits > 0 and len(memo._lps) <= 2


def test_the_covers_kept_areas_are_the_fresh_ones():
    """Cells asked in a mixed order, each side in turn: every area the cover yields is the
    one computed afresh (grid neighbourhood's suppressed cells, then the balls)."""
    from argusqt.protection.audit import insider_cover as ic
    from argusqt.protection.audit.insider import respondents_of
    from argusqt.protection.lp.components import variable_components

    problem = random_3d(np.random.default_rng(7), [3, 3], [3, 2], 5, primary_share=0.3)
    ctx = MoveContext(problem)
    sup = ctx.primary | (np.random.default_rng(1).random(problem.n_cells) < 0.5)
    ctx.movable = sup.copy()
    rel = problem.relations.tocsr()
    comps = variable_components(rel, sup)
    label = np.full(problem.n_cells, -1, dtype=np.int64)
    for k, comp in enumerate(comps):
        label[comp.cells] = k
    resp = respondents_of(problem)
    assert resp is not None
    known = resp.padded(problem.n_cells).known.tocsr()
    ksup = known.multiply(sup[None, :]).tocsr()
    ksup.eliminate_zeros()
    hops = ic.Hops(rel, sup)
    cover = ic.Cover(ctx, sup, ksup, resp.padded(problem.n_cells).exempt, comps, label, hops)
    cells = np.flatnonzero(ctx.primary & sup)
    order = np.r_[cells, cells[::-1], cells[::2]].tolist()
    assert ctx.grid is not None
    for cell in order:
        for _side in (UP, DOWN):
            got = list(cover.areas(cell))
            n = ctx.grid.neighbourhood(cell, ic._Suppressed(sup), k_free=0, k_sup=1 << 30, climb=1)
            want = [n[sup[n]]]
            comp = comps[int(label[cell])]
            want += [hops.ball(cell, lim) for lim in ic.BALL_LIMITS if lim < comp.cells.size]
            want.append(comp.cells)
            assert len(got) == len(want)
            assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


def test_a_moves_shifts_by_cell():
    """`Cover.shift_at` is the move's shift by cell on the cells `uncovered` reads (those a
    respondent alone makes up and the primaries it proves), made once."""
    from argusqt.protection.audit import insider_cover as ic

    problem = mixed_problem(2)
    ctx = MoveContext(problem)
    sup = ctx.movable.copy()
    idx = np.flatnonzero(sup)[:6]
    # a respondent alone in the first two cells of the move
    ksup = ic.sp.csr_matrix((np.ones(2), idx[:2], [0, 2]), shape=(1, problem.n_cells))
    label = np.zeros(problem.n_cells, np.int64)
    hops = ic.Hops(problem.relations, sup)
    cover = ic.Cover(ctx, sup, ksup, ksup * 0, [], label, hops)
    d = np.array([1.5, -2.0, 0.25, 3.0, -1.0, 2.0])[: idx.size]
    up, dn = ctx.proves(idx, d)
    assert cover.add(idx, d) == frozenset({0})
    keep = np.isin(idx, idx[:2]) | up | dn
    assert cover.shift_at(0) == dict(zip(idx[keep].tolist(), d[keep].tolist(), strict=True))
    assert cover.shift_at(0) is cover.shift_at(0)
