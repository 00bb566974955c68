"""GH and NET on τ-Argus's own data and batch files (argusqt/docs/methods.md §7, §8).

The enterprise scenario test_1 (act × product, `GH(1,100,1,1)`) runs from a batch file as a
τ-Argus user writes it; its primaries must equal τ-Argus's expected file and its pattern must
pass the outsider and the insider attacker, taken again here on the written output. Costs
are printed beside τ-Argus's. Batch files and session files written after GH and NET run
again to the same statuses.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from enterprise_linked import linked_enterprise
from shared_paths import copy_case

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.render import write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.errors import ArgusError
from argusqt.model.status import is_primary, is_suppressed
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.suppress.network import SHAPE_RULE
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.sessionfile import load_session, save_session

pytestmark = pytest.mark.compat

ENTERPRISE_RULES = "P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MAN(10)|MIS(1)"
TEST_1 = f"""<OPENMICRODATA> "example_enterprise.asc"
<OPENMETADATA> "example_enterprise.rda"
<SPECIFYTABLE> "act""product"|"turnover"||"turnover"
<SAFETYRULE> {ENTERPRISE_RULES}
<READMICRODATA>
<SUPPRESS> GH(1,100,1,1)
<WRITETABLE> (1, 3, AS+, "test_1.txt")
"""


def _rows(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:  # an AS+ file's banner is a // line
        return [r for r in csv.reader(line for line in f if not line.startswith("//")) if r]


def _secondary_cost(rows) -> float:
    return sum(float(r[-2]) for r in rows if int(r[-1]) in (11, 12))


def test_enterprise_test_1_gh_batch_runs_unchanged(tmp_path):
    folder = copy_case("enterprise", tmp_path)
    arb = folder / "test_1.arb"
    arb.write_text(TEST_1)
    out = run_batch(arb)
    assert out.ok, out.error
    ours = _rows(folder / "test_1.txt")
    theirs = _rows(folder / "expected" / "test_1.txt")
    assert [r[:-1] for r in ours] == [r[:-1] for r in theirs]  # cells, codes and values
    st_ours = np.array([int(r[-1]) for r in ours])
    st_theirs = np.array([int(r[-1]) for r in theirs])
    assert np.array_equal(is_primary(st_ours), is_primary(st_theirs))
    assert np.array_equal(st_ours[is_primary(st_ours)], st_theirs[is_primary(st_theirs)])
    # the written pattern, judged again on the session's own table: outsider and insiders
    table = out.session.table(1)
    assert np.array_equal(np.asarray(table.status), st_ours)
    verdict = publication_audit(CSPProblem.from_table(table), is_suppressed(st_ours))
    assert verdict.ok, verdict.summary()
    assert verdict.insiders_checked > 0
    cost, tau = _secondary_cost(ours), _secondary_cost(theirs)
    print(f"\ntest_1 GH(1,100,1,1): ours {cost:,.2f}, τ-Argus {tau:,.2f}")
    assert tau == pytest.approx(1_376_576.63)
    assert cost <= tau


@pytest.fixture(scope="module")
def testw(tmp_path_factory):
    return copy_case("tau_testW", tmp_path_factory.mktemp("ghnet"))


def _testw_session(folder) -> Session:
    s = Session()
    s.open_microdata(folder / "tau_testW.asc", folder / "tau_testW.rda")
    s.specify_table(parse_specify_table('"Size""Region"|"Var2"|""|""'))
    s.set_safety_rules(parse_safety_rule("P(15,1)"))
    s.compute_tables()
    return s


@pytest.mark.parametrize(
    "method, params, call",
    [
        (
            "GH",
            {"apriori_percent": 50, "model_size": 1, "apply_singleton": False},
            "GH(1, 50, 1, 0)",
        ),
        ("GH", {}, "GH(1, 100, 0, 1)"),
        ("NET", {}, "NET(1)"),
    ],
)
def test_testw_batch_and_session_round_trip(testw, tmp_path, method, params, call):
    s = _testw_session(testw)
    res = s.protect(1, method, params)
    assert res.verdict is not None and res.verdict.ok
    status = np.asarray(s.table(1).status).copy()
    arb = testw / f"again_{method}.arb"
    write_batch_file(s, arb)
    assert f"<SUPPRESS> {call}" in arb.read_text()
    out = run_batch(arb)
    assert out.ok, out.error
    assert np.array_equal(np.asarray(out.session.table(1).status), status)
    aqs = save_session(s, tmp_path / "w.aqs")
    loaded = load_session(aqs)
    assert loaded.table(1).protection is not None
    assert loaded.table(1).protection.method == method
    assert np.array_equal(np.asarray(loaded.table(1).status), status)


@pytest.mark.slow
def test_linked_gh_on_enterprise_cover(tmp_path, tmp_path_factory):
    # GH with its defaults, the run test_linked_enterprise_publishable checks too: solved
    # once for the session (tests/enterprise_linked.py, D-59)
    run = linked_enterprise("GH", tmp_path_factory)
    s, results, before = run.session, run.results, run.before
    assert len(results) == 2
    for prob, t in zip(before, s.tables, strict=True):
        st = np.asarray(t.status)
        assert np.array_equal(st[prob.primary], np.asarray(prob.status)[prob.primary])
        assert publication_audit(prob, is_suppressed(st)).outsider.ok
    n_act = len(s.table(1).dims[0])  # act × Total is shared: one status in both tables
    s1 = np.asarray(s.table(1).status).reshape(n_act, -1)[:, 0]
    s2 = np.asarray(s.table(2).status).reshape(n_act, -1)[:, 0]
    assert np.array_equal(s1, s2)
    arb = tmp_path / "linked.arb"
    write_batch_file(s, arb)
    assert "<SUPPRESS> GH(0, 100, 0, 1)" in arb.read_text()
    out = run_batch(arb)
    assert out.ok, out.error
    for a, b in zip(out.session.tables, s.tables, strict=True):
        assert np.array_equal(np.asarray(a.status), np.asarray(b.status))


def test_net_on_a_three_dimensional_table_is_refused_naming_the_rule_file_and_line(testw):
    arb = testw / "net_3d.arb"
    arb.write_text(
        '<OPENMICRODATA> "tau_testW.asc"\n<OPENMETADATA> "tau_testW.rda"\n'
        '<SPECIFYTABLE> "Year""Size""Region"|"Var2"||""\n<SAFETYRULE> P(15,1)\n'
        "<READMICRODATA>\n<SUPPRESS> NET(1)\n"
        '<WRITETABLE> (1, 3, AS+, "net_3d.txt")\n'
    )
    out = run_batch(arb)
    assert not out.ok
    text = str(out.error)
    assert "net_3d.arb" in text and "line 6" in text
    assert SHAPE_RULE in text and "3 dimensions" in text
    assert not (testw / "net_3d.txt").exists()  # nothing written for publication


@pytest.mark.parametrize(
    "method, params", [("GH", {"apriori_percent": 50, "model_size": 1}), ("NET", None)]
)
def test_python_api_protects_with_gh_and_net(testw, method, params):
    import argusqt

    common = dict(
        metadata=testw / "tau_testW.rda", response="Var2", rules="P(15,1)", progress=False
    )
    result = argusqt.protect(
        testw / "tau_testW.asc",
        explanatory=["Size", "Region"],
        method=method,
        params=params,
        **common,
    )
    assert result.n_primary == 9
    assert result.audit().ok
    assert result.table.protection.method == method
    if method == "NET":  # a three-dimensional table: refused with the rule, as in a batch file
        with pytest.raises(ArgusError, match=SHAPE_RULE):
            argusqt.protect(
                testw / "tau_testW.asc",
                explanatory=["Year", "Size", "Region"],
                method="NET",
                **common,
            )
