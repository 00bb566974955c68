"""Parsing of `.arb` batch files (argusqt/docs/formats.md §8) incl. every real file."""

from __future__ import annotations

import shutil

import pytest

from argusqt.batch.arb import (
    parse_arb,
    parse_arb_lines,
    parse_specify_table,
    parse_suppress,
    parse_writetable,
    strip_comment,
)
from argusqt.errors import BatchError
from argusqt.model.rulespec import DominanceRule, FreqRule, PRule


def _parse(text: str, tmp_path):
    p = tmp_path / "t.arb"
    p.write_text(text)
    return parse_arb(p)


def _error(text: str, tmp_path) -> BatchError:
    with pytest.raises(BatchError) as err:
        _parse(text, tmp_path)
    assert err.value.file == str(tmp_path / "t.arb")
    return err.value


# ---------------------------------------------------------------- real files
def test_batch_ex1_commands(shared_data, tmp_path):
    src = tmp_path / "ex1.arb"
    shutil.copy(shared_data / "batch_ex1" / "batch_ex1.arb", src)
    cmds = parse_arb(src)
    assert [c.name for c in cmds] == [
        "LOGBOOK", "OPENTABLEDATA", "OPENMETADATA", "SPECIFYTABLE", "SAFETYRULE",
        "READTABLE", "SOLVER", "SUPPRESS", "WRITETABLE",
    ]  # fmt: skip
    assert [c.line for c in cmds] == list(range(1, 10))
    assert cmds[1].args == "tabdata_ex1.tab"
    spec = cmds[3].args
    assert spec.explanatory == ["region", "gender"] and spec.response == "freq"
    assert spec.shadow is None and spec.cost.kind == "variable" and spec.cost.variable is None
    assert cmds[4].args.manual_margin == 20 and not cmds[4].args.has_sensitivity_rules
    assert cmds[5].args.totals_mode == 0 and not cmds[5].args.keep_status
    assert cmds[6].args == "FREE"
    sup = cmds[7].args
    assert (sup.method, sup.table, sup.params.max_minutes) == ("OPT", 1, 1)
    wt = cmds[8].args  # E15.6
    assert (wt.table, wt.out_type, wt.path) == (1, 3, "tabout_ex1.txt")
    assert wt.options["AS"] and wt.options["FL"] and wt.options["QU"] and not wt.options["SE"]


def test_batch_ex2_safety_rule(shared_data, tmp_path):
    src = tmp_path / "ex2.arb"
    shutil.copy(shared_data / "batch_ex2" / "batch_ex2.arb", src)
    rules = parse_arb(src)[4].args
    assert rules.p_individual == [PRule(20, 100, 5)]
    assert rules.freq_individual == FreqRule(5, 20)


def test_testrecode_commands(shared_data, tmp_path):
    src = tmp_path / "TestRecode.arb"
    shutil.copy(shared_data / "tau_testW" / "TestRecode.arb", src)
    cmds = parse_arb(src)
    assert cmds[0].line == 4  # three comment lines first
    assert [c.name for c in cmds].count("SPECIFYTABLE") == 2
    assert cmds[3].args.nk_individual == [DominanceRule(2, 75)]
    rec = [c.args for c in cmds if c.name == "RECODE"]
    assert (rec[0].table, rec[0].variable, rec[0].file) == (1, "Size", "GK.grc")
    assert (rec[1].variable, rec[1].level, rec[1].file) == ("Region", 2, None)
    assert (rec[2].table, rec[2].file) == (2, "IndCode2.grc")
    assert cmds[-1].name == "GOINTERACTIVE" and cmds[-1].line == 14


def test_testtable_commands(shared_data, tmp_path):
    src = tmp_path / "TestTable.arb"
    shutil.copy(shared_data / "tableinput" / "TestTable.arb", src)
    cmds = parse_arb(src)
    spec = cmds[2].args
    assert spec.shadow == "Var2_Shadow" and spec.cost.variable == "Var2"
    assert cmds[3].args.totals_mode == 1 and cmds[3].args.keep_status


# ---------------------------------------------------------------- SPECIFYTABLE (E15.5)
def test_specifytable_forms():
    s = parse_specify_table('"Size""Region"|"Var2"||')
    assert (s.explanatory, s.response, s.shadow, s.cost.kind, s.cost.lam) == (
        ["Size", "Region"], "Var2", None, "variable", 1.0,
    )  # fmt: skip
    assert parse_specify_table('"Size""Region"|"Var2"|"Var2"|-2').cost.kind == "unity"
    for text in ('"Size""Region"|"Var2"||"Var3"|0.5', '"Size""Region"|"Var2"||"Var3",0.5'):
        s = parse_specify_table(text)
        assert s.shadow is None and s.cost.variable == "Var3" and s.cost.lam == 0.5
    assert parse_specify_table('"Size""Region"|"Var2"||-1').cost.kind == "frequency"
    assert parse_specify_table('"Size"|"Var2"||-3').cost.kind == "distance"
    assert parse_specify_table('"region""gender"|<freq>|""|""').response is None
    assert parse_specify_table('"a"|<FREQ>').is_frequency


@pytest.mark.parametrize(
    "text, msg",
    [
        ('"Size""Region"', "response"),
        ('"Size"|"V"||"C"|2', "lambda"),
        ('"Size"|"V"||-4', "-1, -2, -3"),
        ('|"V"', "1 to 6"),
        ('"a""b""c""d""e""f""g"|"V"', "1 to 6"),
    ],
)
def test_specifytable_errors(text, msg):
    with pytest.raises(ValueError, match=msg):
        parse_specify_table(text)


# ---------------------------------------------- SUPPRESS (argusqt/docs/formats.md §8.5)
def test_suppress_defaults():
    """Positions, defaults and types come from the method's parameter dataclass."""
    assert parse_suppress("OPT(1)").params.to_mapping() == {
        "max_minutes": 10, "singleton_singleton": True, "singleton_multiple": True,
        "min_freq_option": True,
    }  # fmt: skip
    rnd = parse_suppress("RND(1, 5)")
    assert rnd.params.to_mapping() == {
        "base": 5, "steps": 0, "max_minutes": 10, "partitions": False, "stop_rule": 3,
        "unit_cost": False,
    }  # fmt: skip
    assert parse_suppress("rnd(2,10,1,5,1,2)").params.stop_rule == 2
    mod = parse_suppress("MOD(1, 5, 1, 1, 0)")
    assert mod.params.max_minutes == 5 and mod.params.min_freq_option is False
    assert parse_suppress("MOD(0, 1)").table == 0  # linked
    assert parse_suppress("OPT(0, 1)").table == 0  # linked, as the GUI writes it (bug 2)
    assert parse_suppress("CTA(1)").params.to_mapping() == {
        "fixed_directions": False, "max_minutes": 10, "levels_as_given": False,
    }  # fmt: skip
    assert parse_suppress("OPT(1,,0)").params.max_minutes == 10  # an empty token: default


@pytest.mark.parametrize(
    "text, msg",
    [
        (
            "HEUR(0)",
            "HEUR cannot protect linked tables together \\(table 0\\); the methods "
            "that can are OPT, MOD, GH",
        ),
        ("RND(1)", "RND needs the parameter base \\(rounding base\\): a whole number ≥ 1"),
        (
            "RND(1,5,0,10,0,4)",
            "parameter 5 \\(stopRule, stop rule\\): expected 1 \\(first "
            "RAPID solution\\), 2 \\(first feasible\\), 3 \\(optimal\\), got 4",
        ),
        ("XYZ(1)", "unknown protection method 'XYZ'; expected one of OPT, MOD, GH, HEUR, NET, RND"),
        ("OPT(1,2,3,4,5,6)", "OPT takes at most 4 parameters after the table number, got 5"),
        ("OPT(1,2,3)", "parameter 2 \\(singSing, protect singletons\\): expected 0 or 1"),
        (
            "MOD(1,0)",
            "parameter 1 \\(maxMinPerSubtable, maximum time per subtable\\): "
            "expected a number > 0 and ≤ 525600 \\(min\\), got 0",
        ),
        ("OPT 1", "method\\(table"),
        (
            "GH(1,100,2)",
            "parameter 2 \\(modelSize, model size\\): expected 0 \\(normal\\), 1 \\(large\\)",
        ),
        ("GH(1,0)", "parameter 1 \\(aprioriPercentage, a-priori bounds\\): expected a number > 0"),
        ("NET(1,1)", "NET takes at most 0 parameters after the table number, got 1"),
        ("NET(0)", "NET cannot protect linked tables together"),
        ("OPT(a)", "table number"),
    ],
)
def test_suppress_errors(text, msg):
    with pytest.raises(ValueError, match=msg):
        parse_suppress(text)


# -------------------------------------------- WRITETABLE (argusqt/docs/formats.md §8.6)
def test_writetable_forms():
    w = parse_writetable('(2,4,SE+,"y20.tab")')
    assert (w.table, w.out_type, w.options["SE"], w.path) == (2, 4, True, "y20.tab")
    w = parse_writetable('(1, 2, , "a, b.csv")')
    assert w.options["FL"] and w.path == "a, b.csv"
    with pytest.raises(ValueError, match="option"):
        parse_writetable('(1,3,3,"x.txt")')  # the manual's invalid example
    assert parse_writetable('(1,7,AO+AC+,"x.txt")').options["AO"]  # CKM format
    with pytest.raises(ValueError, match="output type 1–7"):
        parse_writetable('(1,8,,"x.txt")')
    with pytest.raises(ValueError, match="4 arguments"):
        parse_writetable('(1,3,"x.txt")')


def test_writetable_continuation_line(tmp_path):
    cmds = _parse('<WRITETABLE>\n  (1, 1, AS+, "x1.csv")\n<CLEAR>\n', tmp_path)
    assert cmds[0].line == 1 and cmds[0].args.path == "x1.csv" and cmds[0].args.out_type == 1
    assert cmds[1].name == "CLEAR"


# ---------------------------------------------------------------- lexical rules
def test_comments_outside_quotes(tmp_path):
    assert strip_comment('<LOGBOOK> "a//b.log" // note') == '<LOGBOOK> "a//b.log" '
    cmds = _parse('// header\n\n   <logbook> "x.log"   // trailing\n<solver> free\n', tmp_path)
    assert [(c.name, c.line, c.args) for c in cmds] == [
        ("LOGBOOK", 3, "x.log"),
        ("SOLVER", 4, "FREE"),
    ]


def test_apriori_and_recode_arguments(tmp_path):
    cmds = _parse(
        '<APRIORI> "a.hst", 1, ","\n<APRIORI> "b.hst", 2, ";", 0, 1\n<RECODE> 1, "Region", 2\n',
        tmp_path,
    )
    a, b, r = (c.args for c in cmds)
    assert (a.path, a.table, a.sep, a.ignore_errors, a.expand_trivial) == (
        "a.hst",
        1,
        ",",
        True,
        False,
    )
    assert (b.sep, b.ignore_errors, b.expand_trivial) == (";", False, True)
    assert (r.variable, r.level) == ("Region", 2)


# ---------------------------------------------------------------- errors name file and line
@pytest.mark.parametrize(
    "text, line, msg",
    [
        ('<OPENMICRODATA> "a"\n<FOO> 1\n', 2, "unknown command <FOO>"),
        ("// c\nREADMICRODATA\n", 2, "expected a command"),
        ("<SAFETYRULE> P(15,3)|XX(1)\n", 1, "SAFETYRULE"),
        ('<APRIORI> "a.hst", 1, ,\n', 1, "quotes"),
        ("<READTABLE> 3\n", 1, "totals mode"),
        ("<SOLVER> GUROBI\n", 1, "XPRESS, CPLEX or FREE"),
        ("<CLEAR> now\n", 1, "no arguments"),
        ("\n\n<WRITETABLE>\n", 3, "no arguments"),
        ("<SUPPRESS> OPT(1,1\n", 1, "method"),
        ("<RECODE> 1, Size\n", 1, "recode file"),
    ],
)
def test_errors_with_file_and_line(tmp_path, text, line, msg):
    err = _error(text, tmp_path)
    assert err.line == line
    assert msg in err.message
    assert str(err).startswith(f"{tmp_path / 't.arb'}, line {line}: ")


def test_missing_file(tmp_path):
    with pytest.raises(BatchError, match="cannot read"):
        parse_arb(tmp_path / "nope.arb")


def test_parse_lines_direct():
    cmds = parse_arb_lines(["<READMICRODATA>", "<GOINTERACTIVE>"], "x.arb")
    assert [c.name for c in cmds] == ["READMICRODATA", "GOINTERACTIVE"]
