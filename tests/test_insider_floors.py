"""Insiders who share cells (docs/design.md, D-91): a respondent knows every cell it is in
is at least its contribution; what the methods publish must withstand that too."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lower_bound_attacker import attack

import argusqt
from argusqt.model.status import is_suppressed
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


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR"])
def test_an_independent_attacker_finds_nothing_on_what_the_methods_publish(seed, method):
    data = _random_data(seed)
    p = argusqt.protect(
        data, explanatory=["act", "reg"], response="turnover", rules="P(15,1)|FREQ(3,20)",
        method=method, progress=False,
    )[0]  # fmt: skip
    assert attack(p.table) == []


def test_the_coalition_settles_what_no_respondent_narrows():
    """A pattern where the bounds bite nowhere costs no respondent LP."""
    table = _protected(ONE_PARTNER, "HEUR").table
    problem = CSPProblem.from_table(table)
    sup = is_suppressed(table.status)
    out = floor_audit(problem, sup, problem.floors)
    assert out.disclosures == [] and out.pairs_left == 0
