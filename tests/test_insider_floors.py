"""Insiders who share cells (docs/design.md, D-91): a respondent knows every cell it is in
is at least its contribution; what the methods publish must withstand that too."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from lower_bound_attacker import _bounds, attack
from scipy.optimize import linprog

import argusqt
from argusqt.model.status import Status, is_primary, is_secondary, is_suppressed
from argusqt.protection.audit.insider_floor import floor_audit
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem

# A is primary under P(30,1) (100 − 90 − 5 < 27, level 22); B (25 + 8 + 8) is safe and the
# cheapest partner; the record of 25 knows B ≥ 25, so A can rise by at most 16 < 22
ONE_PARTNER = pd.DataFrame(
    [("A", v) for v in (90, 5, 5)]
    + [("B", v) for v in (25, 8, 8)]
    + [("C", v) for v in (100.0,) * 10]
    + [("D", v) for v in (50.0,) * 10],
    columns=["nace", "turnover"],
)


def _protected(data: pd.DataFrame, method: str, rules: str = "P(30,1)"):
    return argusqt.protect(
        data, explanatory=["nace"], response="turnover", rules=rules, method=method,
        progress=False,
    )[0]  # fmt: skip


def test_the_floors_are_each_records_contribution():
    table = _protected(ONE_PARTNER, "HEUR").table
    problem = CSPProblem.from_table(table)
    fl = problem.floors
    assert fl is not None
    amounts = fl.amount.toarray()
    cell_b = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("B",))
    assert sorted(amounts[:, cell_b][amounts[:, cell_b] > 0].tolist())[-1] == 25.0
    # the record of 90 is the largest of A: A is its own share
    cell_a = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("A",))
    big = np.flatnonzero(amounts[:, cell_a] == 90.0)
    assert big.size and fl.exempt.toarray()[big, cell_a].all()


def test_a_cheap_partner_made_up_by_one_record_is_not_enough():
    """The brief's example: fails on the older model (nobody alone in B)."""
    table = _protected(ONE_PARTNER, "HEUR").table
    problem = CSPProblem.from_table(table)
    a = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("A",))
    b = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("B",))
    total = next(c for c in range(table.n_cells) if table.cell_codes(c) == ("Total",))
    sup = np.zeros(table.n_cells, dtype=bool)
    sup[[a, b]] = True
    assert problem.primary[a] and not problem.primary[b] and not sup[total]
    verdict = publication_audit(problem, sup)
    assert verdict.outsider.ok and not verdict.ok
    found = {(d.cell, d.floors) for d in verdict.disclosures}
    assert any(c == a and dict(f).get(b) == 25.0 for c, f in found)
    # the independent attacker agrees
    status = np.asarray(table.status).copy()
    status[:] = np.where(sup & ~problem.primary, 11, np.where(problem.primary, 3, 1))
    assert {(f.cell, f.side) for f in attack(table, status)} == {(a, "up")}


@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR", "GH"])
def test_the_methods_publish_what_the_shared_cell_insider_cannot_break(method):
    p = _protected(ONE_PARTNER, method)
    assert p.table is not None
    assert attack(p.table) == []


def _random_data(seed: int) -> pd.DataFrame:
    """A skewed 2-D survey: few records per cell, one of them often dominant."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 90))
    a = rng.choice([f"a{i}" for i in range(4)], n)
    r = rng.choice([f"r{i}" for i in range(3)], n)
    x = np.round(rng.lognormal(3.0, 1.5, n), 1)
    return pd.DataFrame({"act": a, "reg": r, "turnover": x})


def secondary_cost_of(seed: int, method: str) -> tuple[float, object]:
    """`_random_data(seed)` protected by `method` (P(15,1)|FREQ(3,20) on act × reg): the
    cost of its secondary cells, and the table (for the tests that compare two settings)."""
    p = argusqt.protect(
        _random_data(seed), explanatory=["act", "reg"], response="turnover",
        rules="P(15,1)|FREQ(3,20)", method=method, progress=False,
    )[0]  # fmt: skip
    secondary = np.isin(np.asarray(p.table.status), [11, 12])
    return float(np.asarray(p.table.cost)[secondary].sum()), p.table


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR"])
def test_an_independent_attacker_finds_nothing_on_what_the_methods_publish(seed, method):
    _, table = secondary_cost_of(seed, method)
    assert attack(table) == []


def test_the_coalition_settles_what_no_respondent_narrows():
    """A pattern where the bounds bite nowhere costs no respondent LP."""
    table = _protected(ONE_PARTNER, "HEUR").table
    problem = CSPProblem.from_table(table)
    sup = is_suppressed(table.status)
    out = floor_audit(problem, sup, problem.floors)
    assert out.disclosures == [] and out.pairs_left == 0


def _outsider_ok(table, status: np.ndarray) -> bool:
    """The outsider's attacker LPs (scipy, the table's relations and a-priori bounds)."""
    v = np.asarray(table.value, dtype=float)
    sup = is_suppressed(status)
    lo, hi = _bounds(table, status)
    lo, hi = np.where(sup, lo, v), np.where(sup, hi, v)
    rel = sp.csr_matrix(table.relations)
    tol = 0.5 * 10.0 ** (-int(table.decimals)) + 1e-7 * max(1.0, float(np.abs(v).max()))
    for p in np.flatnonzero(is_primary(status)):
        for sense, level in ((-1.0, table.upl[p]), (1.0, table.lpl[p])):
            if level <= 0:
                continue
            c = np.zeros(v.size)
            c[p] = sense
            r = linprog(c, A_eq=rel, b_eq=rel @ v, bounds=np.c_[lo, hi], method="highs")
            assert r.status == 0, r.message
            if sense * (r.x[p] - v[p]) > -level + tol:
                return False
    return True


def _cheapest_by_enumeration(table, cost: np.ndarray) -> float:
    """Every pattern in order of cost until the first the outsider and every insider with
    its own contributions (lower_bound_attacker) cannot break: the floor model's optimum."""
    st = np.asarray(table.status)
    base = np.where(is_primary(st) | (st == Status.EMPTY), st, Status.SAFE)
    cand = np.flatnonzero(base == Status.SAFE).tolist()
    subsets = (s for k in range(len(cand) + 1) for s in itertools.combinations(cand, k))
    for c, s in sorted((float(cost[list(s)].sum()), s) for s in subsets):
        status = base.copy()
        status[list(s)] = Status.SECONDARY
        if _outsider_ok(table, status) and attack(table, status) == []:
            return c
    raise AssertionError("no pattern protects the table")


def _small_survey(seed: int) -> pd.DataFrame:
    """3 × 2 activities by regions, 15–30 skewed records: 12 cells, ~10 candidates."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 30))
    a = rng.choice(["a0", "a1", "a2"], n)
    r = rng.choice(["r0", "r1"], n)
    return pd.DataFrame({"act": a, "reg": r, "turnover": np.round(rng.lognormal(3.0, 1.5, n), 1)})


def opt_on_survey(seed: int, monkeypatch=None, **options):  # type: ignore[no-untyped-def]
    """OPT on the seeded survey (with solver `options` when given): (the protected table,
    its cells' costs, its secondaries' cost) — for the tests of OPT's path options."""
    if options:
        from argusqt.protection.suppress import optimal

        solve = optimal.solve_optimal

        def with_options(problem, params=None, *args, **kwargs):  # type: ignore[no-untyped-def]
            given = params.as_dict() if hasattr(params, "as_dict") else dict(params or {})
            return solve(problem, {**given, **options}, *args, **kwargs)

        monkeypatch.setattr(optimal, "solve_optimal", with_options)
    p = argusqt.protect(
        _small_survey(seed),
        explanatory=["act", "reg"],
        response="turnover",
        rules="P(15,1)",
        method="OPT",
        progress=False,
    )[0]
    cost = np.asarray(CSPProblem.from_table(p.table).cost, dtype=float)
    return p, cost, float(cost[is_secondary(np.asarray(p.table.status))].sum())


def assert_enumerated_optimum(p, cost, got) -> float:  # type: ignore[no-untyped-def]
    """OPT's run proved the optimum the enumeration finds, its bound not above it, and the
    independent attacker finds nothing in the published table; the optimum."""
    best = _cheapest_by_enumeration(p.table, cost)
    assert p.result.optimal
    assert got == pytest.approx(best, abs=1e-6)
    if p.result.lower_bound is not None:
        assert p.result.lower_bound <= best + 1e-6
    assert attack(p.table) == []
    return best


@pytest.mark.parametrize(
    ("seed", "optimum", "before"),
    # before: lb18's OPT (the old model's optimum repaired greedily, "not proven optimal")
    [(5, 380.7, 380.7), (9, 202.4, 1185.7), (11, 359.7, 389.3)],
)
def test_opt_proves_the_true_optimum_under_the_floors(seed, optimum, before):
    """OPT's "proven optimal" holds for the floor model: enumerating every pattern with the
    independent attackers gives the same cost (seed 9: 1,185.7 → 202.4, seed 11: 389.3 →
    359.7; the old model's optimum there is 0 and 101.4)."""
    runs = [opt_on_survey(seed) for _ in range(2)]
    p, cost, got = runs[0]
    assert np.array_equal(np.asarray(p.table.status), np.asarray(runs[1][0].table.status))
    assert p.result.optimal and got <= before + 1e-6
    assert got == pytest.approx(optimum, abs=0.01)
    assert got == pytest.approx(_cheapest_by_enumeration(p.table, cost), abs=1e-6)
    assert attack(p.table) == []
