"""The rule on combined cells (US#160) with respondents sharing cells attacked (docs/design.md
D-91, fl19): the 24 older combined-cells tests run without the floors because their dominated
sum dissolves under them. Here the two largest enterprises sit in two different primaries, so
the primaries protect one another against every respondent while their sum, known from the
published section total, stays dominated: only the rule adds the division that dilutes it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lower_bound_attacker import attack
from protect_helpers import lp_protected

import argusqt
from argusqt.model.status import is_suppressed
from argusqt.protection.core.problem import CSPProblem
from argusqt.rules.combined import combined_disclosures

#: turnover per enterprise and division: B05, B06, B07 unsafe by NK(2,80); 1000 + 900 make
#: 86 % of their sum 2210; B09 (cheapest) leaves it at 85 %, B08 brings it to 57 %
ENTERPRISES = {
    "B05": [1000, 10],
    "B06": [900, 10],
    "B07": [150, 140],
    "B08": [300, 290, 280, 270],
    "B09": [5] * 6,
    "C10": [300, 290, 280, 270],
    "C11": [200, 190, 180, 170],
}
SECTIONS = {k: k[0] for k in ENTERPRISES}


def _frame() -> pd.DataFrame:
    rows = [(d, v, "NS"[i % 2]) for d, vs in ENTERPRISES.items() for i, v in enumerate(vs)]
    return pd.DataFrame(rows, columns=["nace", "turnover", "region"])


def _protect(method: str, dims: list[str], rules: str = "NK(2,80)"):
    return argusqt.protect(_frame(), explanatory=dims, response="turnover", rules=rules,
                           hierarchies={"nace": SECTIONS}, method=method, progress=False)[0]  # fmt: skip


def own_dominated_sums(table) -> list[set[str]]:
    """The test's own reading of NK(2,80) on sums (no argusqt.rules code), nace alone: per
    published section or grand total, the union of its suppressed parts (two or more)."""
    codes = [table.cell_codes(c)[0].strip() for c in range(table.n_cells)]
    hidden = {c for c, s in zip(codes, is_suppressed(np.asarray(table.status)), strict=True) if s}
    contrib = {d: list(v) for d, v in ENTERPRISES.items()}
    groups = {s: [d for d in ENTERPRISES if d[0] == s] for s in "BC"}
    for s, parts in groups.items():
        contrib[s] = [v for d in parts for v in ENTERPRISES[d]]
    groups["Total"] = ["B", "C"]
    bad = []
    for total, parts in groups.items():
        inside = [p for p in parts if p in hidden]
        if total in hidden or len(inside) < 2:
            continue
        values = sorted((v for p in inside for v in contrib[p]), reverse=True)
        if 100 * sum(values[:2]) > 80 * sum(values):
            bad.append(set(inside))
    return bad


def _dominated(table) -> list:
    """argusqt's reading of the rule on the table's pattern, with the rule switched on."""
    rules = table.spec.rules
    on, rules.combined = rules.combined, True
    try:
        return combined_disclosures(table, is_suppressed(np.asarray(table.status)))
    finally:
        rules.combined = on


@pytest.mark.parametrize("dims", [["nace"], ["nace", "region"]], ids=["nace", "nace-region"])
@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR", "GH"])
def test_the_rule_and_the_floors_together_publish_a_safe_pattern(method, dims):
    without = _protect(method, dims, "NK(2,80)|COMB(0)")
    t0 = without.table
    assert CSPProblem.from_table(t0).floors is not None  # respondents sharing cells attack
    assert attack(t0) == [] and without.audit().ok  # the floors alone are satisfied ...
    assert _dominated(t0)  # ... and leave B05 + B06 + B07 dominated: the rule's case
    if dims == ["nace"]:
        assert own_dominated_sums(t0) == [{"B05", "B06", "B07"}]

    p = _protect(method, dims)
    t = p.table
    sup = is_suppressed(np.asarray(t.status))
    assert attack(t) == []  # no respondent, alone or sharing a cell, narrows a primary
    assert lp_protected(CSPProblem.from_table(t), sup)  # nor the outsider
    assert _dominated(t) == []
    if dims == ["nace"]:
        assert own_dominated_sums(t) == []
        codes = [t.cell_codes(c)[0].strip() for c in range(t.n_cells)]
        assert sorted(c for c, s in zip(codes, sup, strict=True) if s) == [
            "B05", "B06", "B07", "B08"]  # fmt: skip
    assert p.audit().ok
    assert p.result.cost > without.result.cost  # what the rule costs, nothing refused
