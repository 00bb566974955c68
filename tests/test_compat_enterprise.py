"""Compatibility with τ-Argus on the enterprise data: cell values and rule statuses.

Settings of every scenario (shared/data/tauargus/README.md): response turnover, cost
turnover, p% only at holding level (p = 10, n = 1), missing codes safe, zero cells unsafe
with range 10, manual margin 10 %. Secondary statuses (11/12) come from τ-Argus's own
pattern; by the rules those cells are safe (1), so they are compared as 1.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from shared_paths import copy_case

from argusqt.io.codelists import codelist_for
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.model.table import CostSpec, TableSpec
from argusqt.model.tabulate import build_table
from argusqt.rules.classify import apply_rules

pytestmark = pytest.mark.compat

SCENARIOS = {
    "test_1.txt": ("act", "product"),
    "test_2a.txt": ("act", "product"),
    "test_2b.txt": ("act", "region"),
    "test_3a.txt": ("region", "mun"),
}


def _rules() -> SafetyRules:
    return SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )


def _spec(explanatory: tuple[str, ...]) -> TableSpec:
    return TableSpec(
        list(explanatory), "turnover", cost=CostSpec("variable", "turnover"), rules=_rules()
    )


def _expected(path: Path) -> list[tuple[tuple[str, ...], str, int]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return [(tuple(r[:-2]), r[-2], int(r[-1])) for r in rows if r]


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory):
    """Metadata + microdata of a temporary copy of the enterprise folder."""
    dst = copy_case("enterprise", tmp_path_factory.mktemp("compat"))
    meta = read_rda(dst / "example_enterprise.rda")
    data = read_microdata(meta, dst / "example_enterprise.asc")
    return meta, data, dst


def _check(table, expected, decimals=2):
    assert table.n_cells == len(expected), "cell count differs from τ-Argus"
    for cell, (codes, value, status) in enumerate(expected):
        ours = tuple(c.replace('"', "'") for c in table.cell_codes(cell))
        assert ours == codes, f"cell {cell}: codes {ours} vs {codes}"
        if status == 14:
            assert table.status[cell] == 14, f"cell {codes} should be empty"
            continue
        assert f"{table.value[cell]:.{decimals}f}" == value, f"cell {codes}: value"
        rule_status = 1 if status in (11, 12) else status
        assert int(table.status[cell]) == rule_status, (
            f"cell {codes}: status {table.status[cell]} vs τ-Argus {status}"
        )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_enterprise_values_and_primaries(enterprise, name):
    meta, data, folder = enterprise
    table = build_table(meta, data, _spec(SCENARIOS[name]), [], codelist_for=codelist_for)
    apply_rules(table)
    _check(table, _expected(folder / "expected" / name))


def test_enterprise_primary_counts(enterprise):
    meta, data, _ = enterprise
    counts = {}
    for name, dims in [
        ("1", ("act", "product")),
        ("3a", ("region", "mun")),
        ("3b", ("region", "product")),
    ]:
        table = build_table(meta, data, _spec(dims), [], codelist_for=codelist_for)
        apply_rules(table)
        counts[name] = int((table.status == 3).sum())
    assert counts == {"1": 283, "3a": 36, "3b": 17}  # argusqt/docs/rules.md §3.8


def test_enterprise_3b_after_apriori(enterprise):
    """test_3b: region × product after test_3a.hst (ignore errors, expand trivial levels)."""
    from argusqt.io.apriori import apply_apriori

    meta, data, folder = enterprise
    table = build_table(meta, data, _spec(("region", "product")), [], codelist_for=codelist_for)
    apply_rules(table)
    apply_apriori(
        table, folder / "expected" / "test_3a.hst", sep=",", ignore_errors=True, expand_trivial=True
    )
    _check(table, _expected(folder / "expected" / "test_3b.txt"))


def test_grand_total_is_exact(enterprise):
    meta, data, _ = enterprise
    table = build_table(meta, data, _spec(("act", "product")), [], codelist_for=codelist_for)
    turnover = np.asarray(data.column("turnover"), dtype=float)
    assert abs(table.value[0] - np.sum(turnover)) < 0.005
