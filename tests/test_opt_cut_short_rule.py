"""OPT stopped before its proof with a published pattern the rule on combined cells rejects
(the start pattern, say): that pattern's cost bounds nothing and is not "proven optimal";
on equal costs SCIP's pattern, which passes the rule, is published (review of D-54)."""

from __future__ import annotations

import pytest
from test_opt_combined_rule import _protect

import argusqt.protection.suppress.combined as combined
import argusqt.protection.suppress.optimal as optimal


@pytest.mark.parametrize("seed", [6])  # SCIP stops with a dearer pattern than the start
def test_a_search_cut_short_prints_no_proof_for_a_pattern_the_rule_rejects(monkeypatch, seed):
    seen = []
    solve = optimal.solve_pattern

    def stopped_early(*args, **kwargs):
        kwargs["gap"] = 0.99  # SCIP stops at its first pattern, as a time limit would
        out = solve(*args, **kwargs)
        seen.append(out)
        return out

    monkeypatch.setattr(optimal, "solve_pattern", stopped_early)
    monkeypatch.setattr(combined, "RERUN_SHARE", 2.0)  # the user's limit spent: no rerun
    r = _protect(seed, tiny=seed % 2 == 1, params={"max_minutes": 1})[0].result
    first = seen[0]
    assert not first.optimal and first.bound is not None
    proofs = [line for line in r.log if "proven optimal" in line and "not proven" not in line]
    if not r.optimal:
        assert proofs == []
    else:
        assert r.cost <= r.lower_bound + 1e-6
    # the bound printed is the search's certified one for the problem posed, not lowered to
    # the cost of a pattern that fails the rule
    assert r.lower_bound is not None and r.lower_bound >= first.bound - 1e-6
    assert r.cost >= r.lower_bound - 1e-6
    # a gap printed is that of the final pattern against that bound
    assert r.gap is None or abs(r.gap - (r.cost - r.lower_bound) / r.cost) < 1e-9
