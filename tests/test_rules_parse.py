"""Safety-rule mini-language (argusqt/docs/formats.md §8.4): parsing, errors, round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from argusqt.errors import SpecificationError
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule, RequestRule, SafetyRules
from argusqt.rules.parse import format_safety_rule, parse_safety_rule


def test_e15_4_nk_placeholder_freq():
    r = parse_safety_rule("NK(3,75)|NK(0,0)|FREQ(5,30)|")
    assert r.nk_individual == [DominanceRule(3, 75)]
    assert r.nk_holding == []
    assert r.freq_individual == FreqRule(5, 30)
    assert r.freq_holding is None
    assert not r.uses_holdings
    assert r.manual_margin == 20


def test_p_forms_equivalent():
    a = parse_safety_rule("P(15,100,1)")
    assert a.p_individual == [PRule(15, 100, 1)]
    assert parse_safety_rule("P(15,1)").p_individual == a.p_individual
    assert parse_safety_rule("p(15)").p_individual == a.p_individual
    assert parse_safety_rule("P(20,5)").p_individual == [PRule(20, 100, 5)]


def test_position_counting_holdings():
    r = parse_safety_rule("P(10,1)|FREQ(0,0)|FREQ(3,30)")
    assert r.p_individual == [PRule(10, 100, 1)]
    assert r.freq_individual is None
    assert r.freq_holding == FreqRule(3, 30)
    assert r.uses_holdings
    r = parse_safety_rule("P(0,0)|P(0,0)|P(10,1)|MIS(1)|ZERO(10)|MAN(10)")
    assert r.p_individual == [] and r.p_holding == [PRule(10, 100, 1)]
    assert r.missing_safe and r.zero_range == 10 and r.manual_margin == 10
    r = parse_safety_rule("NK(3,70)|NK(2,80)|NK(1,60)")
    assert r.nk_individual == [DominanceRule(3, 70), DominanceRule(2, 80)]
    assert r.nk_holding == [DominanceRule(1, 60)]


def test_real_rules():
    r = parse_safety_rule("FREQ(5,20)|P(20,5)|")
    assert r.freq_individual == FreqRule(5, 20) and r.p_individual == [PRule(20, 100, 5)]
    r = parse_safety_rule("MAN(20)")
    assert not r.has_sensitivity_rules and r.manual_margin == 20
    r = parse_safety_rule("P(15,3)|FREQ(3,20)|ZERO(10)")
    assert r.p_individual == [PRule(15, 100, 3)] and r.zero_range == 10
    r = parse_safety_rule("nk(3,70)|freq(3,20)|zero(2.5)")
    assert r.zero_range == 2.5
    assert not parse_safety_rule("").has_sensitivity_rules


def test_req_three_and_four_args():
    assert parse_safety_rule("REQ(70,60,10)").req_individual == RequestRule(70, 60, 0, 10)
    assert parse_safety_rule("REQ(70,60,3,10)").req_individual == RequestRule(70, 60, 3, 10)
    r = parse_safety_rule("REQ(70,60,3,10)|REQ(50,40,0,5)")
    assert r.req_holding == RequestRule(50, 40, 0, 5)


def test_wgt_mis():
    r = parse_safety_rule("FREQ(12,10)|WGT(1)|MIS(1)")
    assert r.use_weights and r.missing_safe


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("P(15", "NAME(arguments)"),
        ("Q(1)", "unknown rule"),
        ("NK(3)", "expected 2 arguments"),
        ("NK(3,abc)", "expected a number as argument 2"),
        ("NK(2.5,70)", "integer"),
        ("P(20,10,1)", "p ≤ q"),
        ("FREQ(3,30)|FREQ(3,30)|FREQ(1,1)", "at most 2"),
        ("ZERO(1)|ZERO(2)", "at most 1"),
        ("MAN(120)", "between 0 and 100"),
        ("WGT(2)", "0 or 1"),
        ("P(10)||NK(3,70)", "between two"),
        ("REQ(70,60)", "3 or 4 arguments"),
        ("P(0,0)|P(0,0)|P(10,1)|WGT(1)", "cannot be combined"),
    ],
)
def test_errors_name_rule_and_expectation(text, fragment):
    with pytest.raises(SpecificationError) as e:
        parse_safety_rule(text, file="x.arb", line=7)
    assert fragment in str(e.value)
    assert "x.arb, line 7" in str(e.value)


@pytest.mark.parametrize(
    "text",
    [
        "P(15,100,1)",
        "NK(3,75)|FREQ(5,30)",
        "P(10,100,1)|FREQ(0,0)|FREQ(3,30)",
        "P(0,0)|P(0,0)|P(10,100,1)|P(0,0)|ZERO(10)|MIS(1)|MAN(10)",
        "NK(3,70)|NK(0,0)|NK(1,60)|NK(0,0)|REQ(70,60,0,10)",
        "FREQ(10,30,U)|WGT(1)",
        "FREQ(12,10)|WGT(1)",
        "MAN(20)",
    ],
)
def test_round_trip(text):
    rules = parse_safety_rule(text)
    out = format_safety_rule(rules)
    assert out == text
    assert parse_safety_rule(out) == rules


def test_format_writes_three_arg_p():
    assert format_safety_rule(parse_safety_rule("P(15)")) == "P(15,100,1)"
    assert format_safety_rule(parse_safety_rule("NK(3,75)|NK(0,0)|FREQ(5,30)|")) == (
        "NK(3,75)|FREQ(5,30)"
    )


_pct = st.integers(1, 100).map(float)
_nk = st.builds(DominanceRule, st.integers(1, 5), _pct)
_p = st.builds(
    lambda p, extra, n: PRule(float(p), float(p + extra), n),
    st.integers(1, 50),
    st.integers(0, 50),
    st.integers(1, 5),
)
_freq = st.builds(FreqRule, st.integers(1, 20), st.integers(0, 100).map(float))
_req = st.builds(RequestRule, _pct, _pct, st.integers(0, 9), st.integers(0, 100).map(float))


@settings(max_examples=150, deadline=None)
@given(
    nk_i=st.lists(_nk, max_size=2),
    nk_h=st.lists(_nk, max_size=2),
    p_i=st.lists(_p, max_size=2),
    p_h=st.lists(_p, max_size=2),
    f_i=st.none() | _freq,
    f_h=st.none() | _freq,
    r_i=st.none() | _req,
    zero=st.none() | st.integers(0, 50).map(float),
    man=st.integers(0, 100).map(float),
    mis=st.booleans(),
)
def test_round_trip_property(nk_i, nk_h, p_i, p_h, f_i, f_h, r_i, zero, man, mis):
    rules = SafetyRules(
        nk_individual=nk_i,
        nk_holding=nk_h,
        p_individual=p_i,
        p_holding=p_h,
        freq_individual=f_i,
        freq_holding=f_h,
        req_individual=r_i,
        zero_range=zero,
        manual_margin=man,
        missing_safe=mis,
    )
    assert parse_safety_rule(format_safety_rule(rules)) == rules
