"""Issue 27 item 2 (US#160): the primary rules on sums of suppressed cells the published
table determines — in the audit (every door) and in every suppression method's choice of
secondaries. The US#160 scenario rebuilt as synthetic data: section B with divisions
B05–B09, three of them unsafe by NK(2,80); their sum is known from the published section
total, and one enterprise still dominates it."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

import argusqt
from argusqt.errors import PublicationError, SpecificationError
from argusqt.model.status import is_suppressed
from argusqt.progress import CancelToken
from argusqt.protection.audit.disclosure import face_verdict, result_face
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.result import ProtectionResult
from argusqt.protection.suppress.combined import protect_combined
from argusqt.rules.combined import combined_disclosures, sum_failures
from argusqt.rules.parse import format_safety_rule, parse_safety_rule

#: enterprises' turnover per NACE division (one record each)
ENTERPRISES = {
    "B05": [2000, 50, 30],
    "B06": [400, 40],
    "B07": [300, 20, 10],
    "B08": [500, 480, 470, 460],
    "B09": [10] * 6,
    "C10": [300, 290, 280, 270],
    "C11": [200, 190, 180, 170],
}
MICRODATA = pd.DataFrame(
    [(k, v) for k, vs in ENTERPRISES.items() for v in vs], columns=["nace", "turnover"]
)
SECTIONS = {k: k[0] for k in ENTERPRISES}


def protect(method: str, rules: str = "NK(2,80)"):
    return argusqt.protect(
        MICRODATA,
        explanatory=["nace"],
        response="turnover",
        rules=rules,
        hierarchies={"nace": SECTIONS},
        method=method,
        progress=False,
    )[0]


def _codes(table) -> list[str]:
    return [table.cell_codes(c)[0].strip() for c in range(table.n_cells)]


def independent_unsafe_sums(table, n: int = 2, k: float = 80.0) -> list[set[str]]:
    """The test's own attacker: for each published section total (and the grand total),
    the sum of its suppressed parts is known; from the microdata, does the (n,k) rule fail
    on it? Shares no code with argusqt.rules.combined."""
    codes = _codes(table)
    sup = {c for c, s in zip(codes, is_suppressed(np.asarray(table.status)), strict=True) if s}
    groups = {"B": [c for c in ENTERPRISES if c[0] == "B"],
              "C": [c for c in ENTERPRISES if c[0] == "C"], "Total": ["B", "C"]}  # fmt: skip
    contrib = {c: list(v) for c, v in ENTERPRISES.items()}
    contrib["B"] = [v for c in groups["B"] for v in ENTERPRISES[c]]
    contrib["C"] = [v for c in groups["C"] for v in ENTERPRISES[c]]
    bad = []
    for total, parts in groups.items():
        hidden = [p for p in parts if p in sup]
        if total in sup or len(hidden) < 2:
            continue
        values = sorted((v for p in hidden for v in contrib[p]), reverse=True)
        if 100 * sum(values[:n]) > k * sum(values):
            bad.append(set(hidden))
    return bad


@pytest.mark.usefixtures("older_insiders")
def test_the_scenario_without_the_rule_leaves_a_dominated_sum():
    t = protect("HEUR", "NK(2,80)|COMB(0)").table
    codes = _codes(t)
    status = dict(zip(codes, np.asarray(t.status).tolist(), strict=True))
    assert [c for c, s in status.items() if s == 3] == ["B05", "B06", "B07"]
    assert status["B08"] == 1 and status["B09"] == 1 and status["B"] == 1
    assert independent_unsafe_sums(t) == [{"B05", "B06", "B07"}]
    t.spec.rules.combined = True
    found = combined_disclosures(t, is_suppressed(t.status))
    assert [[codes[c] for c in f.cells] for f in found] == [["B05", "B06", "B07"]]
    assert found[0].causes == ("D2",) and found[0].value == 2850
    # (2000 + 400) / 2850 = 84 %; with B09 still 82.5 %; with B08 50.4 %
    b08, b09 = codes.index("B08"), codes.index("B09")
    assert sum_failures(t, np.r_[list(found[0].cells), b09])[0] == ["D2"]
    assert sum_failures(t, np.r_[list(found[0].cells), b08])[0] == []


@pytest.mark.usefixtures("older_insiders")
@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR", "GH"])
def test_every_method_suppresses_the_division_that_dilutes_the_sum(method):
    """B09 is the cheapest secondary but leaves the sum dominated; every method takes B08."""
    p = protect(method)
    t = p.table
    status = dict(zip(_codes(t), np.asarray(t.status).tolist(), strict=True))
    assert status["B08"] == 11 and status["B09"] == 1
    assert independent_unsafe_sums(t) == []
    assert p.audit().ok
    # OPT keeps the rule inside its branch-and-cut (D-53), MOD inside its whole-table one
    # when its modular pattern fails it (D-58); the others repair after the run
    said = "no-goods of sums" if method == "OPT" else "Rule on combined cells"
    assert any(said in e.message for e in p.session.log)


@pytest.mark.usefixtures("older_insiders")
def test_the_audit_refuses_the_pattern_without_the_rule_through_every_door(tmp_path):
    """A table protected with COMB(0), then audited with the rule on: the publication gate
    (Excel, CSV, API publish) refuses it, and the audit report names the cells."""
    p = protect("HEUR", "NK(2,80)|COMB(0)")
    assert p.audit().ok  # with the rule off, nothing to say
    p.table.spec.rules.combined = True
    p.table.cleared_print = None  # the rules changed: a new verdict is due
    verdict = p.audit()
    assert not verdict.ok
    assert {d.reason for d in verdict.disclosures} == {"combined"}
    assert sorted(p.table.cell_codes(d.cell)[0] for d in verdict.disclosures) == [
        "B05",
        "B06",
        "B07",
    ]
    with pytest.raises(PublicationError, match="combined"):
        p.publish()
    report = p.session.audit_report(1)
    assert not report.ok
    assert sum("DISCLOSED (combined)" in line for line in report.log_lines()) == 3


@pytest.mark.usefixtures("older_insiders")
def test_p_rule_sums_too():
    """p% (p = 30): in the sum B05 + B06 + B07 the second largest (400) estimates the
    largest (2000) within 30 %: the remainder 450 is below 600."""
    t = protect("HEUR", "P(30,1)|COMB(0)").table
    t.spec.rules.combined = True
    found = combined_disclosures(t, is_suppressed(t.status))
    assert found and "P1" in found[0].causes
    t2 = protect("HEUR", "P(30,1)").table
    assert combined_disclosures(t2, is_suppressed(t2.status)) == []


def test_comb_syntax():
    assert parse_safety_rule("NK(2,80)").combined is None  # the default: on with NK or P
    r = parse_safety_rule("NK(2,80)|COMB(0)")
    assert r.combined is False and format_safety_rule(r) == "NK(2,80)|COMB(0)"
    assert parse_safety_rule(format_safety_rule(r)) == r
    with pytest.raises(SpecificationError, match="0 \\(off\\) or 1 \\(on\\)"):
        parse_safety_rule("COMB(2)")


@pytest.mark.usefixtures("older_insiders")
def test_linked_tables_get_the_rule_too():
    """nace and nace × size protected together (batch table 0): without the rule linked OPT
    leaves B05 + B06 + B07 dominated; with it table 1 suppresses B08."""
    sizes = ["S" if n[0] == "B" else ("L" if i % 2 else "S")
             for i, n in enumerate(MICRODATA["nace"])]  # fmt: skip
    frame = MICRODATA.assign(size=sizes)
    found = {}
    for rules in ("NK(2,80)|COMB(0)", "NK(2,80)"):
        p = argusqt.protect(
            frame,
            explanatory=[["nace"], ["nace", "size"]],
            response="turnover",
            rules=rules,
            hierarchies={"nace": SECTIONS},
            method="HEUR",
            progress=False,
        )
        p.session.protect_linked("OPT", {"max_minutes": 5})
        found[rules] = independent_unsafe_sums(p.session.table(1))
        session = p.session
    assert found == {"NK(2,80)|COMB(0)": [{"B05", "B06", "B07"}], "NK(2,80)": []}
    one = session.table(1)
    status = dict(zip(_codes(one), np.asarray(one.status).tolist(), strict=True))
    assert status["B05"] == 3 and status["B08"] == 11
    for no in (1, 2):
        t = session.table(no)
        assert combined_disclosures(t, is_suppressed(t.status)) == []


class _NoGrace(CancelToken):
    """A cancel with no time left: every grace it gives is over already."""

    def __init__(self) -> None:
        super().__init__()
        self.cancel()

    def grace(self, seconds: float) -> CancelToken:
        return self


def _cancelled_run(table):
    """A method that was cancelled and kept the rule's pattern (the dominated sum B05–B07),
    counting its runs: after a cancel it must not be run again."""
    runs = []

    def run(problem, seconds=None):
        runs.append(problem)
        res = ProtectionResult("HEUR", np.asarray(table.status).copy(), cost=0.0, cancelled=True)
        res.verdict = face_verdict(problem, result_face("suppress", res))  # as run_method does
        return res

    return run, runs


@pytest.mark.usefixtures("older_insiders")
def test_a_cancelled_methods_kept_pattern_gets_the_secondary_directly_and_a_new_verdict():
    t = protect("HEUR", "NK(2,80)|COMB(0)").table
    t.spec.rules.combined = True
    problem = CSPProblem.from_table(t)
    run, runs = _cancelled_run(t)
    before = is_suppressed(np.asarray(t.status))
    out = protect_combined(t, problem, run, cancel=None)
    assert len(runs) == 1  # a cancelled method is not run again
    added = np.flatnonzero(is_suppressed(out.status) & ~before)
    assert added.size >= 1
    view = copy.copy(t)
    view.status = out.status
    assert independent_unsafe_sums(view) == []  # the test's own attacker
    assert out.cost == pytest.approx(float(np.asarray(problem.cost)[added].sum()))
    assert out.verdict is not None and out.verdict.ok and not out.optimal
    assert out.audit is out.verdict.outsider  # the verdict of the statuses kept, not before
    assert any(line.startswith("after the rule on combined cells") for line in out.log)


@pytest.mark.usefixtures("older_insiders")
def test_with_no_grace_left_the_kept_pattern_stays_and_is_not_publishable():
    t = protect("HEUR", "NK(2,80)|COMB(0)").table
    t.spec.rules.combined = True
    problem = CSPProblem.from_table(t)
    run, _ = _cancelled_run(t)
    out = protect_combined(t, problem, run, cancel=_NoGrace())
    np.testing.assert_array_equal(out.status, np.asarray(t.status))  # as the method kept it
    assert out.cost == 0.0
    assert any("no time left after the cancel" in line for line in out.log)
    # the method's own verdict of that pattern, with the unsafe sum in it: NOT PUBLISHABLE
    assert out.verdict is not None and not out.verdict.ok
    assert any(d.reason == "combined" for d in out.verdict.disclosures)


class _Clock:
    """A clock the test moves: the user's time limit read on it, never the machine's."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _timed_run(table, clock, spend):
    """A method that spends `spend` seconds of the test's clock per run and keeps what it is
    given (the rule's added cells); records the seconds each run was left."""
    given = []

    def run(problem, seconds=None):
        given.append(seconds)
        clock.now += spend
        status = np.asarray(problem.status).copy()  # the added cells kept, nothing else
        sup = is_suppressed(status) & ~is_suppressed(np.asarray(table.status))
        status = np.where(is_suppressed(np.asarray(table.status)), np.asarray(table.status), status)
        res = ProtectionResult("HEUR", status, cost=float(np.asarray(problem.cost)[sup].sum()))
        res.verdict = face_verdict(problem, result_face("suppress", res))
        return res

    return run, given


@pytest.mark.usefixtures("older_insiders")
def test_a_rerun_for_the_sums_gets_what_is_left_of_the_users_limit(monkeypatch):
    """US#160's reruns share the user's time limit (a safety cap over the whole Protect):
    the second run is given what the first left, not the whole limit again."""
    from argusqt.protection.core import budget

    clock = _Clock()
    monkeypatch.setattr(budget, "CLOCK", clock)
    t = protect("HEUR", "NK(2,80)|COMB(0)").table
    t.spec.rules.combined = True
    run, given = _timed_run(t, clock, spend=10.0)
    out = protect_combined(t, CSPProblem.from_table(t), run, cancel=None, limit=60.0)
    assert given[0] == 60.0 and len(given) >= 2
    assert given[1] == pytest.approx(50.0)
    assert not out.timed_out  # the limit decided nothing here
    view = copy.copy(t)
    view.status = out.status
    assert independent_unsafe_sums(view) == []


@pytest.mark.usefixtures("older_insiders")
def test_with_the_limit_spent_the_cells_go_in_directly_and_the_result_says_so(monkeypatch):
    """The first run used the whole limit: no second run; the rule's cells go into its
    pattern, judged again within the limit's grace; the result says the limit decided."""
    from argusqt.protection.core import budget
    from argusqt.protection.core.result import TIME_LIMIT_DECIDED

    clock = _Clock()
    monkeypatch.setattr(budget, "CLOCK", clock)
    t = protect("HEUR", "NK(2,80)|COMB(0)").table
    t.spec.rules.combined = True
    before = is_suppressed(np.asarray(t.status))
    run, given = _timed_run(t, clock, spend=61.0)
    out = protect_combined(t, CSPProblem.from_table(t), run, cancel=None, limit=60.0)
    assert given == [60.0]  # not run again
    assert out.timed_out and TIME_LIMIT_DECIDED in out.log
    assert any("left no time to run the method again" in line for line in out.log)
    assert (is_suppressed(out.status) & ~before).any()
    view = copy.copy(t)
    view.status = out.status
    assert independent_unsafe_sums(view) == []  # the test's own attacker on the sums
    assert out.verdict is not None and out.verdict.ok and not out.optimal


@pytest.mark.usefixtures("older_insiders")
def test_past_the_limits_grace_the_kept_pattern_is_not_publishable(monkeypatch):
    """No time left even for the verdict of the pattern with the added cells: the pattern
    the method kept stays, and its unsafe sum makes it NOT PUBLISHABLE."""
    from argusqt.protection.core import budget

    clock = _Clock()
    monkeypatch.setattr(budget, "CLOCK", clock)
    t = protect("HEUR", "NK(2,80)|COMB(0)").table
    t.spec.rules.combined = True
    run, given = _timed_run(t, clock, spend=600.0)

    def proven(problem, seconds=None):  # a first run that proved its (unsafe) pattern optimal
        res = run(problem, seconds)
        res.optimal, res.lower_bound, res.gap = True, res.cost, 0.0
        return res

    out = protect_combined(t, CSPProblem.from_table(t), proven, cancel=None, limit=60.0)
    assert given == [60.0]
    np.testing.assert_array_equal(out.status, np.asarray(t.status))
    assert out.timed_out
    assert not out.optimal  # never "Proven optimal" beside NOT PUBLISHABLE
    assert any("no time left after the time limit" in line for line in out.log)
    assert out.verdict is not None and not out.verdict.ok
