"""Tabular input (argusqt/docs/formats.md §3) on the real pp.tab and tabdata_ex1.tab, plus error
cases."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from argusqt.errors import InputError, SpecificationError
from argusqt.io.rda import read_rda
from argusqt.io.tabular import read_tab
from argusqt.model.table import CostSpec, TableSpec
from argusqt.rules.parse import parse_safety_rule

REGION_ORDER = [
    "Total",
    "Nr",
    " 1",
    " 2",
    " 3",
    "Os",
    " 4",
    " 5",
    " 6",
    " 7",
    "Ws",
    " 8",
    " 9",
    "10",
    "Zd",
    "11",
    "12",
    "99",
]


@pytest.fixture
def pp(tmp_path, shared_data):
    d = shutil.copytree(shared_data / "tableinput", tmp_path / "tableinput")
    return read_rda(d / "pp.rda", kind_hint="tabular"), d / "pp.tab"


@pytest.fixture
def ex1(tmp_path, shared_data):
    d = shutil.copytree(shared_data / "batch_ex1", tmp_path / "batch_ex1")
    return read_rda(d / "metadata_ex1.rda", kind_hint="tabular"), d / "tabdata_ex1.tab"


def pp_spec(rule: str = "") -> TableSpec:
    return TableSpec(
        ["Size", "Region"],
        "Var2",
        "Var2_Shadow",
        CostSpec("variable", "Var2"),
        rules=parse_safety_rule(rule),
    )


def ex1_spec(rule: str = "MAN(20)") -> TableSpec:
    return TableSpec(["region", "gender"], "freq", rules=parse_safety_rule(rule))


def test_pp_given_status(pp):
    meta, tab = pp
    t = read_tab(meta, tab, pp_spec(), totals_mode=2)
    assert t.n_cells == 162 and t.shape == (9, 18)
    assert t.dims[0].codes == ["Total", " 2", " 4", " 5", " 6", " 7", " 8", " 9", "99"]
    assert t.dims[1].codes == REGION_ORDER
    assert t.value[0] == pytest.approx(16847646.84)
    assert t.freq[0] == 42723 and t.status[0] == 2 and t.decimals == 2
    assert t.top[0].tolist() == [175677.0, 141482.0]
    c = t.cell_index((1, 1))  # (" 2", "Nr"): U with PL 0,75 from the file
    assert (t.value[c], t.freq[c], t.status[c]) == (5.0, 6.0, 9)
    assert t.lpl[c] == pytest.approx(0.75) and t.upl[c] == pytest.approx(0.75)
    c = t.cell_index((1, 6))  # (" 2", " 4"): response 4, shadow 5 (hand-edited file)
    assert (t.value[c], t.shadow[c]) == (4.0, 5.0)
    assert t.status[t.cell_index((1, 4))] == 14  # E line, frequency 0 → empty
    counts = np.bincount(t.status, minlength=15)
    assert counts[9] == 9 and counts[14] == 43 and counts[2] == 110
    assert t.lpl[0] == pytest.approx(0.01)  # safe cells: MinPL
    assert t.cost[0] == pytest.approx(16847646.84)


def test_pp_mode0_names_failing_relations(pp):
    meta, tab = pp
    with pytest.raises(InputError) as e:
        read_tab(meta, tab, pp_spec(), totals_mode=0)
    msg = str(e.value)
    assert "3 relation(s) fail" in msg and "cell (Total, Os) = 3703896.00" in msg
    assert "parts sum to 3703895.00" in msg


def test_pp_mode1_recomputes_totals(pp):
    meta, tab = pp
    t = read_tab(meta, tab, pp_spec(), totals_mode=1, keep_status=True)
    assert t.value[0] == pytest.approx(16847645.84)  # the hand edit of (" 2", " 4") shows
    assert abs(t.relations @ t.value).max() < 1e-6
    assert t.status[0] == 2  # kept ("1T")
    assert t.top[t.cell_index((1, 0))].tolist() == [5.0, 5.0]  # top-2 of the row " 2"
    t = read_tab(meta, tab, pp_spec(), totals_mode=1, keep_status=False)
    assert t.status[0] == 1  # recomputed total, no rule active: safe


def test_pp_with_rules(pp):
    meta, tab = pp
    t = read_tab(meta, tab, pp_spec("P(10)|FREQ(3,30)"), totals_mode=2)
    c = t.cell_index((1, 2))  # (" 2", " 1"): one contributor of 5
    assert t.status[c] == 3 and t.upl[c] == pytest.approx(0.5) and t.lpl[c] == pytest.approx(0.5)
    assert t.status[0] == 1  # given S discarded, the rules say safe
    assert t.status[t.cell_index((1, 4))] == 14
    assert not np.isin(t.status, [2, 9]).any()


def test_ex1_e8(ex1):
    meta, tab = ex1
    t = read_tab(meta, tab, ex1_spec())
    assert t.n_cells == 15
    assert t.dims[0].codes == ["Total", "A", "B", "C", "D"]
    assert t.dims[1].codes == ["Total", "male", "female"]
    assert t.value.reshape(5, 3).tolist() == [
        [5146, 2757, 2389],
        [1032, 895, 137],
        [1726, 753, 973],
        [1055, 569, 486],
        [1333, 540, 793],
    ]
    af = t.cell_index((1, 2))
    assert t.status[af] == 9 and t.lpl[af] == 1 and t.upl[af] == 1
    assert (np.delete(t.status, af) == 2).all()
    assert (t.freq == 1).all()
    assert t.cost.tolist() == t.value.tolist()


def test_ex1_manual_margin_without_pl_columns(tmp_path, ex1):
    meta, tab = ex1
    rda = (tab.parent / "metadata_ex1.rda").read_text()
    rda = rda.split("lpl")[0]
    (tab.parent / "m2.rda").write_text(rda)
    lines = [",".join(ln.split(",")[:4]) for ln in tab.read_text().splitlines()]
    (tab.parent / "t2.tab").write_text("\n".join(lines) + "\n")
    meta2 = read_rda(tab.parent / "m2.rda", kind_hint="tabular")
    t = read_tab(meta2, tab.parent / "t2.tab", ex1_spec())
    af = t.cell_index((1, 2))
    assert (
        t.status[af] == 9 and t.lpl[af] == pytest.approx(27.4) and t.upl[af] == pytest.approx(27.4)
    )


def _edit(tab, old: str, new: str, name: str):
    text = tab.read_text()
    assert old in text
    out = tab.parent / name
    out.write_text(text.replace(old, new, 1))
    return out


def test_bad_status_letter(ex1):
    meta, tab = ex1
    bad = _edit(ex1[1], "A,female, 137,U", "A,female, 137,X", "bad.tab")
    with pytest.raises(InputError, match=r"bad.tab, line 6: expected a status S .*got 'X'"):
        read_tab(meta, bad, ex1_spec())
    low = _edit(ex1[1], "A,female, 137,U", "A,female, 137,u", "low.tab")
    assert read_tab(meta, low, ex1_spec()).status[5] == 9  # case-insensitive


def test_duplicate_cell(ex1):
    meta, tab = ex1
    dup = _edit(tab, "    B,  male, 753", "    A,  male, 753", "dup.tab")
    with pytest.raises(
        InputError,
        match=r"dup.tab, line 8: cell \(A, male\) is given twice "
        r"\(first on line 5\)",
    ):
        read_tab(meta, dup, ex1_spec())


def test_non_additive_mode0(ex1):
    meta, tab = ex1
    bad = _edit(tab, "    A, Total,1032", "    A, Total,1033", "nonadd.tab")
    parts = r"cell \(A, Total\) = 1033 on line 4 but its parts sum to 1032"
    with pytest.raises(InputError, match=r"nonadd.tab, line 1: .*" + parts):
        read_tab(meta, bad, ex1_spec(), totals_mode=0)
    t = read_tab(meta, bad, ex1_spec(), totals_mode=2)
    assert t.value[3] == 1033
    t = read_tab(meta, bad, ex1_spec(), totals_mode=1)
    assert t.value[3] == 1032 and t.status[3] == 1


def test_unknown_hierarchy_code(ex1):
    meta, tab = ex1
    bad = _edit(tab, "    D,female", "    E,female", "unk.tab")
    with pytest.raises(InputError, match=r"unk.tab, line 15: code 'E' of region is not a node"):
        read_tab(meta, bad, ex1_spec(), totals_mode=2)


def test_synthetic_flat_codes_decimal_comma_frequency(tmp_path):
    (tmp_path / "m.rda").write_text(
        '<SEPARATOR> ";"\nsize "99"\n <RECODEABLE>\n <TOTCODE> "All"\n'
        "val\n <NUMERIC>\n <DECIMALS> 1\nn\n <FREQUENCY>\ntop1\n <MAXSCORE>\n"
    )
    (tmp_path / "t.tab").write_text("// comment\nAll;12,5;3;6\n1;2,5;1;2,5\n10;10;2;6\n")
    meta = read_rda(tmp_path / "m.rda", kind_hint="tabular")
    t = read_tab(meta, tmp_path / "t.tab", TableSpec(["size"], "val"))
    assert t.dims[0].codes == ["All", " 1", "10", "99"]
    assert t.value.tolist() == [12.5, 2.5, 10.0, 0.0]
    assert t.freq.tolist() == [3, 1, 2, 0]
    assert t.status.tolist() == [1, 1, 1, 14]  # no status column, no rules: safe
    assert t.lpl[0] == pytest.approx(0.1)
    t = read_tab(
        meta, tmp_path / "t.tab", TableSpec(["size"], "val", rules=parse_safety_rule("FREQ(2,10)"))
    )
    assert t.status.tolist() == [1, 5, 1, 14] and t.upl[1] == pytest.approx(0.25)
    ft = read_tab(
        meta, tmp_path / "t.tab", TableSpec(["size"], None, rules=parse_safety_rule("FREQ(2,10)"))
    )
    assert ft.value.tolist() == [3, 1, 2, 0] and ft.status[1] == 5 and ft.upl[1] == 1
    with pytest.raises(SpecificationError, match="largest contributions"):
        read_tab(
            meta,
            tmp_path / "t.tab",
            TableSpec(["size"], "val", rules=parse_safety_rule("NK(2,80)")),
        )


def test_consistency_errors(tmp_path):
    (tmp_path / "m.rda").write_text(
        '<SEPARATOR> ";"\nsize\n <RECODEABLE>\n <TOTCODE> "All"\n'
        "val\n <NUMERIC>\nn\n <FREQUENCY>\ntop1\n <MAXSCORE>\ntop2\n <MAXSCORE>\n"
    )
    meta = read_rda(tmp_path / "m.rda", kind_hint="tabular")
    cases = {
        "All;5;0;5;0\n": "non-zero response with frequency 0",
        "All;;2;0;0\n": "frequency is given but the response is empty",
        "All;5;2;2;3\n": "must not increase",
        "All;5;2;4;3\n": "sum to more than the response",
        "All;5;x;4;1\n": r"line 2, column 7: expected a finite number in field 3 \(n\), got 'x'",
        "All;5;2;4\n": "expected 5 fields",
    }
    for k, (text, msg) in enumerate(cases.items()):
        f = tmp_path / f"c{k}.tab"
        f.write_text("// header\n" + text)
        with pytest.raises(InputError, match=msg) as e:
            read_tab(meta, f, TableSpec(["size"], "val"), totals_mode=2)
        assert "line 2" in str(e.value)
    f = tmp_path / "ok.tab"
    f.write_text("All;0;0;0;0\n")  # rule 10: skipped, cell stays empty
    assert read_tab(meta, f, TableSpec(["size"], "val"), totals_mode=2).status.tolist() == [14]
