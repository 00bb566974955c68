"""Issue 21 for CTA and RND on real data: tau_testW Size × Region | Var2, P(15,1).

CTA through the API publishes adjusted values whose level estimates (`adjusted ∓ level`) miss
every true value, reproducibly, without the confidential seed in any publishable output; with
the levels as given (τ-Argus) every publishing call refuses, naming the cells. RND with the
base the program proposes publishes rounded values whose rounding intervals cover every
protection interval (an attacker written here, with scipy, from the printed figures).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openpyxl
import pytest
from protect_helpers import lp_reach_ok, protect_testw
from shared_paths import copy_case

from argusqt.errors import PublicationError
from argusqt.protection.core.problem import CSPProblem


@pytest.fixture
def testw(tmp_path) -> Path:
    return copy_case("tau_testW", tmp_path)


def _cta(testw: Path, **params):
    return protect_testw(testw, "CTA", **params)


def _workbook_text(path: Path) -> str:
    book = openpyxl.load_workbook(path)
    return " ".join(
        str(c.value) for ws in book.worksheets for row in ws.iter_rows() for c in row if c.value
    )


def test_api_cta_publishes_adjusted_values_the_level_estimates_miss(testw, tmp_path):
    res = _cta(testw)
    assert res.audit().ok, res.audit().summary()
    table = res.table
    problem = CSPProblem.from_table(table)
    frame = res.publish()
    x = frame["value"].to_numpy(dtype=float, na_value=np.nan)
    x = np.where(np.isnan(x), 0.0, x)  # empty cells print "-"
    a, prim = problem.values, problem.primary
    half = 0.5 * 10.0**-table.decimals
    assert prim.sum() == 9
    assert np.abs(table.relations @ x).max() <= half  # adds up as printed
    assert ((x >= a + problem.upl - half) | (x <= a - problem.lpl + half))[prim].all()
    tol = np.maximum(half, 0.1 * 0.5 * (problem.lpl + problem.upl))
    for est in (x - problem.upl, x + problem.lpl):
        assert (np.abs(est - a) > tol)[prim].all()
    # the confidential seed is in no publishable output, and the run is reproducible
    seed = res.session.protection_seed
    assert seed is not None and res.result.figures["seed"] == seed
    book = res.to_excel(tmp_path / "cta.xlsx")
    assert str(seed) not in _workbook_text(book)
    (csv,) = res.write(tmp_path / "cta.txt", "codevalue")
    assert str(seed) not in csv.read_text(encoding="utf-8")
    again = _cta(testw)
    np.testing.assert_array_equal(again.table.published, table.published)


def test_api_cta_with_levels_as_given_is_refused_by_every_publishing_call(testw, tmp_path):
    res = _cta(testw, levels_as_given=True)
    verdict = res.audit()
    assert not verdict.ok
    reasons = {r for c in verdict.failing_cells for r in verdict.reasons(int(c))}
    assert reasons == {"level estimate"}
    calls = (
        res.publish,
        lambda: res.to_excel(tmp_path / "x.xlsx"),
        lambda: res.to_parquet(tmp_path / "x.parquet"),
        lambda: res.write(tmp_path / "x.txt"),
    )
    name = res.table.cell_codes(int(verdict.failing_cells[0]))
    for call in calls:
        with pytest.raises(PublicationError) as err:
            call()
        assert all(code.strip() in str(err.value) for code in name if code.strip() != "Total")
    assert not list(tmp_path.glob("x*"))


def _rnd_session(testw: Path):
    from argusqt.model.rulespec import PRule, SafetyRules
    from argusqt.model.table import TableSpec
    from argusqt.session import Session

    s = Session()
    s.open_microdata(testw / "tau_testW.asc", testw / "tau_testW.rda")
    rules = SafetyRules(p_individual=[PRule(15, 100, 1)])
    s.specify_table(TableSpec(["Size", "Region"], "Var2", rules=rules))
    s.compute_tables()
    return s


def test_rnd_with_the_proposed_base_covers_every_protection_interval(testw, tmp_path):
    s = _rnd_session(testw)
    facts = s.table_facts(1)
    base = facts.covering_rounding_base
    assert base >= facts.min_rounding_base
    s.protect(1, "RND", {"base": base, "steps": 0})
    frame = s.published_frame(1)
    table = s.table(1)
    problem = CSPProblem.from_table(table)
    x = frame["value"].to_numpy(dtype=float, na_value=np.nan)
    x = np.where(np.isnan(x), 0.0, x)
    a, prim = problem.values, problem.primary
    assert np.allclose(x / base, np.round(x / base))
    unit = 10.0**-table.decimals
    lo = x - base + unit  # the rounding interval, written here (argusqt/docs/methods.md §9)
    hi = x + base - unit
    if np.all(a >= 0):
        lo = np.maximum(lo, 0.0)
    need_lo = np.maximum(a - problem.lpl, 0.0) if np.all(a >= 0) else a - problem.lpl
    assert (lo <= need_lo + 1e-9)[prim].all() and (hi >= a + problem.upl - 1e-9)[prim].all()
    empty = table.status == 14
    lo, hi = np.where(empty, 0.0, lo), np.where(empty, 0.0, hi)
    assert lp_reach_ok(problem, lo, hi, np.flatnonzero(prim & (a - problem.lpl >= 0)), tol=unit)
