"""MOD's polish without SCIP's heuristics that offer every free cell suppressed (D-84).

`trivial`, `locks` and `shiftandpropagate` build their pattern from the variables' locks
before the root LP; the capacity handler locks every cell against publishing, so all three
offer the pattern with every free cell suppressed, which the polish never keeps. Off (with
rapid learning, which ran where the root then had no incumbent), SCIP no longer offers it,
and MOD's patterns still pass the test's own attackers (scipy's linprog, outsider and each
respondent alone in a suppressed cell: protect_helpers) and its own reading of the (n,k)
rule (test_combined_growth), which share no code with the method."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import lp_publishable
from pyscipopt import Model
from test_combined_growth import _enterprises, _protect, own_unsafe_sums

from argusqt.model.status import is_suppressed
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress import branch_and_cut, modular, scip_plugins


def test_the_named_heuristics_never_run_and_the_others_keep_their_settings():
    off = modular.POLISH_PLUGINS_OFF
    assert "separating/rapidlearning" in off and "heuristics/trivial" in off
    plain = branch_and_cut._scip_model(10.0, 0.0, "default", None)
    model = branch_and_cut._scip_model(10.0, 0.0, "default", None, plugins_off=off)
    for name in off:
        assert model.getParam(f"{name}/freq") == -1
        assert plain.getParam(f"{name}/freq") >= 0
    for name in ("rounding", "simplerounding", "shifting", "farkasdiving", "randrounding"):
        key = f"heuristics/{name}/freq"
        assert model.getParam(key) == plain.getParam(key) == Model().getParam(key)
    for name in ("gomory", "aggregation", "zerohalf"):
        key = f"separating/{name}/freq"
        assert model.getParam(key) == plain.getParam(key) == Model().getParam(key)


def _all_free_candidates(monkeypatch) -> list[int]:
    """Counts, per MOD run, the polish's candidates with every free cell suppressed."""
    seen = [0]
    real = scip_plugins._CapacityHandler.conscheck

    def conscheck(self, constraints, solution, *args, **kw):  # type: ignore[no-untyped-def]
        x = np.round(self._x(solution))
        if self.sep.reuse and self.free_idx.size and bool((x[self.free_idx] > 0.5).all()):
            seen[0] += 1
        return real(self, constraints, solution, *args, **kw)

    monkeypatch.setattr(scip_plugins._CapacityHandler, "conscheck", conscheck)
    return seen


@pytest.mark.parametrize(("seed", "rules"), [(0, "NK(2,80)"), (3, "P(20,1)")])
def test_the_polish_is_offered_no_all_suppressed_pattern_and_stays_publishable(
    seed, rules, monkeypatch
):
    ent = _enterprises(seed)
    seen = _all_free_candidates(monkeypatch)
    monkeypatch.setattr(modular, "POLISH_PLUGINS_OFF", ())
    _protect(ent, "MOD", rules)
    assert seen[0] > 0  # SCIP's own setting offers it (and checks it where the start fails)
    monkeypatch.undo()
    seen = _all_free_candidates(monkeypatch)  # the module's setting
    p = _protect(ent, "MOD", rules)
    assert seen[0] == 0
    t = p.table
    status = np.asarray(t.status)
    problem = CSPProblem.from_table(t, status=np.where(status >= 11, 1, status))
    assert lp_publishable(problem, is_suppressed(status))
    if rules.startswith("NK"):
        assert own_unsafe_sums(t, ent) == []
    assert p.audit().ok
    # counts, not the clock: the same pattern again
    np.testing.assert_array_equal(np.asarray(_protect(ent, "MOD", rules).table.status), status)
