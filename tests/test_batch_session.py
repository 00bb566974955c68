"""The Session API as the GUI uses it: actions, protect contract (audit gate), batch history."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from confidential_helpers import assert_marked, body_lines
from session_helpers import ex2_session

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.render import batch_lines, spec_to_arb, write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.errors import AuditError, ParameterError, SpecificationError
from argusqt.protection.core.result import AuditResult, ProtectionResult
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session


def test_gui_flow_and_batch_file_repeats_it(ex2):
    s = ex2_session(ex2)
    t = s.table(1)
    assert t.n_cells == 15 and int(t.status[5]) == 3
    assert t.lpl[5] == pytest.approx(22.404)  # E9
    s.write_table(1, 3, "AS+FL+", ex2 / "gui.txt")
    write_batch_file(s, ex2 / "again.arb")
    text = (ex2 / "again.arb").read_text()
    assert '<SPECIFYTABLE> "region""gender"|"num1"|""|""' in text
    assert "<SAFETYRULE> P(20,100,5)|FREQ(5,20)" in text
    assert "<READMICRODATA>" in text
    (ex2 / "gui.txt").rename(ex2 / "first.txt")
    out = run_batch(ex2 / "again.arb")
    assert out.ok, out.error
    assert (ex2 / "gui.txt").read_text() == (ex2 / "first.txt").read_text()


def test_action_errors(ex2, tmp_path):
    s = Session()
    with pytest.raises(SpecificationError, match="open microdata"):
        s.specify_table(parse_specify_table('"region"|"num1"'))
    with pytest.raises(SpecificationError, match="no tables"):
        s.table(1)
    s = ex2_session(ex2)
    with pytest.raises(SpecificationError, match="numbered 1 to 1"):
        s.table(2)
    with pytest.raises(SpecificationError, match="unknown variable 'nosuch'"):
        s.specify_table(parse_specify_table('"nosuch"|"num1"'))
    with pytest.raises(SpecificationError, match="not an explanatory"):
        s.specify_table(parse_specify_table('"num2"|"num1"'))


def test_spec_to_arb_round_trip():
    for text in (
        '"Size""Region"|"Var2"|""|""',
        '"Size""Region"|"Var2"|"Var2_Shadow"|"Var2"',
        '"Size"|<freq>|""|-1',
        '"Size"|"V"|""|"C"|0.5',
        '"Size"|"V"|""|-2',
        '"Size"|"V"|""|-3',
    ):
        spec = parse_specify_table(text)
        assert spec_to_arb(spec) == text
        assert parse_specify_table(spec_to_arb(spec)) == spec


def _fake_methods(monkeypatch, make_result):
    mod = types.ModuleType("argusqt.protection.run")
    calls = []

    def run_method(problem, method, params, progress, cancel):
        calls.append((method, params.as_dict()))  # the solver's typed options, by field
        return make_result(problem, method)

    mod.run_method = run_method
    monkeypatch.setitem(sys.modules, "argusqt.protection.run", mod)
    return calls


def _audit(n: int, ok: bool) -> AuditResult:
    passed = np.ones(n, dtype=bool)
    if not ok:
        passed[5] = False
    z = np.zeros(n)
    return AuditResult(z, z, z, z, ~passed, passed, np.zeros(n, dtype=bool))


def test_protect_copies_back_only_after_a_passed_audit(ex2, monkeypatch):
    s = ex2_session(ex2)
    before = s.table(1).status.copy()

    def failing(problem, method):
        st = problem.status.copy()
        st[4] = 11
        return ProtectionResult(method, st, audit=_audit(problem.n_cells, ok=False))

    _fake_methods(monkeypatch, failing)
    with pytest.raises(AuditError, match="AUDIT FAILED"):
        s.protect(1, "OPT", {"max_minutes": 1})
    np.testing.assert_array_equal(s.table(1).status, before)

    def passing(problem, method):
        st = problem.status.copy()
        st[[4, 10, 11]] = 11
        return ProtectionResult(method, st, cost=4188.31, audit=_audit(problem.n_cells, ok=True))

    calls = _fake_methods(monkeypatch, passing)
    res = s.protect(1, "opt", {"max_minutes": 1})
    # solvers take seconds; singleton options on by default, MF gets FREQ's minimum
    # every other option at its default (the typed options compared field by field)
    from argusqt.protection.suppress.optimal import OptOptions

    expected = OptOptions(
        max_time=60.0, singleton_singleton=True, singleton_multiple=True, min_freq=5
    ).as_dict()
    assert calls == [("OPT", expected)]
    assert res.n_secondary == 3
    assert [int(x) for x in s.table(1).status[[4, 5, 10, 11]]] == [11, 3, 11, 11]
    assert s.table(1).audit is res.audit
    assert "<SUPPRESS> OPT(1, 1)" in batch_lines(s)
    with pytest.raises(SpecificationError, match="protected"):
        s.recode(1, "region", 1)


def test_rounding_published_values_and_minimum_base(ex2, monkeypatch):
    s = ex2_session(ex2)

    def rounding(problem, method):
        return ProtectionResult(
            method, problem.status.copy(), published=np.round(problem.values / 50) * 50
        )

    calls = _fake_methods(monkeypatch, rounding)
    with pytest.raises(ParameterError, match="rounding base 5 is below the minimum base 45"):
        s.protect(1, "RND", {"base": 5, "steps": 0})
    assert not calls  # refused before the method runs
    s.protect(1, "RND", {"base": 50, "steps": 0})
    assert calls[0][1]["min_base"] == 45  # the largest LPL + UPL of the unsafe cells
    t = s.table(1)
    assert t.published is not None and t.published[0] == 10500.0
    s.write_table(1, 3, "AS+FL+", ex2 / "r.txt")
    lines = body_lines(ex2 / "r.txt")  # after its CONFIDENTIAL line
    assert lines[0] == '"region","gender","num1_Round","num1_Orig"'
    assert lines[1] == '"Total","Total",10500.00,10484.95'


def test_unknown_or_missing_methods_and_parameters_are_named(ex2):
    s = ex2_session(ex2)
    with pytest.raises(ParameterError, match="NET cannot protect linked tables together"):
        s.protect_linked("NET", {})
    with pytest.raises(ParameterError, match=r"GH: model_size \(model size\) must be"):
        s.protect(1, "GH", {"model_size": 2})
    with pytest.raises(ParameterError, match="HEUR cannot protect linked tables together"):
        s.protect_linked("HEUR")
    with pytest.raises(ParameterError, match="unknown protection method 'XYZ'; expected one of"):
        s.protect(1, "XYZ")
    # the example: unknown keys were silently ignored (the run used the defaults)
    with pytest.raises(ParameterError) as err:
        s.protect(1, "MOD", {"maxtime": 1, "bogus": True})
    assert "unknown parameters 'maxtime'" in err.value.message and "'bogus'" in err.value.message
    assert "MOD takes max_minutes, singleton_singleton" in err.value.message
    with pytest.raises(ParameterError, match=r"max_minutes \(maximum time per subtable\) must "):
        s.protect(1, "MOD", {"max_minutes": -1})
    with pytest.raises(ParameterError, match="stop_rule") as err:
        s.protect(1, "RND", {"base": 50, "stop_rule": 4})
    assert err.value.parameter == "stop_rule" and "3 (optimal)" in err.value.allowed


def test_respecify_then_batch_file_is_valid(ex2):
    """GUI: Specify tables again (clear_tables) — the written batch file must still run."""
    s = ex2_session(ex2)
    s.write_table(1, 3, "AS+", ex2 / "old.txt")
    s.clear_tables()
    spec = parse_specify_table('"region"|"num1"|""|""')
    spec.rules = parse_safety_rule("FREQ(5,20)")
    s.specify_table(spec)
    s.compute_tables()
    s.write_table(1, 3, "AS+FL+", ex2 / "one.txt")
    lines = batch_lines(s)
    assert [ln.split()[0] for ln in lines] == [
        "<OPENMICRODATA>", "<OPENMETADATA>", "<SPECIFYTABLE>", "<SAFETYRULE>",
        "<READMICRODATA>", "<WRITETABLE>",
    ]  # fmt: skip
    write_batch_file(s, ex2 / "again.arb")
    first = (ex2 / "one.txt").read_text()
    (ex2 / "one.txt").unlink()
    out = run_batch(ex2 / "again.arb")
    assert out.ok, out.error
    assert (ex2 / "one.txt").read_text() == first
    assert first.splitlines()[0:2] == ['"region","num1","Status"', '"Total",10484.95,1']
    assert_marked(ex2 / "one.txt")


def test_write_apriori_from_table(ex2):
    s = ex2_session(ex2)
    n = s.write_apriori(1, ex2 / "t.hst")
    lines = (ex2 / "t.hst").read_text().splitlines()
    assert lines[0].startswith("// CONFIDENTIAL — not for publication")  # cell statuses
    lines = lines[1:]
    assert n == len(lines) == 15
    assert "a,female,u" in [ln.lower() for ln in lines] and lines[0] == '"","",p'


def test_write_table_with_report(ex2):
    s = ex2_session(ex2)
    files = s.write_table(1, 3, "AS+", ex2 / "t.txt", report=True)
    # the report counts and sums suppressed cells per status: confidential by name and first line
    assert files == [ex2 / "t.txt", ex2 / "t.txt.CONFIDENTIAL.txt", ex2 / "t_CONFIDENTIAL.html"]
    html = (ex2 / "t_CONFIDENTIAL.html").read_text()
    assert "microdata_ex2.asc" in html and "<html" in html
    body = html.split("<body>", 1)[1].lstrip()
    assert body.startswith(
        '<p style="color:#c00000;font-weight:bold">CONFIDENTIAL — not for publication'
    )
    assert "CONFIDENTIAL" in s.log[-1].message


def test_mod_min_frequency_option_uses_the_freq_rule(ex2, monkeypatch):
    s = ex2_session(ex2)

    def passing(problem, method):
        return ProtectionResult(method, problem.status.copy(), audit=_audit(problem.n_cells, True))

    calls = _fake_methods(monkeypatch, passing)
    s.protect(1, "MOD", {"max_minutes": 2, "singleton_singleton": 1, "min_freq_option": 1})
    s.protect(1, "MOD", {"max_minutes": 2})  # on by default
    for _, params in calls:
        assert params["min_freq"] == 5 and params["max_time_per_subtable"] == 120.0
    s.protect(1, "MOD", {"max_minutes": 2, "min_freq_option": False})
    assert calls[-1][1]["min_freq"] == 0
    with pytest.raises(ParameterError, match="did you mean 'min_freq_option'"):
        s.protect(1, "MOD", {"min_freq": 1})  # the old GUI alias is refused


def test_batch_file_from_a_session_lists_the_writes_it_contains(ex2):
    """A write_table action added by hand to a session file is copied into the batch file:
    writing it says so, naming the batch line and the file it will write (issue 23 item 15)."""
    import json

    from argusqt.sessionfile import load_session, save_session

    s = ex2_session(ex2)
    s.protect(1, "MOD", {})
    saved = save_session(s, ex2 / "s.aqs")
    doc = json.loads(saved.read_text(encoding="utf-8"))
    doc["actions"].append(
        {
            "action": "write_table",
            "table": 1,
            "out_type": 3,
            "options": "AS+",
            "path": {"path": "leak.txt", "absolute": str(ex2 / "leak.txt")},
        }
    )
    saved.write_text(json.dumps(doc), encoding="utf-8")
    again = load_session(saved)
    write_batch_file(again, ex2 / "job.arb")
    lines = (ex2 / "job.arb").read_text().splitlines()
    no = next(k for k, line in enumerate(lines, 1) if line.startswith("<WRITETABLE>"))
    notice = again.log[-1].message
    assert "job.arb writes 1 output file(s) when run" in notice
    assert f"line {no}: <WRITETABLE>" in notice and "leak.txt" in notice
    plain = ex2_session(ex2)  # a session that wrote nothing
    write_batch_file(plain, ex2 / "plain.arb")
    assert "plain.arb writes no output files when run" in plain.log[-1].message
