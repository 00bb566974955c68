"""Linked MOD and GH on the enterprise data end publishable (docs/design.md, D-51): act × product
and act × region, p% on holdings, on the cover table. The joint problem now carries the
tables' own holdings (merged by holding id, with their exemptions in every table) and gets
the insider repair one table gets; both tables are cleared and written, the joint pattern
passes the test's own outside attacker (a linprog attacker that shares no code with the
method)."""

from __future__ import annotations

import numpy as np
import pytest
from enterprise_linked import linked_enterprise
from protect_helpers import lp_protected

from argusqt.model.status import is_suppressed
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress.linked import build_linked_problem

pytestmark = [pytest.mark.compat, pytest.mark.slow]


@pytest.mark.parametrize("method", ["MOD", "GH"])
def test_linked_method_on_enterprise_is_publishable(method, tmp_path_factory, tmp_path):
    run = linked_enterprise(method, tmp_path_factory)  # the session's one run (D-59)
    s, results = run.session, run.results
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
