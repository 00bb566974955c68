"""Generators of protection problems (2-D, 1H2D, 3-D hierarchical) for tests and benchmarks.

Tables are built the real way (CodeList → Table → CSPProblem.from_table) so relations,
bounds and statuses are exactly what methods see in the application.
"""

from __future__ import annotations

import numpy as np

from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec
from argusqt.protection.core.problem import CSPProblem


def flat_codelist(name: str, n: int) -> CodeList:
    """Total + n zero-padded codes (byte order = numeric order)."""
    width = len(str(n))
    return CodeList.flat(name, [f"{i:0{width}d}" for i in range(1, n + 1)])


def hier_codelist(name: str, branching: list[int]) -> CodeList:
    """A balanced hierarchy: branching[0] level-1 nodes, each with branching[1] children, …"""
    entries: list[tuple[int, str]] = []

    def rec(prefix: str, depth: int) -> None:
        if depth > len(branching):
            return
        for k in range(branching[depth - 1]):
            code = f"{prefix}{k + 1:02d}"
            entries.append((depth, code))
            rec(code, depth + 1)

    rec("", 1)
    return CodeList.from_tree(name, entries)


def leaf_matrix(cl: CodeList) -> np.ndarray:
    """Nodes × leaves 0/1 matrix: node value = Σ of the leaves below it."""
    leaves = np.flatnonzero(cl.is_leaf)
    mat = np.zeros((len(cl), leaves.size))
    for j, leaf in enumerate(leaves):
        mat[cl.ancestors[int(leaf)], j] = 1.0
    return mat


def table_from_leaves(
    dims: list[CodeList],
    leaf_values: np.ndarray,
    leaf_freq: np.ndarray | None = None,
    decimals: int = 0,
) -> Table:
    """A Table whose aggregates are the sums of the given leaf cells (all statuses safe)."""
    value = np.asarray(leaf_values, dtype=float)
    freq = np.ones_like(value) * 5 if leaf_freq is None else np.asarray(leaf_freq, float)
    for axis, cl in enumerate(dims):
        mat = leaf_matrix(cl)
        value = np.moveaxis(np.tensordot(mat, value, axes=([1], [axis])), 0, axis)
        freq = np.moveaxis(np.tensordot(mat, freq, axes=([1], [axis])), 0, axis)
    value = value.ravel()
    freq = freq.ravel()
    spec = TableSpec(explanatory=[d.name for d in dims], response="value")
    top = np.zeros((value.size, 2))
    return Table(
        spec=spec,
        dims=dims,
        value=value,
        freq=freq,
        shadow=value.copy(),
        cost_raw=value.copy(),
        top=top,
        decimals=decimals,
    )


def problem_from_table(
    table: Table,
    primaries: np.ndarray,
    lpl: np.ndarray | float,
    upl: np.ndarray | float | None = None,
    status_code: int = 3,
) -> CSPProblem:
    """Mark `primaries` (indices) unsafe with the given protection levels and build the CSP."""
    n = table.n_cells
    status = np.where(table.freq > 0, 1, 14).astype(np.int8)
    status[np.asarray(primaries, dtype=np.int64)] = status_code
    table.status = status
    lp = np.zeros(n)
    up = np.zeros(n)
    lp[primaries] = np.broadcast_to(lpl, np.shape(primaries)) if np.ndim(lpl) else lpl
    uval = lpl if upl is None else upl
    up[primaries] = np.broadcast_to(uval, np.shape(primaries)) if np.ndim(uval) else uval
    table.lpl = lp
    table.upl = up
    return CSPProblem.from_table(table)


def problem_2d(rows: list[list[float]], primaries: list[tuple[int, int]], pl) -> CSPProblem:
    """A flat 2-D table from its interior cells; (r, c) are 1-based interior positions."""
    arr = np.asarray(rows, dtype=float)
    dims = [flat_codelist("r", arr.shape[0]), flat_codelist("c", arr.shape[1])]
    table = table_from_leaves(dims, arr)
    ids = [table.cell_index((r, c)) for r, c in primaries]
    return problem_from_table(table, np.asarray(ids), pl)


def cell_id(problem_or_shape, *nodes: int) -> int:
    """Row-major cell index of node indices (0 = total in each dimension)."""
    shape = (
        tuple(len(d) for d in problem_or_shape.dims)
        if hasattr(problem_or_shape, "dims")
        else tuple(problem_or_shape)
    )
    return int(np.ravel_multi_index(nodes, shape))


def random_problem(
    rng: np.random.Generator,
    dims: list[CodeList],
    primary_share: float = 0.1,
    pct: tuple[float, float] = (0.1, 0.3),
    zero_share: float = 0.0,
) -> CSPProblem:
    """Random leaf values, ~`primary_share` of the non-empty cells primary, p%-like PLs."""
    leaf_shape = tuple(int(d.is_leaf.sum()) for d in dims)
    leaves = np.round(rng.lognormal(3.0, 1.0, size=leaf_shape)) + 1
    freq = rng.integers(1, 20, size=leaf_shape).astype(float)
    if zero_share > 0:
        empty = rng.random(leaf_shape) < zero_share
        leaves[empty] = 0
        freq[empty] = 0
    table = table_from_leaves(dims, leaves, freq)
    nonempty = np.flatnonzero(table.freq > 0)
    k = max(1, int(round(primary_share * nonempty.size)))
    # small cells are more likely to be sensitive
    weights = 1.0 / (1.0 + table.value[nonempty])
    prim = rng.choice(
        nonempty, size=min(k, nonempty.size), replace=False, p=weights / weights.sum()
    )
    frac = rng.uniform(pct[0], pct[1], size=prim.size)
    pl = np.maximum(1.0, np.round(frac * table.value[prim]))
    pl = np.minimum(pl, np.maximum(table.value[prim], 1.0))
    return problem_from_table(table, prim, pl)


def random_2d(rng: np.random.Generator, nrow: int, ncol: int, **kw) -> CSPProblem:
    return random_problem(rng, [flat_codelist("r", nrow), flat_codelist("c", ncol)], **kw)


def random_1h2d(rng: np.random.Generator, branching: list[int], ncol: int, **kw) -> CSPProblem:
    return random_problem(rng, [hier_codelist("h", branching), flat_codelist("c", ncol)], **kw)


def random_3d(
    rng: np.random.Generator,
    branching0: list[int],
    branching1: list[int],
    n2: int,
    **kw,
) -> CSPProblem:
    dims = [hier_codelist("a", branching0), hier_codelist("b", branching1), flat_codelist("c", n2)]
    return random_problem(rng, dims, **kw)


def sized_problem(kind: str, target_cells: int, seed: int = 0) -> CSPProblem:
    """A generated problem of roughly `target_cells` cells: kind in {"2D", "1H2D", "3D"}."""
    rng = np.random.default_rng(seed)
    if kind == "2D":
        side = max(2, int(round(np.sqrt(target_cells))) - 1)
        return random_2d(rng, side, side)
    if kind == "1H2D":
        # hierarchy of b1 × b2 leaves (+ b1 + 1 nodes) times ncol + 1 columns
        b1 = max(2, int(round(target_cells**0.25)))
        b2 = max(2, int(round(target_cells**0.25)))
        rows = 1 + b1 + b1 * b2
        ncol = max(2, int(round(target_cells / rows)) - 1)
        return random_1h2d(rng, [b1, b2], ncol)
    if kind == "3D":
        b = max(2, int(round(target_cells ** (1 / 6) * 0.9)))
        side = 1 + b + b * b
        n2 = max(2, int(round(target_cells / side**2)) - 1)
        return random_3d(rng, [b, b], [b, b], n2)
    raise ValueError(kind)


def lp_reach_ok(problem: CSPProblem, lo, hi, cells, tol: float = 1e-6) -> bool:
    """Independent attacker (scipy's linprog, every relation): each cell in `cells` can move by
    its levels with every cell inside [lo, hi]. Shares no code with argusqt's audits.

    The same LPs, made small (docs/design.md, D-59): a cell with lo == hi is a number, moved to
    the right-hand side, and a cell's LP keeps only the relations and free cells connected to
    it (the other blocks are feasible at the table's own values, so they cannot move it)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog
    from scipy.sparse.csgraph import connected_components

    a = problem.values
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    m = sp.csr_matrix(problem.relations)
    free = lo < hi
    fixed = np.where(free, 0.0, lo)
    rhs = -(m @ fixed)
    mf = sp.csr_matrix(m[:, np.flatnonzero(free)])
    mf.eliminate_zeros()
    empty = np.diff(mf.indptr) == 0  # relations of numbers only: they must add up already
    scale = np.abs(m) @ np.abs(fixed) + 1.0
    assert np.all(np.abs(rhs[empty]) <= 1e-7 * scale[empty]), "relations without a free cell"
    idx = np.flatnonzero(free)  # free cell k of the small LP is table cell idx[k]
    pos = np.full(a.size, -1)
    pos[idx] = np.arange(idx.size)
    rows, cols = mf.nonzero()
    n_nodes = idx.size + m.shape[0]  # free cells, then relations
    link = sp.coo_matrix((np.ones(rows.size), (cols, rows + idx.size)), shape=(n_nodes, n_nodes))
    _, label = connected_components(link, directed=False)
    blocks: dict[int, tuple] = {}
    for p in cells:
        needs = [(s, n) for s, n in ((1.0, problem.lpl[p]), (-1.0, problem.upl[p])) if n > 0]
        if not needs:
            continue
        if pos[p] < 0:  # a number: it cannot move
            if any(n > tol for _, n in needs):
                return False
            continue
        lab = label[pos[p]]
        if lab not in blocks:
            var = np.flatnonzero(label[: idx.size] == lab)
            row = np.flatnonzero(label[idx.size :] == lab)
            blocks[lab] = (var, row, mf[row][:, var], rhs[row], np.c_[lo[idx[var]], hi[idx[var]]])
        var, row, mb, rb, bounds = blocks[lab]
        k = int(np.searchsorted(var, pos[p]))
        for sense, need in needs:
            c = np.zeros(var.size)
            c[k] = sense
            if row.size:
                r = linprog(c, A_eq=mb, b_eq=rb, bounds=bounds, method="highs")
            else:
                r = linprog(c, bounds=bounds, method="highs")
            assert r.status == 0
            reach = a[p] - r.fun if sense > 0 else -r.fun - a[p]
            if reach < need - tol:
                return False
    return True


def lp_protected(problem: CSPProblem, mask: np.ndarray, tol: float = 1e-6) -> bool:
    """Independent outsider audit: every primary moves by its levels when `mask` is suppressed."""
    a = problem.values
    lo = np.where(mask, problem.lower, a)
    hi = np.where(mask, problem.upper, a)
    return lp_reach_ok(problem, lo, hi, np.flatnonzero(problem.primary), tol)


def lp_publishable(problem: CSPProblem, mask: np.ndarray) -> bool:
    """Independent publication audit. Outsider: every primary moves by its levels. Each
    respondent alone in a suppressed cell, its own cells fixed: every primary not exempt
    for it moves by its levels."""
    from argusqt.protection.audit.insider import respondents_of

    a = problem.values
    tol = problem.tolerance
    lo = np.where(mask, problem.lower, a)
    hi = np.where(mask, problem.upper, a)
    prim = np.flatnonzero(problem.primary)
    if not lp_reach_ok(problem, lo, hi, prim, tol):
        return False
    resp = respondents_of(problem)
    assert resp is not None
    known = resp.known.tocsr()
    exempt = resp.exempt.tocsr()
    for r in range(resp.count):
        own = known.indices[known.indptr[r] : known.indptr[r + 1]]
        if not mask[own].any():
            continue  # knows nothing an outsider does not
        free = np.setdiff1d(prim, exempt.indices[exempt.indptr[r] : exempt.indptr[r + 1]])
        lo_r, hi_r = lo.copy(), hi.copy()
        lo_r[own] = hi_r[own] = a[own]
        if not lp_reach_ok(problem, lo_r, hi_r, free, tol):
            return False
    return True


def mixed_problem(seed: int) -> CSPProblem:
    """A 2-level × 2-level table (odd seeds) or a small 3-D one (even), cost = |value|."""
    rng = np.random.default_rng(seed)
    if seed % 2:
        dims = [hier_codelist("a", [3, 3]), hier_codelist("b", [3, 2])]
        p = random_problem(rng, dims, primary_share=0.2, zero_share=0.05)
    else:
        p = random_3d(rng, [2, 2], [3], 3, primary_share=0.15)
    p.cost = np.abs(p.values)
    return p


def protect_testw(folder, method: str, **params):
    """tau_testW Size × Region | Var2, P(15,1), through the Python API with `method`: the
    table of issue 21's acceptance (`folder` is a copy of the shared tau_testW case)."""
    import argusqt

    return argusqt.protect(
        folder / "tau_testW.asc",
        metadata=folder / "tau_testW.rda",
        explanatory=["Size", "Region"],
        response="Var2",
        rules="P(15,1)",
        method=method,
        params=params or None,
        progress=False,
    )


def patch_cancel_grace(monkeypatch, seconds: float) -> None:
    """Every method's CANCEL_GRACE set to `seconds`: each module imports the constant by name,
    so each module of argusqt.protection (all its rooms) is patched."""
    import importlib
    import pkgutil

    import argusqt.protection

    for info in pkgutil.walk_packages(argusqt.protection.__path__, "argusqt.protection."):
        module = importlib.import_module(info.name)
        if hasattr(module, "CANCEL_GRACE"):
            monkeypatch.setattr(module, "CANCEL_GRACE", seconds)
