"""Controlled rounding against the example of argusqt/docs/methods.md §9, exhaustive search and
an independent MILP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from argusqt.errors import MethodError
from argusqt.model.codelist import CodeList
from argusqt.model.table import build_relations
from argusqt.progress import CancelToken
from argusqt.protection.adjust.rounding import existence_interval, minimum_base, solve_rounding
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.rounding_base import k_domain


def aggregation(dim: CodeList) -> np.ndarray:
    """nodes × leaves 0/1 matrix: which leaves each node adds up (written for the test)."""
    leaves = np.flatnonzero(dim.is_leaf)
    agg = np.zeros((len(dim), leaves.size))
    for j, leaf in enumerate(leaves):
        node = int(leaf)
        while node >= 0:
            agg[node, j] = 1.0
            node = int(dim.parent[node])
    return agg


def table_problem(inner: np.ndarray, dims: list[CodeList] | None = None, **kw) -> CSPProblem:
    """A 2-D problem whose totals are computed from the inner (leaf) cells."""
    inner = np.asarray(inner, dtype=float)
    if dims is None:
        r, c = inner.shape
        dims = [
            CodeList.flat("row", [f"r{i}" for i in range(r)]),
            CodeList.flat("col", [f"c{j}" for j in range(c)]),
        ]
    full = aggregation(dims[0]) @ inner @ aggregation(dims[1]).T
    values = full.ravel()
    n = values.size
    rel = build_relations(dims)
    status = kw.pop("status", np.where(values > 0, 1, 1)).astype(np.int16)
    return CSPProblem(
        values=values,
        lower=np.zeros(n),
        upper=np.full(n, 1.5 * values.max() + 1),
        cost=np.ones(n),
        status=status,
        lpl=kw.pop("lpl", np.zeros(n)),
        upl=kw.pop("upl", np.zeros(n)),
        relations=rel,
        rhs=np.zeros(rel.shape[0]),
        dims=dims,
        **kw,
    )


E12 = [[3, 9, 8], [2, 5, 9]]


def assert_valid(problem: CSPProblem, published: np.ndarray, base: int) -> None:
    """Every value a multiple of the base and every relation exact."""
    assert np.all(np.abs(published / base - np.round(published / base)) < 1e-9)
    assert np.abs(problem.relations @ published).max(initial=0.0) < 1e-9


def test_e12_optimum_unique_table():
    p = table_problem(E12)
    res = solve_rounding(p, {"base": 5})
    assert res.cost == pytest.approx(14.0)
    assert res.optimal and res.gap == pytest.approx(0.0)
    expected = np.array([[35, 5, 15, 15], [20, 5, 10, 5], [15, 0, 5, 10]], dtype=float)
    np.testing.assert_array_equal(res.published.reshape(3, 4), expected)
    assert_valid(p, res.published, 5)
    assert res.figures["rapid_distance"] == pytest.approx(22.0)
    assert res.method == "RND"


def test_e12_exhaustive_four_solutions_next_best_18():
    p = table_problem(E12)
    costs = sorted(exhaustive_costs(p, 5))
    assert len(costs) == 4
    assert costs[:2] == [14.0, 18.0]


def test_e12_k1_same_optimum_without_zero_restriction_preference():
    p = table_problem(E12)
    for prefer in (True, False):
        res = solve_rounding(p, {"base": 5, "steps": 1, "prefer_zero_restricted": prefer})
        assert res.cost == pytest.approx(14.0)
        assert_valid(p, res.published, 5)


def test_e12_rapid():
    p = table_problem(E12)
    res = solve_rounding(p, {"base": 5, "stop_rule": 1})
    expected = np.array([[40, 5, 15, 20], [25, 5, 10, 10], [15, 0, 5, 10]], dtype=float)
    np.testing.assert_array_equal(res.published.reshape(3, 4), expected)
    assert res.cost == pytest.approx(22.0)
    assert_valid(p, res.published, 5)
    lo = res.figures["existence_lower"].reshape(3, 4)
    hi = res.figures["existence_upper"].reshape(3, 4)
    assert np.isnan(lo[0]).all() and np.isnan(lo[:, 0]).all()  # totals: no known interval
    np.testing.assert_array_equal(lo[1:, 1:], [[2.5, 7.5, 7.5], [0, 2.5, 7.5]])
    np.testing.assert_array_equal(hi[1:, 1:], [[7.5, 12.5, 12.5], [2.5, 7.5, 12.5]])


def test_e12_first_feasible_is_valid():
    p = table_problem(E12)
    res = solve_rounding(p, {"base": 5, "stop_rule": 2})
    assert_valid(p, res.published, 5)
    assert res.cost in exhaustive_costs(p, 5)


def test_small_checks():
    p = table_problem([[3, 7], [6, 4]])
    res = solve_rounding(p, {"base": 5})
    np.testing.assert_array_equal(
        res.published.reshape(3, 3), [[20, 10, 10], [10, 5, 5], [10, 5, 5]]
    )
    assert res.cost == pytest.approx(8.0)
    p = table_problem([[2, 2], [2, 2]])
    res = solve_rounding(p, {"base": 5})
    assert res.cost == pytest.approx(16.0)
    inner = res.published.reshape(3, 3)[1:, 1:]
    assert inner.tolist() in ([[5, 0], [0, 5]], [[0, 5], [5, 0]])
    assert sorted(exhaustive_costs(p, 5)).count(16.0) == 2


def test_existence_intervals():
    lo, hi = existence_interval(np.array([0.0, 15.0]), 5, 0)
    np.testing.assert_array_equal(lo, [0, 11])
    np.testing.assert_array_equal(hi, [4, 19])
    lo, hi = existence_interval(np.array([15.0, 5.0]), 5, 1)
    np.testing.assert_array_equal(lo, [6, 0])
    # 5 with one step can come from 12 (floor 10, one step down): [0, 14], not [0, 9]
    np.testing.assert_array_equal(hi, [24, 14])
    kmin, kmax = k_domain(np.array([12.0, 14.0, 15.0]), 5, 1)
    np.testing.assert_array_equal(kmin, [1, 1, 2])
    np.testing.assert_array_equal(kmax, [4, 4, 4])
    res = solve_rounding(table_problem(E12), {"base": 5})
    lo, hi = res.figures["existence_lower"], res.figures["existence_upper"]
    z = table_problem(E12).values
    assert np.all((lo <= z) & (z <= hi))


def test_minimum_base():
    n = 12
    lpl = np.zeros(n)
    upl = np.zeros(n)
    status = np.ones(n, dtype=np.int16)
    status[5], lpl[5], upl[5] = 3, 2.0, 2.0
    status[6], lpl[6], upl[6] = 5, 3.0, 3.0
    p = table_problem(E12, status=status, lpl=lpl, upl=upl)
    assert minimum_base(p) == 6
    assert minimum_base(p, min_frequency=3) == 3
    assert minimum_base(p, min_frequency=3, frequency_table=False) == 6
    p.freq = p.values * 0 + 4  # frequencies differ from the values: a magnitude table
    assert minimum_base(p, min_frequency=3) == 6
    p.freq = p.values.copy()
    assert minimum_base(p, min_frequency=3) == 3
    p.freq = None
    with pytest.raises(MethodError, match="minimum base 6"):
        solve_rounding(p, {"base": 5})
    assert solve_rounding(p, {"base": 5, "min_base": 3}).cost == pytest.approx(14.0)
    with pytest.raises(MethodError, match="whole number"):
        solve_rounding(p, {"base": 2.5, "min_base": 1})


def odd_cycle_problem() -> CSPProblem:
    """t1 = a + b, t2 = b + c, t3 = c + a with a = b = c = 5, base 10: no zero-restricted rounding."""
    values = np.array([5.0, 5.0, 5.0, 10.0, 10.0, 10.0])
    rows = [[3, 0, 1], [4, 1, 2], [5, 2, 0]]
    data, ri, ci = [], [], []
    for r, (t, x, y) in enumerate(rows):
        data += [-1.0, 1.0, 1.0]
        ri += [r, r, r]
        ci += [t, x, y]
    rel = sp.csr_matrix((data, (ri, ci)), shape=(3, 6))
    n = 6
    return CSPProblem(
        values=values,
        lower=np.zeros(n),
        upper=np.full(n, 100.0),
        cost=np.ones(n),
        status=np.ones(n, dtype=np.int16),
        lpl=np.zeros(n),
        upl=np.zeros(n),
        relations=rel,
        rhs=np.zeros(3),
    )


def test_zero_restricted_infeasible_says_steps_1():
    p = odd_cycle_problem()
    with pytest.raises(MethodError, match="steps = 1"):
        solve_rounding(p, {"base": 10})
    res = solve_rounding(p, {"base": 10, "steps": 1})
    assert res.cost == pytest.approx(25.0)
    assert not res.figures["zero_restricted"]
    assert_valid(p, res.published, 10)


def test_empty_cells_stay_zero():
    inner = np.array([[0.0, 7.0], [4.0, 0.0]])
    p = table_problem(inner)
    status = np.where(p.values == 0, 14, 1).astype(np.int16)
    p.status = status
    res = solve_rounding(p, {"base": 5, "steps": 1, "prefer_zero_restricted": False})
    assert np.all(res.published[status == 14] == 0)
    assert_valid(p, res.published, 5)


def test_cancel_before_start_returns_rapid():
    token = CancelToken()
    token.cancel()
    res = solve_rounding(table_problem(E12), {"base": 5}, cancel=token)
    assert res.cancelled and res.figures["rapid_fallback"]
    assert res.cost == pytest.approx(22.0)


def test_progress_events_are_sent():
    events = []
    rng = np.random.default_rng(3)
    solve_rounding(table_problem(rng.integers(0, 30, (8, 8))), {"base": 5}, progress=events.append)
    assert events and events[-1].elapsed is not None


# ---------------------------------------------------------------------- oracles
def exhaustive_costs(problem: CSPProblem, base: int) -> list[float]:
    """Distances of all zero-restricted additive roundings of a 2-D table (inner choices)."""
    dims = problem.dims
    r, c = len(dims[0]) - 1, len(dims[1]) - 1
    z = problem.values.reshape(r + 1, c + 1)
    inner = z[1:, 1:]
    lo = np.floor(inner / base) * base
    choices = [
        (lo[i, j],) if inner[i, j] % base == 0 else (lo[i, j], lo[i, j] + base)
        for i in range(r)
        for j in range(c)
    ]
    out = []
    for combo in itertools.product(*choices):
        a_in = np.array(combo).reshape(r, c)
        full = np.zeros_like(z)
        full[1:, 1:] = a_in
        full[0, 1:] = a_in.sum(0)
        full[1:, 0] = a_in.sum(1)
        full[0, 0] = a_in.sum()
        # every total must be an allowed zero-restricted value of its original
        tot = np.ones_like(z, dtype=bool)
        tot[1:, 1:] = False
        zt, at = z[tot], full[tot]
        fl = np.floor(zt / base) * base
        ok = np.where(zt % base == 0, at == zt, (at == fl) | (at == fl + base))
        if ok.all():
            out.append(float(np.abs(full - z).sum()))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_random_small_tables_match_exhaustive(seed):
    rng = np.random.default_rng(seed)
    r, c = [(2, 3), (3, 3), (2, 4), (3, 4)][seed % 4]
    p = table_problem(rng.integers(0, 25, (r, c)))
    assert p.n_cells <= 20
    costs = exhaustive_costs(p, 5)
    res = solve_rounding(p, {"base": 5})
    assert res.cost == pytest.approx(min(costs))
    assert_valid(p, res.published, 5)


def region_codelist() -> CodeList:
    """18 nodes: total, 3 regions, 14 leaves (like tau_testW's Region hierarchy)."""
    entries = []
    leaves = iter(range(1, 15))
    for reg, k in (("N", 5), ("O", 5), ("W", 4)):
        entries.append((1, reg))
        entries += [(2, f"{next(leaves):02d}") for _ in range(k)]
    return CodeList.from_tree("Region", entries)


def independent_milp(problem: CSPProblem, base: int) -> float:
    """Zero-restricted rounding as scipy MILP: k integer in its two multiples, d ≥ |z − b k|."""
    z = problem.values
    n = z.size
    fl = np.floor(z / base)
    mult = np.isclose(z / base, np.round(z / base))
    klo = np.where(mult, np.round(z / base), fl)
    khi = np.where(mult, np.round(z / base), fl + 1)
    # variables [k (n), d (n)]
    c = np.concatenate([np.zeros(n), np.ones(n)])
    eye = sp.identity(n, format="csr")
    rel = problem.relations
    cons = [
        LinearConstraint(sp.hstack([rel, sp.csr_matrix(rel.shape)]), 0, 0),
        LinearConstraint(sp.hstack([base * eye, eye]), z, np.inf),  # d ≥ z − b k
        LinearConstraint(sp.hstack([-base * eye, eye]), -z, np.inf),  # d ≥ b k − z
    ]
    integrality = np.concatenate([np.ones(n), np.zeros(n)])
    bounds = Bounds(np.concatenate([klo, np.zeros(n)]), np.concatenate([khi, np.full(n, np.inf)]))
    res = milp(c, constraints=cons, integrality=integrality, bounds=bounds)
    assert res.status == 0
    return float(res.fun)


def test_162_cell_hierarchical_table_matches_independent_milp():
    size = CodeList.flat("Size", [str(i) for i in range(1, 9)])
    region = region_codelist()
    assert (len(size), len(region)) == (9, 18)
    rng = np.random.default_rng(42)
    inner = rng.poisson(6.0, (8, 14)).astype(float)
    p = table_problem(inner, [size, region])
    assert p.n_cells == 162
    res = solve_rounding(p, {"base": 5})
    assert_valid(p, res.published, 5)
    assert res.optimal
    assert res.cost == pytest.approx(independent_milp(p, 5), abs=1e-6)
    # zero-restricted: every value is one of its two adjacent multiples
    assert np.all(np.abs(res.published - p.values) < 5)


def test_partitions_valid_and_totals_by_addition():
    size = CodeList.flat("Size", [str(i) for i in range(1, 5)])
    region = region_codelist()
    rng = np.random.default_rng(7)
    p = table_problem(rng.poisson(6.0, (4, 14)).astype(float), [size, region])
    whole = solve_rounding(p, {"base": 5})
    parts = solve_rounding(p, {"base": 5, "partitions": 1})
    assert parts.figures["n_parts"] == 4
    assert_valid(p, parts.published, 5)
    assert parts.cost >= whole.cost - 1e-9


def test_cancel_during_solve_returns_a_valid_table():
    token = CancelToken()
    rng = np.random.default_rng(11)
    p = table_problem(rng.integers(0, 40, (30, 30)))

    def on_event(event):
        token.cancel()

    res = solve_rounding(p, {"base": 5}, progress=on_event, cancel=token)
    assert res.cancelled
    assert_valid(p, res.published, 5)
    if res.figures["rapid_fallback"]:
        assert res.cost == pytest.approx(res.figures["rapid_distance"])


def k_step_domain(z: float, base: int, k: int) -> set[float]:
    """argusqt/docs/methods.md §9: multiples max(0, u + j)·b, j = −K..K (z a multiple) or
    −K..K+1."""
    u = z // base
    top = k if z % base == 0 else k + 1
    return {max(0.0, u + j) * base for j in range(-k, top + 1)}


@pytest.mark.parametrize("seed", range(5))
def test_k1_matches_exhaustive_search(seed):
    rng = np.random.default_rng(200 + seed)
    r, c = (2, 2) if seed % 2 else (2, 3)
    p = table_problem(rng.integers(0, 14, (r, c)))
    z = p.values.reshape(r + 1, c + 1)
    inner = z[1:, 1:].ravel()
    best = np.inf
    for combo in itertools.product(*[sorted(k_step_domain(v, 5, 1)) for v in inner]):
        a_in = np.array(combo).reshape(r, c)
        full = np.zeros_like(z)
        full[1:, 1:] = a_in
        full[0, 1:] = a_in.sum(0)
        full[1:, 0] = a_in.sum(1)
        full[0, 0] = a_in.sum()
        tot = [(0, j) for j in range(c + 1)] + [(i, 0) for i in range(1, r + 1)]
        if all(full[t] in k_step_domain(z[t], 5, 1) for t in tot):
            best = min(best, float(np.abs(full - z).sum()))
    res = solve_rounding(p, {"base": 5, "steps": 1, "prefer_zero_restricted": False})
    assert res.cost == pytest.approx(best)
    assert_valid(p, res.published, 5)
    for v, a in zip(p.values, res.published, strict=True):
        assert a in k_step_domain(v, 5, 1)


def test_magnitude_table_with_decimals_and_a_negative_cell():
    rng = np.random.default_rng(5)
    inner = np.round(rng.lognormal(6, 1, (5, 6)), 2)
    inner[0, 0] = -35.5
    p = table_problem(inner)
    p.decimals = 2
    res = solve_rounding(p, {"base": 100})
    assert_valid(p, res.published, 100)
    assert res.cost == pytest.approx(independent_milp(p, 100), abs=1e-6)
    lo, hi = res.figures["existence_lower"], res.figures["existence_upper"]
    assert np.all((lo <= p.values) & (p.values <= hi))
    assert lo.min() < 0  # no clamp at 0 when the table has negative values
