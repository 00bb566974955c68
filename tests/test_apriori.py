"""A-priori files (argusqt/docs/formats.md §7), incl. the real enterprise test_3a.hst."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from argusqt.errors import InputError
from argusqt.io.apriori import apply_apriori, read_apriori
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec
from argusqt.rules.parse import parse_safety_rule

REGION = [(1, "RegA")] + [(2, c) for c in "01 02 03 04 05 06 07 09".split()]
REGION += [(1, "RegB")] + [(2, c) for c in "08 10 11 12".split()]


def region_product() -> Table:
    """Region (KohStatReg.hrc tree) × product (flat): every cell safe except (RegA, Total)."""
    region = CodeList.from_tree("region", REGION)
    product = CodeList.flat("product", ["A", "B"])
    n = len(region) * len(product)
    v = np.full(n, 10.0)
    spec = TableSpec(["region", "product"], "turnover", rules=parse_safety_rule("MAN(10)"))
    t = Table(spec, [region, product], v, np.ones(n), v, v, np.zeros((n, 2)))
    t.status[t.cell_index((1, 0))] = 3
    t.lpl[t.cell_index((1, 0))] = t.upl[t.cell_index((1, 0))] = 4
    return t


def test_real_test_3a_hst(tmp_path, shared_data):
    src = shared_data / "enterprise" / "expected" / "test_3a.hst"
    hst = tmp_path / "test_3a.hst"
    shutil.copy(src, hst)
    lines = read_apriori(hst, ",", 2)
    assert len(lines) == 15
    assert lines[0].codes == ("", "") and lines[0].action == "P"
    assert lines[1].codes == ("RegA", "") and lines[1].line == 2
    t = region_product()
    report = apply_apriori(t, hst, ",", ignore_errors=True)
    assert report.accepted["P"] == 14 and report.rejected["P"] == 1
    assert "line 2" in report.errors[0] and "status 3" in report.errors[0]
    region = t.dims[0]
    for code in ["01", "02", "03", "04", "05", "06", "07", "09", "RegB", "08", "10", "11", "12"]:
        assert t.status[t.cell_index((region.codes.index(code), 0))] == 10
    assert t.status[0] == 10
    assert t.status[t.cell_index((1, 0))] == 3  # unsafe cells cannot be protected
    assert t.status[t.cell_index((2, 1))] == 1  # product codes untouched
    with pytest.raises(InputError, match="line 2"):
        apply_apriori(region_product(), hst, ",", ignore_errors=False)


def test_actions_and_transitions(tmp_path):
    f = tmp_path / "a.hst"
    f.write_text(
        "// comment\n"
        " 01 ; A ; u\n"
        "01;B;S\n"
        "02;A;c;0\n"
        "02;B;W;7.5\n"
        "01;A;pl;100;200\n"
        "03;A;M\n"
        "03;B;ml\n"
        "RegA;B;pl;1;1\n"  # PL only for primaries
        "XX;A;p\n"  # unknown code
        "04;A;AB;1;2\n"  # not implemented
        "04;A;q\n"  # unknown action
        "04;Total;s\n"
    )
    t = region_product()
    t.status[t.cell_index((2, 2))] = 3
    rep = apply_apriori(t, f, ";")
    reg = t.dims[0]
    cell = {
        c: t.cell_index((reg.codes.index(c[0]), t.dims[1].codes.index(c[1])))
        for c in [
            ("01", "A"),
            ("01", "B"),
            ("02", "A"),
            ("02", "B"),
            ("03", "A"),
            ("03", "B"),
            ("04", "Total"),
        ]
    }
    assert t.status[cell["01", "A"]] == 9
    assert (t.lpl[cell["01", "A"]], t.upl[cell["01", "A"]]) == (100, 200)
    assert t.status[cell["01", "B"]] == 1  # set safe by hand; no rule active → 1, not 2
    assert t.cost[cell["02", "A"]] == 1 and t.cost[cell["02", "B"]] == 7.5
    assert t.status[cell["03", "A"]] == 12 and t.status[cell["03", "B"]] == 11
    assert t.status[cell["04", "Total"]] == 1
    assert rep.accepted == {"U": 1, "S": 2, "C": 1, "W": 1, "PL": 1, "M": 1, "ML": 1}
    assert rep.rejected == {"PL": 1, "P": 1, "?": 2}
    assert any("line 9" in e and "unsafe cells 3-9" in e for e in rep.errors)
    assert any("line 10" in e and "'XX'" in e for e in rep.errors)
    assert any("line 11" in e and "AB" in e for e in rep.errors)
    assert any("line 12" in e and "'q'" in e for e in rep.errors)


def test_stop_on_error_undoes_everything(tmp_path):
    f = tmp_path / "a.hst"
    f.write_text("01,A,u\n01,A,p\n")
    t = region_product()
    before = t.status.copy()
    with pytest.raises(InputError, match=r"a.hst, line 2: cannot protect"):
        apply_apriori(t, f, ",", ignore_errors=False)
    assert (t.status == before).all()


def test_first_line_needs_separator(tmp_path):
    f = tmp_path / "a.hst"
    f.write_text("01;A;u\n")
    with pytest.raises(InputError, match="separator ','"):
        apply_apriori(region_product(), f, ",")


def test_e15_3_forms(tmp_path):
    f = tmp_path / "a.hst"
    f.write_text('RegA,"",p\nZd, 5, pl, 100, 200\n" 5", 5, c, 1\nNr, 4, u\n')
    lines = read_apriori(f)  # action found from the end without the table
    assert [(x.codes, x.action, x.values) for x in lines] == [
        (("RegA", ""), "P", ()),
        (("Zd", "5"), "PL", (100.0, 200.0)),
        (("5", "5"), "C", (1.0,)),
        (("Nr", "4"), "U", ()),
    ]


def test_expand_trivial_levels(tmp_path):
    region = CodeList.from_tree("r", [(1, "A"), (2, "A1"), (1, "B"), (2, "B1"), (2, "B2")])
    n = len(region)
    v = np.ones(n)
    t = Table(TableSpec(["r"], "y"), [region], v, v, v, v, np.zeros((n, 2)))
    f = tmp_path / "a.hst"
    f.write_text("A1,p\n")
    rep = apply_apriori(t, f, ",", expand_trivial=True)
    assert rep.accepted["P"] == 1 and rep.cells_changed == 2
    assert t.status.tolist() == [1, 10, 10, 1, 1, 1]
    t.status[:] = 1
    apply_apriori(t, f, ",", expand_trivial=False)
    assert t.status.tolist() == [1, 1, 10, 1, 1, 1]


def test_generate_reproduces_test_3a_hst(tmp_path, shared_data):
    """Generate apriori from test_3a.txt (keep region, default actions) = test_3a.hst."""
    from argusqt.io.apriori import generate_apriori

    exp = shared_data / "enterprise" / "expected"
    src = tmp_path / "test_3a.txt"
    shutil.copy(exp / "test_3a.txt", src)
    out = tmp_path / "gen.hst"
    assert generate_apriori(src, out, keep=[True, False]) == 15
    want = (exp / "test_3a.hst").read_text().splitlines()
    got = out.read_text().splitlines()
    # our files start with a CONFIDENTIAL comment line (cell statuses), then τ-Argus's lines
    assert (
        got[0] == "// CONFIDENTIAL — not for publication: cell statuses for the next "
        "protection run (a-priori file)"
    )
    assert got[1:] == want


def test_write_apriori_from_table(tmp_path):
    from argusqt.io.apriori import write_apriori

    t = region_product()
    t.status[t.cell_index((2, 1))] = 14
    out = tmp_path / "t.hst"
    n = write_apriori(t, out, actions={1: "c 5", 3: "u"})
    lines = out.read_text().splitlines()
    assert lines[0].startswith("// CONFIDENTIAL — not for publication")
    lines = lines[1:]
    assert n == len(lines) == t.n_cells - 1
    assert lines[0] == '"","",c,5' and 'RegA,"",u' in lines and "01,A,c,5" not in lines
    rep = apply_apriori(region_product(), out)
    assert rep.n_rejected == 0 and rep.accepted["C"] == n - 1 and rep.accepted["U"] == 1


def test_written_codes_are_neutralised_and_read_back(tmp_path):
    """A code a spreadsheet would run (`=…`) is written with a `'` in front; reading the file
    back drops it, so the a-priori file still names the table's own cell."""
    from argusqt.io.apriori import write_apriori

    def table() -> Table:
        product = CodeList.flat("product", ["=HYPERLINK(1)", "B"])
        region = CodeList.flat("region", ["r1", "r2"])
        n = len(region) * len(product)
        v = np.full(n, 10.0)
        spec = TableSpec(["region", "product"], "turnover", rules=parse_safety_rule("MAN(10)"))
        return Table(spec, [region, product], v, np.ones(n), v, v, np.zeros((n, 2)))

    out = tmp_path / "t.hst"
    n = write_apriori(table(), out, actions={1: "p"})
    lines = out.read_text().splitlines()[1:]
    assert "r1,'=HYPERLINK(1),p" in lines
    assert not any(f.startswith(("=", '"=')) for ln in lines for f in ln.split(","))
    t2 = table()
    rep = apply_apriori(t2, out)
    assert rep.n_rejected == 0 and rep.accepted["P"] == n
    assert (t2.status == 10).all()
