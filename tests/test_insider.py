"""Insider audit on τ-Argus's enterprise data (holdings): our MOD patterns and τ-Argus's own.

Settings as test_compat_enterprise (holding-level P(10,1), cost = turnover). MOD(1,1,1,1,1):
one minute per subtable and the three singleton options on, as in τ-Argus's test_3a/test_3b.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from shared_paths import copy_case

from argusqt.io.apriori import apply_apriori
from argusqt.io.codelists import codelist_for
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.model.status import is_secondary, is_suppressed
from argusqt.model.table import CostSpec, TableSpec
from argusqt.model.tabulate import build_table
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.run import run_method
from argusqt.rules.classify import apply_rules
from argusqt.rules.cost import compute_cost

pytestmark = pytest.mark.compat

MOD_11111 = {
    "max_minutes": 1,
    "max_time_per_subtable": 60.0,
    "singleton_singleton": 1,
    "singleton_multiple": 1,
    "min_freq_option": 1,
}
#: τ-Argus's cost (Σ turnover of its secondaries) in its expected files
TAU_COST = {"test_3a": 37591.05, "test_3b": 12175.61}


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory):
    dst = copy_case("enterprise", tmp_path_factory.mktemp("insider"))
    meta = read_rda(dst / "example_enterprise.rda")
    return meta, read_microdata(meta, dst / "example_enterprise.asc"), dst


def _table(enterprise, dims, apriori=False):
    meta, data, folder = enterprise
    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    spec = TableSpec(list(dims), "turnover", cost=CostSpec("variable", "turnover"), rules=rules)
    t = build_table(meta, data, spec, [], codelist_for=codelist_for)
    apply_rules(t)
    compute_cost(t)
    if apriori:
        hst = folder / "expected" / "test_3a.hst"
        apply_apriori(t, hst, sep=",", ignore_errors=True, expand_trivial=True)
    return t


def _tau_status(enterprise, name):
    with (enterprise[2] / "expected" / f"{name}.txt").open(newline="") as f:
        return np.array([int(r[-1]) for r in csv.reader(f) if r])


SCENARIOS = {
    "test_3a": (("region", "mun"), False),
    "test_3b": (("region", "product"), True),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_mod_11111_has_no_insider_disclosure(enterprise, name):
    dims, apriori = SCENARIOS[name]
    t = _table(enterprise, dims, apriori)
    problem = CSPProblem.from_table(t)
    assert problem.respondents is not None and problem.respondents.unit == "holding"
    res = run_method(problem, "MOD", MOD_11111)
    verdict = publication_audit(problem, is_suppressed(res.status))
    assert verdict.ok, verdict.summary()
    assert not [d for d in verdict.disclosures if d.reason == "insider"]
    assert verdict.insiders_checked > 0  # holdings alone in a suppressed cell were attacked
    cost = float(np.asarray(t.value)[is_secondary(res.status)].sum())
    print(f"{name}: MOD(1,1,1,1,1) cost {cost:,.2f} (τ-Argus {TAU_COST[name]:,.2f})")
    assert cost == pytest.approx(res.cost)


@pytest.mark.parametrize(
    "name, dims, apriori",
    [
        ("test_3a", ("region", "mun"), False),
        ("test_3b", ("region", "product"), True),
        ("test_1", ("act", "product"), False),
    ],
)
def test_tauargus_own_patterns_pass_the_insider_audit(enterprise, name, dims, apriori):
    t = _table(enterprise, dims, apriori)
    status = _tau_status(enterprise, name)
    verdict = publication_audit(CSPProblem.from_table(t), is_suppressed(status))
    assert verdict.ok, verdict.summary()
    assert verdict.insiders_checked > 0


def test_record_count_singletons_leave_the_issue_s_disclosure(enterprise):
    """Singleton options counting records (the old behaviour) let the holding alone in
    (Total, 180) recompute (Total, 149) = 3,281.14 exactly; the insider audit finds it."""
    from argusqt.protection.suppress.modular import solve_modular

    t = _table(enterprise, ("region", "mun"))
    problem = CSPProblem.from_table(t)
    by_records = CSPProblem.from_table(t)
    by_records.freq = np.asarray(t.freq, dtype=float)
    res = solve_modular(by_records, {"singleton_singleton": True, "singleton_multiple": True})
    verdict = publication_audit(problem, is_suppressed(res.status))
    assert verdict.outsider.ok and not verdict.ok
    named = {t.cell_codes(d.cell): d for d in verdict.disclosures}
    d = named[("Total", "149")]
    assert d.reason == "insider" and d.lower == pytest.approx(3281.14) == d.upper
    assert ("Total", "180") in {t.cell_codes(c) for c in d.known_cells}
