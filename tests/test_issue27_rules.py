"""Issue 27 items 4 and 5: FREQ on unweighted counts when weights apply (US#98) and
holding-level rules in a readable syntax (US#204), in the rule text, batch, API and GUI."""

from __future__ import annotations

import numpy as np
import pytest
from shared_paths import copy_case
from test_rules_classify import weighted_table

from argusqt.batch.runner import run_batch
from argusqt.errors import BatchError, SpecificationError
from argusqt.model.rulespec import FreqRule, PRule
from argusqt.rules.classify import apply_rules
from argusqt.rules.parse import add_holding_rules, format_safety_rule, parse_safety_rule


# ------------------------------------------------------------------ item 4: FREQ(m,r,U)
def test_freq_unweighted_counts_records_not_weights():
    """Two records of weights 4 and 7: FREQ(10) with WGT(1) counts 11 (safe); with U it
    counts 2 respondents (unsafe, status 5, range 30 % of 470)."""
    weighted = weighted_table("FREQ(10,30)|WGT(1)")
    apply_rules(weighted)
    assert weighted.status[1] == 1
    plain = weighted_table("FREQ(10,30,U)|WGT(1)")
    apply_rules(plain)
    assert plain.status[1] == 5
    assert plain.upl[1] == pytest.approx(0.3 * 470)
    # 2 respondents ≥ FREQ(2): safe whatever the weights say
    two = weighted_table("FREQ(2,30,U)|WGT(1)")
    apply_rules(two)
    assert two.status[1] == 1


def test_freq_unweighted_syntax_and_round_trip():
    r = parse_safety_rule("FREQ(10,30,U)|WGT(1)")
    assert r.freq_individual == FreqRule(10, 30, unweighted=True)
    assert format_safety_rule(r) == "FREQ(10,30,U)|WGT(1)"
    assert parse_safety_rule("freq(10,30,unweighted)").freq_individual == FreqRule(10, 30, True)
    assert parse_safety_rule("FREQ(m=10, r=30, unweighted=yes)").freq_individual == (
        FreqRule(10, 30, True)
    )
    with pytest.raises(SpecificationError, match="U \\(unweighted\\)"):
        parse_safety_rule("FREQ(10,30,7)")


def test_freq_unweighted_on_tau_testw_through_batch_and_api(tmp_path):
    """US#98 on the tutorial data: with weights, FREQ(10) on the weighted count leaves cells
    of fewer than 10 respondents safe; FREQ(10,30,U) makes exactly those unsafe."""
    import argusqt

    src = copy_case("tau_testW", tmp_path)
    statuses = {}
    for name, rule in (("w", "FREQ(10,30)|WGT(1)"), ("u", "FREQ(10,30,U)|WGT(1)")):
        arb = tmp_path / f"{name}.arb"
        arb.write_text(
            f'<OPENMICRODATA> "{src / "tau_testW.asc"}"\n'
            f'<OPENMETADATA> "{src / "tau_testW.rda"}"\n'
            '<SPECIFYTABLE> "Size""Region"|"Var2"||\n'
            f"<SAFETYRULE> {rule}\n"
            "<READMICRODATA>\n"
        )
        out = run_batch(arb)
        assert out.ok, out.error
        table = out.session.table(1)
        statuses[name] = np.asarray(table.status).copy()
        freq = np.asarray(table.freq)
        wsum = np.asarray(table.weight_sum)
    few = (freq > 0) & (freq < 10)
    assert ((statuses["u"] == 5) == few).all()
    assert ((statuses["w"] == 5) == ((freq > 0) & (wsum < 10))).all()
    # the data have cells where the two counts disagree: the option changes the verdict
    assert ((statuses["u"] == 5) & (statuses["w"] != 5)).any()
    # the API's typed rule gives the batch's primaries
    protected = argusqt.protect(
        src / "tau_testW.asc",
        metadata=src / "tau_testW.rda",
        explanatory=["Size", "Region"],
        response="Var2",
        rules=[argusqt.FREQ(10, 30, unweighted=True)],
        weight="Wgt",
        method="MOD",
        progress=False,
    )
    api_status = np.asarray(protected[0].table.status)
    assert np.array_equal(api_status == 5, statuses["u"] == 5)


def test_gui_specify_form_keeps_the_unweighted_option(qtbot):
    from argusqt.gui.core import VariableChoices
    from argusqt.gui.specify import SpecifyTablesDialog
    from argusqt.model.table import TableSpec

    choices = VariableChoices(explanatory=["a", "b"], numeric=["y"], weight="w")
    d = SpecifyTablesDialog(choices)
    qtbot.addWidget(d)
    spec = TableSpec(["a"], "y", rules=parse_safety_rule("FREQ(10,30,U)|WGT(1)"))
    d.load_spec(spec)
    assert d.individual.freq_unweighted.isChecked()
    assert d.current_spec().rules.freq_individual == FreqRule(10, 30, True)
    d.individual.freq_unweighted.setChecked(False)
    assert d.current_spec().rules.freq_individual == FreqRule(10, 30, False)
    # issue 27 item 2's option: on by default (None), COMB(0) when unchecked
    assert d.combined.isChecked() and d.current_spec().rules.combined is None
    d.combined.setChecked(False)
    assert d.current_spec().rules.combined is False
    d.load_spec(TableSpec(["a"], "y", rules=parse_safety_rule("NK(2,80)|COMB(0)")))
    assert not d.combined.isChecked()


# ------------------------------------------------------------------ item 5: holdings
def test_named_level_puts_a_rule_on_holdings_whatever_its_position():
    positional = parse_safety_rule("P(0,0)|P(0,0)|P(10,1)")
    named = parse_safety_rule("P(p=10, n=1, level=holding)")
    assert named == positional
    assert named.p_holding == [PRule(10, 100, 1)] and named.p_individual == []
    # a named rule takes no position: the next positional P is still the 1st (individual)
    r = parse_safety_rule("P(p=20, level=holding)|P(15,1)|NK(n=3,k=75,level=holding)")
    assert r.p_individual == [PRule(15, 100, 1)] and r.p_holding == [PRule(20, 100, 1)]
    assert [(x.n, x.k) for x in r.nk_holding] == [(3, 75)]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("P(p=10, level=hold)", "level=individual or level=holding"),
        ("P(p=10, x=1)", "unknown argument 'x'"),
        ("NK(n=3)", "missing argument"),
        ("P(p=10, p=12)", "given twice"),
        ("ZERO(z=10)", "only for P, NK, FREQ and REQ"),
        ("P(10)|P(11)|P(p=12,level=individual)", "at most 2 P rule"),
        ("FREQ(3,30)|FREQ(m=4,r=10,level=individual)", "at most 1 FREQ"),
    ],
)
def test_named_form_errors_say_what_was_expected(text, words):
    with pytest.raises(SpecificationError, match=words):
        parse_safety_rule(text)


def test_written_back_in_tau_argus_positional_form_with_all_four_positions():
    """US#204: τ-Argus 4.2.0 read a 3rd P without a 4th as individual; we write all four."""
    r = parse_safety_rule("P(p=10, n=1, level=holding)|FREQ(m=3, r=30, level=holding)")
    text = format_safety_rule(r)
    assert text == "P(0,0)|P(0,0)|P(10,100,1)|P(0,0)|FREQ(0,0)|FREQ(3,30)"
    assert parse_safety_rule(text) == r


def test_safetyruleholding_merges_holding_rules():
    base = parse_safety_rule("NK(3,75)|ZERO(10)")
    out = add_holding_rules(base, "P(10,1)|FREQ(3,30)")
    assert out.nk_individual == base.nk_individual and out.zero_range == 10
    assert out.p_holding == [PRule(10, 100, 1)] and out.freq_holding == FreqRule(3, 30)
    assert base.p_holding == []  # the argument is not changed
    with pytest.raises(SpecificationError, match="ZERO"):
        add_holding_rules(base, "P(10,1)|ZERO(5)")
    with pytest.raises(SpecificationError, match="one of the two forms"):
        add_holding_rules(parse_safety_rule("P(0,0)|P(0,0)|P(10,1)"), "NK(1,80)")


def _enterprise_arb(folder, rules: str) -> str:
    return (
        f'<OPENMICRODATA> "{folder / "example_enterprise.asc"}"\n'
        f'<OPENMETADATA> "{folder / "example_enterprise.rda"}"\n'
        '<SPECIFYTABLE> "act""product"|"turnover"||"turnover"\n'
        f"{rules}\n"
        "<READMICRODATA>\n"
    )


def test_batch_safetyruleholding_gives_the_positional_statuses(tmp_path):
    """The enterprise scenario's holding p% rule in both forms: the same statuses."""
    folder = copy_case("enterprise", tmp_path)
    forms = {
        "positional": "<SAFETYRULE> P(0,0)|P(0,0)|P(10,1)|ZERO(10)|MIS(1)|MAN(10)",
        "holding": "<SAFETYRULE> ZERO(10)|MIS(1)|MAN(10)\n<SAFETYRULEHOLDING> P(10,1)",
        "named": "<SAFETYRULE> P(p=10,n=1,level=holding)|ZERO(10)|MIS(1)|MAN(10)",
    }
    got = {}
    for name, rules in forms.items():
        arb = tmp_path / f"{name}.arb"
        arb.write_text(_enterprise_arb(folder, rules))
        out = run_batch(arb)
        assert out.ok, out.error
        got[name] = np.asarray(out.session.table(1).status).copy()
        assert out.session.specs[0].rules.p_holding == [PRule(10, 100, 1)]
    assert int((got["positional"] == 3).sum()) == 283  # argusqt/docs/rules.md §3.8
    assert np.array_equal(got["positional"], got["holding"])
    assert np.array_equal(got["positional"], got["named"])


def test_batch_safetyruleholding_out_of_place_names_the_line(tmp_path):
    folder = copy_case("enterprise", tmp_path)
    arb = tmp_path / "bad.arb"
    text = _enterprise_arb(folder, "<SAFETYRULE> ZERO(10)").replace(
        "<READMICRODATA>", "<READMICRODATA>\n<SAFETYRULEHOLDING> P(10,1)"
    )
    arb.write_text(text)
    out = run_batch(arb)
    assert not out.ok and isinstance(out.error, BatchError)
    assert out.error.line == 6
    assert "<SAFETYRULE> directly before <SAFETYRULEHOLDING>" in str(out.error)


def test_batch_written_back_uses_tau_argus_form(tmp_path):
    """A session specified with <SAFETYRULEHOLDING> writes τ-Argus's positional form."""
    from argusqt.batch.render import render_actions

    folder = copy_case("enterprise", tmp_path)
    arb = tmp_path / "h.arb"
    arb.write_text(
        _enterprise_arb(folder, "<SAFETYRULE> ZERO(10)|MIS(1)\n<SAFETYRULEHOLDING> P(10,1)")
    )
    out = run_batch(arb)
    assert out.ok, out.error
    lines = render_actions(out.session.actions, tmp_path / "again.arb").lines
    rule_lines = [x for x in lines if x.startswith("<SAFETYRULE")]
    assert rule_lines == ["<SAFETYRULE> P(0,0)|P(0,0)|P(10,100,1)|P(0,0)|ZERO(10)|MIS(1)"]
