"""Linked MOD and GH on the enterprise data end publishable (docs/design.md, D-51): act × product
and act × region, p% on holdings, on the cover table. The joint problem now carries the
tables' own holdings (merged by holding id, with their exemptions in every table) and gets
the insider repair one table gets; both tables are cleared and written, the joint pattern
passes the test's own outside attacker (a linprog attacker that shares no code with the
method)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from protect_helpers import lp_protected

from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.model.status import is_suppressed
from argusqt.model.table import CostSpec, TableSpec
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress.linked import build_linked_problem
from argusqt.session import Session

pytestmark = [pytest.mark.compat, pytest.mark.slow]


@pytest.mark.parametrize("method", ["MOD", "GH"])
def test_linked_method_on_enterprise_is_publishable(method, shared_data, tmp_path):
    folder = tmp_path / "enterprise"
    shutil.copytree(shared_data / "enterprise", folder)
    s = Session()
    s.open_microdata(folder / "example_enterprise.asc", folder / "example_enterprise.rda")
    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    for ex in (["act", "product"], ["act", "region"]):
        s.specify_table(
            TableSpec(ex, "turnover", cost=CostSpec("variable", "turnover"), rules=rules)
        )
    s.compute_tables()
    results = s.protect_linked(method, {"max_minutes": 2} if method == "MOD" else None)
    for no, res in enumerate(results, start=1):
        assert s.protection_state(no) == "cleared", res.verdict.summary()
        assert res.verdict is not None and res.verdict.ok
    joint, _local, _cover = build_linked_problem([CSPProblem.from_table(t) for t in s.tables])
    assert joint.respondents is not None and joint.respondents.unit == "holding"
    assert lp_protected(joint, is_suppressed(joint.status))  # the test's own attacker
    for no in (1, 2):
        out = tmp_path / f"t{no}.csv"
        s.write_table(no, 3, "", out)
        assert out.exists()
    # one holding, one row: no two rows claim the same cell made up by one holding
    known = joint.respondents.known
    assert int(np.asarray(known.sum(axis=0)).max()) <= 1
