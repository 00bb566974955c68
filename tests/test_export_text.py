"""Text outputs (types 1–5) on hand-built ex1/ex2 tables against τ-Argus's files
(argusqt/docs/formats.md §10)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from confidential_helpers import body_bytes, body_lines

from argusqt.errors import SpecificationError
from argusqt.export.codevalue import codevalue_lines
from argusqt.export.csvtable import csvtable_lines
from argusqt.export.intermediate import intermediate_lines
from argusqt.export.sbs import sbs_lines
from argusqt.export.writetable import parse_options, write_table
from argusqt.io.codelists import codelist_for
from argusqt.io.microdata import read_microdata
from argusqt.io.rda import read_rda
from argusqt.model.codelist import CodeList
from argusqt.model.rulespec import FreqRule, PRule, SafetyRules
from argusqt.model.table import CostSpec, ProtectionInfo, Table, TableSpec
from argusqt.model.tabulate import build_table
from argusqt.rules.classify import apply_rules

# E8: region Total, A..D × gender Total, male, female
EX1_VALUES = [5146, 2757, 2389, 1032, 895, 137, 1726, 753, 973, 1055, 569, 486, 1333, 540, 793]
EX1_STATUS = [2, 2, 2, 2, 12, 9, 2, 2, 2, 2, 12, 12, 2, 2, 2]
EX1_EXPECTED = """\
"region","gender","freq","Status"
"Total","Total",5146,2
"Total","male",2757,2
"Total","female",2389,2
"A","Total",1032,2
"A","male",895,12
"A","female",137,9
"B","Total",1726,2
"B","male",753,2
"B","female",973,2
"C","Total",1055,2
"C","male",569,12
"C","female",486,12
"D","Total",1333,2
"D","male",540,2
"D","female",793,2""".splitlines()

EX2_VALUES = [
    10484.95, 5725.07, 4759.88, 2128.19, 1938.79, 189.40, 3474.86, 1476.06, 1998.80,
    2249.52, 1192.16, 1057.36, 2632.38, 1118.06, 1514.32,
]  # fmt: skip
EX2_STATUS = [1, 1, 1, 1, 11, 3, 1, 1, 1, 1, 11, 11, 1, 1, 1]
EX2_FREQ = [100, 50, 50, 20, 18, 2, 40, 21, 19, 20, 10, 10, 20, 11, 9]
EX2_EXPECTED = """\
"region","gender","num1","Status"
"Total","Total",10484.95,1
"Total","  male",5725.07,1
"Total","female",4759.88,1
"A","Total",2128.19,1
"A","  male",1938.79,11
"A","female",189.40,3
"B","Total",3474.86,1
"B","  male",1476.06,1
"B","female",1998.80,1
"C","Total",2249.52,1
"C","  male",1192.16,11
"C","female",1057.36,11
"D","Total",2632.38,1
"D","  male",1118.06,1
"D","female",1514.32,1""".splitlines()


def _dims(male: str) -> list[CodeList]:
    region = CodeList.from_tree("region", [(1, c) for c in "ABCD"])
    gender = CodeList.from_tree("gender", [(1, male), (1, "female")])
    return [region, gender]


def ex1_table() -> Table:
    """E8 after OPT: frequency counts as response `freq`, statuses 2/9/12."""
    v = np.array(EX1_VALUES, dtype=float)
    t = Table(
        spec=TableSpec(["region", "gender"], "freq", rules=SafetyRules(manual_margin=20)),
        dims=_dims("male"),
        value=v,
        freq=v.copy(),
        shadow=v.copy(),
        cost_raw=v.copy(),
        top=np.zeros((15, 2)),
    )
    t.status = np.array(EX1_STATUS, dtype=np.int8)
    t.lpl[5] = t.upl[5] = 1
    return t


def ex2_table() -> Table:
    """E9 after OPT: num1 (2 decimals), P(20,5) and FREQ(5,20); (A,female) = 112.02 + 77.38."""
    v = np.array(EX2_VALUES)
    top = np.zeros((15, 6))
    top[:, 0] = v * 0.1  # irrelevant for the checked lines except (A,female)
    top[5, :2] = [112.02, 77.38]
    rules = SafetyRules(p_individual=[PRule(20, 100, 5)], freq_individual=FreqRule(5, 20))
    t = Table(
        spec=TableSpec(["region", "gender"], "num1", rules=rules),
        dims=_dims("  male"),
        value=v,
        freq=np.array(EX2_FREQ, dtype=float),
        shadow=v.copy(),
        cost_raw=v.copy(),
        top=top,
        decimals=2,
    )
    t.status = np.array(EX2_STATUS, dtype=np.int8)
    t.lpl[5] = t.upl[5] = 22.404
    return t


def _read(path: Path) -> list[str]:
    return path.read_text().splitlines()


# ---------------------------------------------------------------- code-value (E8, E9, E16)
@pytest.mark.parametrize("exact", ["", "TA+"])  # no formula-like text: both modes alike
def test_codevalue_ex1_matches_expected_file(tmp_path, exact):
    out = tmp_path / "tabout_ex1.txt"
    write_table(ex1_table(), 3, "AS+FL+" + exact, out)
    assert body_lines(out) == EX1_EXPECTED  # after the CONFIDENTIAL banner


@pytest.mark.parametrize("exact", ["", "TA+"])
def test_codevalue_ex2_matches_expected_file(tmp_path, exact):
    out = tmp_path / "tabout_ex2.txt"
    write_table(ex2_table(), 3, "AS+FL+" + exact, out)
    assert body_lines(out) == EX2_EXPECTED


def test_codevalue_without_status_hides_suppressed_and_empty():
    t = ex1_table()
    t.status[8] = 14
    lines = codevalue_lines(t, quotes=True)
    assert lines[0] == '"Total","Total",5146'
    assert lines[4] == '"A","male",x'
    assert lines[5] == '"A","female",x'
    assert lines[8] == '"B","female",-'
    assert lines[6] == '"B","Total",1726'


def test_codevalue_empty_and_zero_cells_e16():
    t = ex2_table()
    t.status[8] = 14
    t.value[8] = 0
    t.freq[8] = 0
    t.value[7] = 0.0
    lines = codevalue_lines(t, add_status=True)
    assert lines[8] == '"B","female",-,14'
    assert lines[7] == '"B","  male",0.00,1'
    # SE+ drops the cell without contributors
    se = codevalue_lines(t, add_status=True, suppress_empty=True)
    assert len(se) == 14 and '"B","female",-,14' not in se


def test_codevalue_quote_inside_code_and_no_quotes():
    t = ex1_table()
    t.dims[0].codes[1] = 'A"1'
    lines = codevalue_lines(t, quotes=False, names_first=True)
    assert lines[0] == "region,gender,freq"
    assert lines[5] == "A'1,male,x"


def test_codevalue_rounded_and_cta():
    t = ex1_table()
    t.published = np.round(t.value / 5) * 5
    t.protection = ProtectionInfo("RND", "round")
    lines = codevalue_lines(t, add_status=True, names_first=True)
    assert lines[0] == '"region","gender","freq_Round","freq_Orig"'
    assert lines[6] == '"A","female",135,137'
    t.protection = ProtectionInfo("CTA", "cta")
    lines = codevalue_lines(t, add_status=True, names_first=True)
    assert lines[0] == '"region","gender","freq_CTA","freq_Orig","Status"'
    assert lines[6] == '"A","female",135,137,9'


def test_pivot_type2_always_has_header(tmp_path):
    out = tmp_path / "pivot.csv"
    write_table(ex1_table(), 2, "FL-", out)
    assert _read(out)[0] == '"region","gender","freq"'
    assert len(_read(out)) == 16


# ---------------------------------------------------------------- options
def test_option_string_parsing():
    assert parse_options("AS+FL+", 3) == {
        "AR": False, "AS": True, "FL": True, "HI": False, "HL": False,
        "QU": True, "SE": False, "SO": False, "TR": False, "TA": False,
    }  # fmt: skip
    assert parse_options("", 2)["FL"] is True
    assert parse_options("qu-", 3)["QU"] is False
    for bad in ("3", "AS", "XX+", "AS+F"):
        with pytest.raises(SpecificationError, match="option"):
            parse_options(bad)


def test_unknown_type_refused(tmp_path):
    with pytest.raises(SpecificationError, match="output type"):
        write_table(ex1_table(), 9, "", tmp_path / "x")


# ---------------------------------------------------------------- CSV table (type 1)
def test_csvtable_2d_layout():
    assert csvtable_lines(ex1_table()) == [
        ',"Total","male","female"',
        '"Total",5146,2757,2389',
        '"A",1032,x,x',
        '"B",1726,753,973',
        '"C",1055,x,x',
        '"D",1333,540,793',
        "",
    ]


def test_csvtable_1d_and_3d():
    region = CodeList.from_tree("region", [(1, "A"), (1, "B")])
    t = Table(
        spec=TableSpec(["region"], None),
        dims=[region],
        value=np.array([3.0, 1.0, 2.0]),
        freq=np.array([3.0, 1.0, 2.0]),
        shadow=np.array([3.0, 1.0, 2.0]),
        cost_raw=np.ones(3),
        top=np.zeros((3, 2)),
    )
    assert csvtable_lines(t) == [',"Total","A","B"', ",3,1,2"]
    year = CodeList.flat("year", ["2020"])
    dims = [year, *_dims("male")]
    v = np.arange(2 * 15, dtype=float)
    t3 = Table(
        spec=TableSpec(["year", "region", "gender"], None),
        dims=dims,
        value=v,
        freq=v + 1,
        shadow=v,
        cost_raw=v,
        top=np.zeros((30, 2)),
    )
    lines = csvtable_lines(t3)
    assert lines[0] == 'year,"Total"'
    assert lines[1] == ',"Total","male","female"'
    assert lines[2] == '"Total",0,1,2'
    assert lines[7] == ""
    assert lines[8] == 'year,"2020"'
    assert lines[9 + 1] == '"Total",15,16,17'
    assert len(lines) == 16


# ---------------------------------------------------------------- SBS (type 4, E9)
@pytest.mark.parametrize("tau_exact", [False, True])
def test_sbs_ex2_lines_e9(tau_exact):
    lines = sbs_lines(ex2_table(), tau_exact=tau_exact)
    assert '"A","female",189.40,2,F,59.1,40.9' in lines
    assert '"A","  male",1938.79,18,D' in lines
    assert '"B","female",1998.80,19,V' in lines
    assert lines[0] == '"Total","Total",10484.95,100,V'


@pytest.mark.parametrize(
    "out_type, options, what",
    [
        (3, "AS+", "status and true value"),
        (2, "AS+", "status and true value"),
        (3, "AS+TA+", "status and true value"),
        (4, "", "true values, flags"),
        (4, "TA+", "true values, flags"),
    ],
)
def test_internal_text_outputs_are_marked_by_a_sidecar(tmp_path, out_type, options, what):
    """AS+ code-value/pivot and SBS hold statuses and true values of suppressed cells: their
    sidecar `NAME.CONFIDENTIAL.txt` says CONFIDENTIAL and what they hold; the file is
    τ-Argus's lines unchanged (CSV readers would take a comment line for data)."""
    out = tmp_path / "internal.txt"
    files = write_table(ex2_table(), out_type, options, out)
    side = tmp_path / "internal.txt.CONFIDENTIAL.txt"
    assert files == [out, side]
    assert side.read_text(encoding="utf-8").startswith("CONFIDENTIAL — not for publication")
    assert what in side.read_text(encoding="utf-8")
    rest = out.read_text(encoding="utf-8").splitlines()
    assert not any("CONFIDENTIAL" in line for line in rest)
    if out_type == 4:
        assert rest == sbs_lines(ex2_table(), tau_exact="TA+" in options)
    else:
        assert '"A","female",189.40,3' in rest  # the true value of a primary


def test_sbs_flags_without_p_rule_and_levels():
    t = ex2_table()
    t.spec.rules.p_individual = []
    t.status[9] = 14
    t.status[3] = 5
    t.status[6] = 9
    lines = sbs_lines(t, levels=True)
    # status 3 without p% rule, 6 top values kept → C with x1 + x2
    assert '"A",1,"female",1,189.40,2,C,100.0' in lines
    assert '"A",1,"Total",0,2128.19,20,A' in lines
    assert '"B",1,"Total",0,3474.86,40,B,10.0' in lines
    assert len(lines) == 14  # the empty cell is omitted


# ---------------------------------------------------------------- intermediate (type 5)
def test_intermediate_lines_and_companion_rda(tmp_path):
    out = tmp_path / "inter.tab"
    files = write_table(ex2_table(), 5, "", out)
    assert files == [out, tmp_path / "inter.rda"]
    lines = _read(out)
    # an internal file: it says CONFIDENTIAL in a comment line the .tab readers skip
    assert lines.pop(0) == "// CONFIDENTIAL — not for publication"
    assert len(lines) == 15
    # codes;value;freq;shadow;cost;top1..top6;status;lpl;upl
    assert (
        lines[5]
        == '"A";"female";189.40;2;189.40;189.40;112.02;77.38;0.00;0.00;0.00;0.00;U;22.40;22.40'
    )
    assert lines[4].split(";")[12] == "M" and lines[0].split(";")[-3:] == ["S", "0.01", "0.01"]
    rda = (tmp_path / "inter.rda").read_text().splitlines()
    assert rda.pop(0) == "// CONFIDENTIAL — not for publication"
    assert rda[0] == '<SEPARATOR> ";"'
    assert '    <HIERCODELIST> "inter_region.hrc"' in rda
    assert rda.count("    <MAXSCORE>") == 6
    assert "StatusVar" in rda and "    <NUMERIC> <UPPERPL>" in rda
    assert _read(tmp_path / "inter_gender.hrc") == ["  male", "female"]


def test_intermediate_status_only_and_audit():
    from argusqt.protection.core.result import AuditResult

    t = ex1_table()
    lines = intermediate_lines(t, status_only=True)
    assert lines[5] == '"A";"female";137;137;137;U;1;1'  # value;freq;cost;status;lpl;upl
    n = t.n_cells
    lo = t.value.copy()
    hi = t.value.copy()
    lo[5], hi[5] = 0, 623
    audited = np.zeros(n, dtype=bool)
    audited[[4, 5, 10, 11]] = True
    t.audit = AuditResult(
        lower=lo, upper=hi, required_lower=lo, required_upper=hi,
        audited=audited, passed=np.ones(n, dtype=bool), exact=np.zeros(n, dtype=bool),
    )  # fmt: skip
    lines = intermediate_lines(t, status_only=True, audit=True)
    assert lines[5].endswith(";U;1;1;0;623;623;100.00;354.74;454.74")
    assert lines[0].endswith(";S;1;1;5146;5146;0;0;0;0")


# ---------------------------------------------------------------- τ-Argus's own files (E16)
# The enterprise table is built by argusqt (values and primaries are fixed by the rules); the
# secondary suppressions are copied from τ-Argus's file, since a pattern may legitimately
# differ. Every other byte of every line must then be identical.
@pytest.fixture(scope="module")
def enterprise_data(tmp_path_factory):
    from shared_paths import tauargus_dir

    dst = tmp_path_factory.mktemp("cv") / "enterprise"
    shutil.copytree(tauargus_dir() / "enterprise", dst)
    meta = read_rda(dst / "example_enterprise.rda")
    return meta, read_microdata(meta, dst / "example_enterprise.asc"), dst


@pytest.mark.compat
@pytest.mark.parametrize("options", ["AS+", "AS+TA+"])  # default and τ-Argus-exact texts
@pytest.mark.parametrize(
    "name, dims",
    [
        ("test_1.txt", ("act", "product")),
        ("test_2b.txt", ("act", "region")),
        ("test_3a.txt", ("region", "mun")),
    ],
)
def test_codevalue_matches_tauargus_file(enterprise_data, tmp_path, name, dims, options):
    meta, data, folder = enterprise_data
    rules = SafetyRules(
        p_holding=[PRule(10, 100, 1)], missing_safe=True, zero_range=10, manual_margin=10
    )
    spec = TableSpec(list(dims), "turnover", cost=CostSpec("variable", "turnover"), rules=rules)
    table = build_table(meta, data, spec, [], codelist_for=codelist_for)
    apply_rules(table)
    expected = (folder / "expected" / name).read_text().splitlines()
    given = np.array([int(line.rsplit(",", 1)[1]) for line in expected])
    assert len(given) == table.n_cells
    secondary = np.isin(given, (11, 12))
    table.status = np.where(secondary, given, table.status).astype(np.int8)
    out = tmp_path / name
    write_table(table, 3, options, out)
    ours = body_lines(out)  # the CONFIDENTIAL banner, then τ-Argus's lines
    diff = [(i, a, b) for i, (a, b) in enumerate(zip(ours, expected, strict=True)) if a != b]
    assert not diff, f"{len(diff)} lines differ, first: {diff[:3]}"
    # byte for byte but the line ends (τ-Argus wrote these on Windows: CRLF)
    assert body_bytes(out) == (folder / "expected" / name).read_bytes().replace(b"\r\n", b"\n")


def test_intermediate_of_a_rounded_table_writes_published_values():
    t = ex1_table()
    t.published = np.round(t.value / 5) * 5
    t.protection = ProtectionInfo("RND", "round")
    lines = intermediate_lines(t, status_only=True)
    assert lines[0].startswith('"Total";"Total";5145;5146;')
    assert lines[5].startswith('"A";"female";135;137;')


def test_internal_csv_outputs_read_unchanged_by_csv_readers(tmp_path):
    """A CSV reader (pandas, as rtauargus and τ-Argus's readers do) gets the header and one
    row per cell from an AS+ pivot file and an SBS file: no comment row to trip over."""
    import pandas as pd

    table = ex2_table()
    pivot = tmp_path / "pivot.csv"
    write_table(table, 2, "AS+", pivot)
    frame = pd.read_csv(pivot)
    assert list(frame.columns) == ["region", "gender", "num1", "Status"]
    assert len(frame) == table.n_cells and frame["Status"].dtype.kind == "i"
    sbs = tmp_path / "t.sbs"
    write_table(table, 4, "", sbs)
    rows = pd.read_csv(sbs, header=None, names=range(7))
    assert len(rows) == len(sbs_lines(table)) and not rows[0].astype(str).str.startswith("//").any()
