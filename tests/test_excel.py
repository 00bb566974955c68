"""Excel export: reload the workbook with openpyxl and check it cell by cell
(argusqt/docs/formats.md §10.1)."""

from __future__ import annotations

import io

import numpy as np
import openpyxl
import pytest

from argusqt.errors import ArgusError
from argusqt.export.excel import ExcelOptions, excel_bytes, write_excel
from argusqt.model.codelist import CodeList
from argusqt.model.rulespec import FreqRule, SafetyRules
from argusqt.model.table import ProtectionInfo, TableSpec
from argusqt.model.tabulate import build_fine, table_from_fine
from argusqt.protection.core.result import AuditResult


def build_workbook(table, options=None):
    """Save to bytes and load back (what a user opening the file sees); the content only,
    without the publication gate that `write_excel` passes first."""
    return openpyxl.load_workbook(io.BytesIO(excel_bytes(table, options)))


CONF = ExcelOptions(confidential=True)
BANNER = "CONFIDENTIAL — not for publication"


def _table(three: bool = False):
    """Region (N: A, B; S: C) × Size (1, 2, missing 9) [× Year 01, 02], values with 2 decimals."""
    reg_cats, size_cats, year_cats = ["A", "B", "C"], ["1", "2"], ["01", "02"]
    recs = [  # region, size, year, value
        (0, 0, 0, 1234.5),
        (0, 0, 1, 10.25),
        (0, 1, 0, 7.0),
        (1, 0, 0, 300.0),
        (1, 0, 1, 2.0),
        (1, 1, 1, 45.75),
        (2, 1, 0, 1000.0),
        (2, 1, 1, 99.99),
        (2, 0, 0, 5.0),
    ]
    r, s, y, v = (np.array(c) for c in zip(*recs, strict=True))
    cats = [(r, reg_cats), (s, size_cats)] + ([(y, year_cats)] if three else [])
    spec = TableSpec(
        ["Region", "Size"] + (["Year"] if three else []),
        "Turnover",
        rules=SafetyRules(freq_individual=FreqRule(2, 20)),
    )
    fine = build_fine(cats, v.astype(float), None, None, 2)
    region = CodeList.from_tree(
        "Region",
        [(1, "N"), (2, "A"), (2, "B"), (1, "S"), (2, "C")],
        labels={"N": "North", "A": '=HYPERLINK("http://evil")', "C": "+cmd"},
    )
    size = CodeList.flat("Size", size_cats, missing=["9"], labels={"1": "small"})
    dims = [region, size]
    maps = [np.array([2, 3, 5]), np.array([1, 2])]
    if three:
        dims.append(CodeList.flat("Year", year_cats))
        maps.append(np.array([1, 2]))
    t = table_from_fine(fine, dims, maps, spec, 2)
    t.name = "Turnover by region and size"
    return t


def _status_2d(t):
    # cells: region (Total N A B S C) × size (Total 1 2 9)
    st = t.status.reshape(t.shape).copy()
    st[2, 2] = 5  # A × 2: frequency-unsafe
    st[3, 2] = 11  # B × 2 (45.75): secondary
    st[5, 1] = 3
    st[4, 1] = 11
    t.status = st.ravel().astype(np.int8)
    return t


def test_table_sheet_cell_by_cell(tmp_path):
    t = _status_2d(_table())
    wb = build_workbook(t)
    assert wb.sheetnames == ["table"]  # the published workbook: the table only
    ws = wb["table"]
    assert ws["A1"].value == "Turnover by region and size"
    assert [ws.cell(4, c).value for c in range(1, 7)] == ["Region", "label", "Total", "1", "2", "9"]
    assert [ws.cell(5, c).value for c in range(3, 7)] == ["Total", "small", "2", "9"]
    assert [ws.cell(r, 1).value for r in range(6, 12)] == ["Total", "N", "A", "B", "S", "C"]
    assert ws.cell(7, 2).value == "North" and ws.cell(8, 1).alignment.indent == 2
    # outline levels = hierarchy depth, summary rows above their children
    assert [ws.row_dimensions[r].outline_level for r in range(6, 12)] == [0, 1, 2, 2, 1, 2]
    assert ws.sheet_properties.outlinePr.summaryBelow is False
    assert ws.column_dimensions["D"].outline_level == 1
    assert ws.freeze_panes == "C6"
    grid = [[ws.cell(r, c).value for c in range(3, 7)] for r in range(6, 12)]
    total = 1234.5 + 10.25 + 7 + 300 + 2 + 45.75 + 1000 + 99.99 + 5
    assert grid[0] == [
        pytest.approx(total),
        pytest.approx(1234.5 + 10.25 + 300 + 2 + 5),
        pytest.approx(7 + 45.75 + 1000 + 99.99),
        "-",
    ]
    assert grid[2] == [pytest.approx(1251.75), pytest.approx(1244.75), "x", "-"]  # A: 5 → x
    assert grid[3] == [pytest.approx(347.75), pytest.approx(302.0), "x", "-"]  # B: 11 → x
    assert grid[4][1] == "x" and grid[5][1] == "x"
    assert grid[5][2] == pytest.approx(1099.99)
    assert ws.cell(6, 3).number_format == "#,##0.00"
    assert ws.cell(6, 6).data_type == "s"  # "-" is data, stored as text
    # formula injection: labels kept as text, never formulas
    assert ws.cell(8, 2).value == '=HYPERLINK("http://evil")' and ws.cell(8, 2).data_type == "s"
    assert ws.cell(11, 2).value == "+cmd" and ws.cell(11, 2).quotePrefix
    # a legend explains the symbols, in words that do not tell why a cell is hidden
    legend = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(13, ws.max_row + 1)}
    assert legend["x"].startswith("not published") and legend["-"].startswith("empty")
    assert all(c.fill.fill_type is None for row in ws.iter_rows() for c in row)  # no colours


def test_write_excel_is_atomic_and_gated(tmp_path):
    from argusqt.errors import PublicationError

    t = _table()  # no unsafe cell: nothing to protect, publishable as it is
    path = tmp_path / "out.xlsx"
    assert write_excel(t, path) == path
    assert [p.name for p in tmp_path.iterdir()] == ["out.xlsx"]  # no temp file left
    # unprotected primaries: refused, cells named by their codes, nothing written
    t2 = _status_2d(_table())
    t2.lpl = t2.upl = 0.2 * np.abs(t2.value)  # as FREQ(2, 20) gives its primaries
    with pytest.raises(PublicationError, match="fails the publication audit") as err:
        write_excel(t2, tmp_path / "refused.xlsx")
    assert "Region=A × Size=2" in str(err.value)
    assert ("A", "2") in err.value.cells
    assert [p.name for p in tmp_path.iterdir()] == ["out.xlsx"]
    # the confidential workbook is not a publication: written, with CONFIDENTIAL in its name
    assert write_excel(t2, tmp_path / "c.xlsx", CONF) == tmp_path / "c_CONFIDENTIAL.xlsx"
    assert write_excel(t2, tmp_path / "x_CONFIDENTIAL.xlsx", CONF).name == "x_CONFIDENTIAL.xlsx"
    # status colours tell primary from secondary: never in a published workbook
    with pytest.raises(ArgusError, match="confidential workbook"):
        excel_bytes(t2, ExcelOptions(status_colours=True))


def test_cells_and_report_sheets(tmp_path):
    t = _status_2d(_table())
    t.cost = np.abs(t.value)
    audit = AuditResult(
        lower=np.full(t.n_cells, np.nan),
        upper=np.full(t.n_cells, np.nan),
        required_lower=np.full(t.n_cells, np.nan),
        required_upper=np.full(t.n_cells, np.nan),
        audited=np.zeros(t.n_cells, bool),
        passed=np.ones(t.n_cells, bool),
        exact=np.zeros(t.n_cells, bool),
    )
    audit.lower[14], audit.upper[14] = 0.0, 50.0
    path = write_excel(
        t, tmp_path / "o.xlsx", CONF, audit=audit, report_info={"method": "OPT(1, 1)"}
    )
    assert path.name == "o_CONFIDENTIAL.xlsx"
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == ["table", "cells", "report"]
    assert all(wb[n]["A1"].value == BANNER for n in wb.sheetnames)
    ws = wb["cells"]
    head = [c.value for c in ws[2]]
    assert head == [
        "Region",
        "Region label",
        "Size",
        "Size label",
        "Turnover",
        "Status",
        "Status text",
        "Audit lower",
        "Audit upper",
        "True value",
        "LPL",
        "UPL",
    ]
    assert ws.max_row == t.n_cells + 2
    rows = {(r[0].value, r[2].value): [c.value for c in r] for r in ws.iter_rows(min_row=3)}
    assert rows[("A", "2")][4:7] == ["x", 5, "Unsafe (frequency)"]
    assert rows[("B", "2")][4:9] == ["x", 11, "Secondary", 0, 50]
    assert rows[("Total", "9")][4:7] == ["-", 14, "Empty"]
    assert rows[("Total", "Total")][4] == pytest.approx(t.value[0])
    assert rows[("Total", "Total")][7] is None
    rep = wb["report"]
    kv = {r[0].value: r[1].value for r in rep.iter_rows() if r[0].value}
    assert kv["Method"] == "OPT(1, 1)"
    assert kv["Secondary suppressions"] == 2
    assert kv["Secondary cost"] == pytest.approx(
        float(t.cost[(t.status == 11) | (t.status == 12)].sum()), abs=0.01
    )
    assert kv["Rules"].startswith(
        "Minimum frequency rule (Individual level) with minimum frequency 2"
    )
    assert kv["Audit"].startswith("Audit passed")
    assert "do not publish" in kv["WARNING"]


def test_confidential_published_and_colours(tmp_path):
    t = _status_2d(_table())
    t.published = np.round(t.value / 5) * 5  # as if rounded to base 5
    opts = ExcelOptions(
        confidential=True, status_colours=True, suppressed_text="*", thousands=False, labels=False
    )
    wb = build_workbook(t, opts)
    ws = wb["table"]
    assert ws["A1"].value == BANNER  # everything one row lower than in the published workbook
    assert ws.freeze_panes == "B6" and ws.cell(5, 2).value == "Total"
    # rounded table: every non-empty cell shows its published value, empty stays "-"
    assert ws.cell(8, 4).value == pytest.approx(t.published[2 * 4 + 2])
    assert ws.cell(6, 5).value == "-"
    assert ws.cell(6, 2).number_format == "0.00"
    assert ws.cell(8, 4).fill.fgColor.rgb.endswith("FFC7CE")  # primary colour
    assert ws.cell(9, 4).fill.fgColor.rgb.endswith("FFEB9C")  # secondary colour
    legend = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    assert "Legend" in legend
    cells = wb["cells"]
    head = [c.value for c in cells[2]]
    assert head[-3:] == ["True value", "LPL", "UPL"] and head[4] == "Turnover (published)"
    kv = {r[0].value: r[1].value for r in wb["report"].iter_rows() if r[0].value}
    assert "do not publish" in kv["WARNING"]


def test_three_dimensions_one_sheet_per_layer(tmp_path):
    t = _table(three=True)
    wb = build_workbook(t)
    assert wb.sheetnames == ["Total", "01", "02"]
    ws = wb["02"]
    assert ws["A2"].value == "Year: 02"
    # Region Total × Size Total in year 02 = 10.25 + 2 + 45.75 + 99.99
    assert ws.cell(6, 3).value == pytest.approx(158.0 - 0.01)
    with pytest.raises(ArgusError, match="two different"):
        build_workbook(t, ExcelOptions(row_dim=1, col_dim=1))
    # other layout: Size down, Year across, one sheet per region node
    wb2 = build_workbook(t, ExcelOptions(row_dim=1, col_dim=2))
    assert wb2.sheetnames == ["Total", "N", "A", "B", "S", "C"]


def test_one_dimension(tmp_path):
    reg = CodeList.from_tree("Region", [(1, "N"), (2, "A")])
    fine = build_fine([(np.array([0, 0]), ["A"])], None, None, None, 2)
    t = table_from_fine(fine, [reg], [np.array([2])], TableSpec(["Region"], None), 0)
    ws = build_workbook(t)["table"]
    assert [ws.cell(4, c).value for c in range(1, 4)] == ["Region", "label", "Freq"]
    assert [ws.cell(r, 3).value for r in range(5, 8)] == [2, 2, 2]
    assert ws.cell(5, 3).number_format == "#,##0"


def test_progress_and_cancel(tmp_path):
    from argusqt.errors import Cancelled
    from argusqt.progress import CancelToken

    t = _table()
    events = []
    write_excel(t, tmp_path / "p.xlsx", progress=events.append)
    assert events[0].fraction is not None and events[-1].fraction == 1.0
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        write_excel(t, tmp_path / "c.xlsx", cancel=token)
    assert not (tmp_path / "c.xlsx").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.xlsx"]


def test_four_dimensions_and_sheet_names():
    from argusqt.export.excel import _sheet_name

    used: set[str] = set()
    assert _sheet_name("a/b:c*d?[e]", used) == "a_b_c_d__e_"
    long = "x" * 40
    assert _sheet_name(long, used) == "x" * 31
    assert _sheet_name(long, used) == "x" * 29 + "~2"
    assert _sheet_name("TABLE", used) == "TABLE" and _sheet_name("table", used) == "table~2"
    # 4-D: one sheet per combination of the two layer variables
    cats = [["a", "b"], ["1"], ["x", "y"], ["p"]]
    codes = [np.array([0, 1, 1]), np.array([0, 0, 0]), np.array([0, 1, 1]), np.array([0, 0, 0])]
    fine = build_fine(list(zip(codes, cats, strict=True)), np.array([1.0, 2.0, 3.0]), None, None, 2)
    dims = [CodeList.flat(n, c) for n, c in zip("ABCD", cats, strict=True)]
    maps = [np.arange(1, len(c) + 1) for c in cats]
    t = table_from_fine(fine, dims, maps, TableSpec(list("ABCD"), "v"), 0)
    wb = build_workbook(t)
    assert wb.sheetnames == [f"{c} {d}" for c in ["Total", "x", "y"] for d in ["Total", "p"]]
    ws = wb["y p"]
    assert ws["A2"].value == "C: y; D: p"
    assert [ws.cell(r, 3).value for r in range(6, 9)] == [5, "-", 5]  # A Total, a, b


def _interval_table():
    """The 2-D table after (hand-made) interval protection: A × 2 (7.00, primary) published as
    [-3.5, 130]; A × 1 (1244.75) as [1,200, 1,300.25]; every other cell a point."""
    t = _status_2d(_table())
    value = np.round(t.value, 2)
    t.interval_lower = value.copy()
    t.interval_upper = value.copy()
    a2, a1 = 2 * 4 + 2, 2 * 4 + 1
    t.interval_lower[a2], t.interval_upper[a2] = -3.5, 130.0
    t.interval_lower[a1], t.interval_upper[a1] = 1200.0, 1300.25
    t.protection = ProtectionInfo("IP", "interval")
    return t


def test_interval_protection_shows_intervals(tmp_path):
    t = _interval_table()
    wb = build_workbook(t)
    assert wb.sheetnames == ["table"]
    ws = wb["table"]
    grid = [[ws.cell(r, c) for c in range(3, 7)] for r in range(6, 12)]  # Total N A B S C
    # A × 1: a wide interval as text with decimals and thousands separators, own fill
    a1 = grid[2][1]
    assert a1.value == "1,200.00 – 1,300.25" and a1.data_type == "s"
    assert a1.fill.fgColor.rgb.endswith("BDD7EE") and not a1.quotePrefix
    # A × 2 (primary, status 5): no longer "x"; a negative lower bound is neutralised
    a2 = grid[2][2]
    assert a2.value == "-3.50 – 130.00" and a2.data_type == "s" and a2.quotePrefix
    # point cells (lower = upper) keep their number and number format, empty stays "-"
    assert grid[2][0].value == pytest.approx(1251.75)
    assert grid[2][0].number_format == "#,##0.00" and grid[2][0].data_type == "n"
    assert grid[3][2].value == pytest.approx(45.75)  # secondary B × 2, a point interval
    assert grid[5][1].value == pytest.approx(5.0)  # C × 1 (status 3), a point interval
    assert grid[2][3].value == "-"
    texts = [c.value for row in grid for c in row if isinstance(c.value, str)]
    assert "x" not in texts
    legend = {ws.cell(r, 2).value: ws.cell(r, 1) for r in range(12, ws.max_row + 1)}
    assert "published interval" in legend
    assert legend["published interval"].fill.fgColor.rgb.endswith("BDD7EE")
    # confidential cells sheet: published value/interval text and the two bounds as numbers
    wb = build_workbook(t, ExcelOptions(confidential=True))
    cells = wb["cells"]
    head = [c.value for c in cells[2]]
    assert head[4:9] == [
        "Turnover (published)",
        "Status",
        "Status text",
        "Interval lower",
        "Interval upper",
    ]
    rows = {(r[0].value, r[2].value): r for r in cells.iter_rows(min_row=3)}
    assert [c.value for c in rows[("A", "2")][4:9]] == [
        "-3.50 – 130.00",
        5,
        "Unsafe (frequency)",
        -3.5,
        130.0,
    ]
    assert [c.value for c in rows[("A", "1")][7:9]] == [1200.0, pytest.approx(1300.25)]
    assert rows[("A", "1")][7].number_format == "#,##0.00"
    total = rows[("Total", "Total")]
    assert total[4].value == pytest.approx(t.value[0]) == total[7].value == total[8].value
    assert [c.value for c in rows[("Total", "9")][4:9]] == ["-", 14, "Empty", None, None]
    kv = {r[0].value: r[1].value for r in wb["report"].iter_rows() if r[0].value}
    assert kv["Method"] == "interval protection (IP)"
    assert kv["Published intervals"] == 2


def test_interval_protection_without_thousands_and_with_colours():
    t = _interval_table()
    wb = build_workbook(t, ExcelOptions(confidential=True, thousands=False, labels=False))
    ws = wb["table"]
    assert ws.cell(8, 3).value == "1200.00 – 1300.25"  # A × 1 (no label column, banner row)
    assert ws.cell(8, 3).fill.fgColor.rgb.endswith("BDD7EE")  # interval fill wins
    assert ws.cell(9, 4).fill.fgColor.rgb.endswith("FFEB9C")  # B × 2 secondary, a point
    legend = [ws.cell(r, 2).value for r in range(13, ws.max_row + 1)]
    assert "Secondary" in legend and legend[-1] == "published interval"
    # without intervals (suppression view) there is no interval legend or column
    t.interval_lower = t.interval_upper = None
    wb = build_workbook(t, CONF)
    assert wb["table"].cell(9, 5).value == "x"
    assert "Interval lower" not in [c.value for c in wb["cells"][2]]
    assert all(
        wb["table"].cell(r, 2).value != "published interval"
        for r in range(1, wb["table"].max_row + 1)
    )


def test_interval_protection_batch_to_excel(shared_data, tmp_path):
    import shutil

    from argusqt.batch.runner import run_batch

    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    arb = folder / "ip.arb"
    arb.write_text(
        '<OPENMICRODATA> "microdata_ex2.asc"\n'
        '<OPENMETADATA> "metadata_ex2.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n'
        "<SAFETYRULE> FREQ(5,20)|P(20,5)|\n"
        "<READMICRODATA>\n"
        "<SUPPRESS> IP(1)\n"
        '<WRITETABLE> (1, 1, , "ip.xlsx")\n'
        '<WRITETABLE> (1, 1, AS+, "ip.xlsx")\n'
    )
    out = run_batch(arb)
    assert out.ok, out.error
    assert out.files_written == [  # the workbooks; reports only when asked (--report)
        folder / "ip.xlsx",
        folder / "ip_CONFIDENTIAL.xlsx",
    ]
    wb = openpyxl.load_workbook(folder / "ip_CONFIDENTIAL.xlsx")
    rows = {(r[0].value, r[2].value): r for r in wb["cells"].iter_rows(min_row=3)}
    cell = rows[("A", "female")]
    assert cell[5].value == 3  # the primary keeps its status
    lo, hi = cell[7].value, cell[8].value
    # the published interval covers the protection interval 189.40 ± 22.40 (E9)
    assert lo <= 189.40 - 22.40 + 0.005 and hi >= 189.40 + 22.40 - 0.005
    assert cell[4].value == f"{lo:,.2f} – {hi:,.2f}"
    # the same text in the published table sheet, found by its row (region A) and column
    ws = openpyxl.load_workbook(folder / "ip.xlsx")["table"]
    r = next(r for r in range(6, ws.max_row + 1) if str(ws.cell(r, 1).value).strip() == "A")
    c = next(c for c in range(3, ws.max_column + 1) if str(ws.cell(4, c).value) == "female")
    assert ws.cell(r, c).value == cell[4].value
    kv = {r[0].value: r[1].value for r in wb["report"].iter_rows() if r[0].value}
    assert kv["Method"] == "interval protection (IP)"
