"""MOD's fixed costs cut without changing a number (docs/design.md, D-80): the branch-and-cut's
first cuts gathered at once (Separator.relation_cuts), the virtual singleton cells' problem
built from the CSR arrays (with_singleton_cells) and the rule on combined cells' memo of the
sums it judged — each against the test's own copy of the code it replaced, byte for byte."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from protect_helpers import flat_codelist, hier_codelist, mixed_problem, random_problem
from test_combined_growth import _enterprises, _protect

from argusqt.model.status import Status, is_suppressed, secondary_status_for
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.separation import Cut, Separator, _dedupe, default_fixed
from argusqt.protection.suppress.combined import _RelationRule
from argusqt.protection.suppress.optimal import with_singleton_cells
from argusqt.rules.combined import forced_capacities, forced_nogoods, unsafe_relations


# ------------------------------------------------------------------ the replaced code
def own_relation_cuts(sep: Separator) -> list[Cut]:
    """The loop relation_cuts was before D-80: one _cut_sparse per (primary, relation,
    direction)."""
    cuts: list[Cut] = []
    rel_csc = sep.rel.tocsc()
    ind, ptr, dat = sep.rel.indices, sep.rel.indptr, sep.rel.data
    for p in sep.targets:
        rows = rel_csc.indices[rel_csc.indptr[p] : rel_csc.indptr[p + 1]]
        coefs = rel_csc.data[rel_csc.indptr[p] : rel_csc.indptr[p + 1]]
        for r, coef_p in zip(rows, coefs, strict=True):
            cells = ind[ptr[r] : ptr[r + 1]]
            vals = dat[ptr[r] : ptr[r + 1]]
            keep = cells != p
            for kind, c_p, pl in (("upper", -1.0, sep.upl[p]), ("lower", 1.0, sep.lpl[p])):
                if pl <= 0:
                    continue
                d = -(c_p / coef_p) * vals[keep]
                c = sep._cut_sparse(int(p), kind, cells[keep], d, pl)
                if c is not None and c.cells.size:
                    cuts.append(c)
    return _dedupe(cuts)


def own_singleton_cells(problem: CSPProblem, ss: bool, sm: bool, mf: int) -> CSPProblem:
    """with_singleton_cells as it was before D-80 (scipy's multiply, hstack and vstack)."""
    if problem.freq is None or not (ss or sm or mf > 0):
        return problem
    prim = problem.primary
    freq = np.asarray(problem.freq, dtype=float)
    rel = sp.csr_matrix(problem.relations)
    groups: list[tuple[int, ...]] = []
    child = rel.multiply(rel > 0).tocsr()
    child.eliminate_zeros()
    pattern = sp.csr_matrix((np.ones(child.nnz), child.indices, child.indptr), shape=child.shape)
    n_prim = pattern @ prim.astype(float)
    for r in np.flatnonzero(n_prim >= 2):
        cells = child.indices[child.indptr[r] : child.indptr[r + 1]]
        pc = cells[prim[cells]]
        f = freq[pc]
        risky = False
        if pc.size == 2:
            n_single = int((f == 1).sum())
            risky = (ss and n_single == 2) or (sm and n_single == 1 and (f > 1).any())
        if not risky and mf > 0:
            risky = 0 < f.sum() < mf
        if risky:
            key = tuple(sorted(int(c) for c in pc))
            if key not in groups:
                groups.append(key)
    if not groups:
        return problem
    n, k = problem.n_cells, len(groups)
    vals = np.array([problem.values[list(g)].sum() for g in groups])
    lo = np.array([problem.lower[list(g)].sum() for g in groups])
    hi = np.array([problem.upper[list(g)].sum() for g in groups])
    upl = np.maximum(1e-4 * np.abs(vals), 10.0 ** (-problem.decimals))
    hi = np.maximum(hi, vals + upl)
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    for j, g in enumerate(groups):
        rows += [j] * (len(g) + 1)
        cols += [n + j, *g]
        data += [-1.0] + [1.0] * len(g)
    extra = sp.csr_matrix((data, (rows, cols)), shape=(k, n + k))
    base = sp.hstack([rel, sp.csr_matrix((rel.shape[0], k))])
    spl = problem.spl if problem.spl is not None else np.zeros(n)
    return CSPProblem(
        values=np.r_[problem.values, vals],
        lower=np.r_[problem.lower, lo],
        upper=np.r_[problem.upper, hi],
        cost=np.r_[problem.cost, np.ones(k)],
        status=np.r_[problem.status, np.full(k, Status.UNSAFE_MANUAL, dtype=problem.status.dtype)],
        lpl=np.r_[problem.lpl, np.zeros(k)],
        upl=np.r_[problem.upl, upl],
        relations=sp.vstack([base, extra]).tocsr(),
        rhs=np.r_[problem.rhs, np.zeros(k)],
        spl=np.r_[spl, np.zeros(k)],
        decimals=problem.decimals,
        dims=None,
        freq=np.r_[freq, np.array([freq[list(g)].sum() for g in groups])],
        names=list(problem.names),
    )


# ------------------------------------------------------------------ comparisons
def _same_array(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _same_cuts(a: list[Cut], b: list[Cut]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x.primary, x.kind, x.rhs, x.raw_rhs) != (y.primary, y.kind, y.rhs, y.raw_rhs):
            return False
        if type(x.primary) is not type(y.primary) or type(x.raw_rhs) is not type(y.raw_rhs):
            return False
        for f in ("cells", "coef", "raw_cells", "raw_coef"):
            if not _same_array(getattr(x, f), getattr(y, f)):
                return False
    return True


def _same_problem(a: CSPProblem, b: CSPProblem) -> bool:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if sp.issparse(x):
            if type(x) is not type(y) or x.shape != y.shape or x.format != y.format:
                return False
            if not all(
                _same_array(getattr(x, k), getattr(y, k)) for k in ("data", "indices", "indptr")
            ):
                return False
        elif isinstance(x, np.ndarray):
            if not _same_array(x, y):
                return False
        elif x != y:
            return False
    return True


def _problems() -> list[CSPProblem]:
    """Small 2-level, 3-D and hierarchical tables, some with singletons and low frequencies."""
    out = [mixed_problem(seed) for seed in range(12)]
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        dims = [hier_codelist("h", [3, 2]), flat_codelist("c", 4 + seed % 3)]
        p = random_problem(rng, dims, primary_share=0.25, zero_share=0.05)
        freq = np.asarray(p.freq, dtype=float).copy()
        ones = rng.random(freq.size) < 0.3
        freq[ones & (freq > 0)] = 1.0  # singletons, for the virtual cells
        p.freq = freq
        p.cost = np.abs(p.values)
        out.append(p)
    return out


@pytest.mark.parametrize("k", range(20))
def test_relation_cuts_are_the_loops_cuts(k):
    problem = _problems()[k]
    rng = np.random.default_rng(k)
    for singletons in (False, True):
        work = with_singleton_cells(
            problem, singleton_singleton=singletons, singleton_multiple=singletons, min_freq=5
        )
        fixed = default_fixed(work)
        free = np.flatnonzero(np.isnan(fixed))
        for trial in range(4):
            f = fixed.copy()
            if trial:  # some free cells fixed suppressed or published: the fixed part counts
                pick = free[rng.random(free.size) < 0.3]
                f[pick] = (rng.random(pick.size) < 0.5).astype(float)
            sep = Separator(work, f)
            assert _same_cuts(sep.relation_cuts(), own_relation_cuts(sep))


@pytest.mark.parametrize("k", range(20))
def test_singleton_cells_are_the_scipy_builds(k):
    problem = _problems()[k]
    for ss, sm, mf in ((True, True, 0), (True, False, 0), (False, True, 7), (True, True, 30)):
        mine = with_singleton_cells(
            problem, singleton_singleton=ss, singleton_multiple=sm, min_freq=mf
        )
        theirs = own_singleton_cells(problem, ss, sm, mf)
        assert (mine is problem) == (theirs is problem)
        assert _same_problem(mine, theirs)


def test_the_rules_memo_gives_the_rules_answers():
    """The rule object's memo of judged sums (one protect call) answers as the rule does
    without it, over a sequence of patterns that share most sums, its growth and its forced
    no-goods too."""
    ent = _enterprises(3)
    t = _protect(ent, "HEUR", "NK(2,80)|COMB(0)").table
    t.spec.rules.combined = True
    rule = _RelationRule(t)
    rng = np.random.default_rng(7)
    base = np.asarray(t.status).copy()
    for share in (0.1, 0.3, 0.3, 0.5, 0.1):
        status = base.copy()
        more = np.flatnonzero(rng.random(t.n_cells) < share)
        status[more] = secondary_status_for(status[more])
        mask = is_suppressed(status)
        got, want = rule(mask), unsafe_relations(t, mask)
        assert len(got) == len(want)
        for (a, b, c), (x, y, z) in zip(got, want, strict=True):
            assert a == x and _same_array(b, y) and _same_array(c, z)
        view = copy.copy(t)
        view.status = status
        assert _same_array(rule.grown(status), _RelationRule(t).grown(status))
        always = mask & (rng.random(t.n_cells) < 0.8)
        free = ~always
        for mine, theirs in (
            (rule.forced(always, free), forced_nogoods(t, always, free)),
            (rule.forced_weights(always, free), forced_capacities(t, always, free)),
        ):
            assert len(mine) == len(theirs)
            for u, v in zip(mine, theirs, strict=True):
                assert u[0] == v[0] and all(
                    _same_array(p, q) for p, q in zip(u[1:], v[1:], strict=True)
                )
    assert rule.memo  # the sums were judged once and kept
