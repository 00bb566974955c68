"""Sheet names Excel accepts: never the reserved `History`, no invalid characters or lengths."""

from __future__ import annotations

import numpy as np
from openpyxl import load_workbook

from argusqt.export.excel import _sheet_name, write_excel
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec


def test_sheet_name_rules():
    used: set[str] = set()
    assert _sheet_name("History", used) == "History~2"
    assert _sheet_name("history", used) == "history~3"
    assert _sheet_name("'quoted'", used) == "quoted"
    assert _sheet_name("a/b:c*d?[e]\\f", used) == "a_b_c_d__e__f"
    assert _sheet_name("''", used) == "sheet"
    long = _sheet_name("x" * 40, used)
    assert len(long) == 31 and _sheet_name("x" * 40, used) == "x" * 29 + "~2"
    assert _sheet_name("tab\there", used) == "tab_here"


def test_layer_called_history_gets_a_valid_sheet(tmp_path):
    layers = CodeList.flat("topic", ["History", "Maths"])
    rows = CodeList.flat("r", ["R1", "R2"])
    cols = CodeList.flat("c", ["C1", "C2"])
    n = len(layers) * len(rows) * len(cols)
    v = np.arange(1, n + 1, dtype=float)
    t = Table(
        spec=TableSpec(["r", "c", "topic"], "v"),
        dims=[rows, cols, layers],
        value=v,
        freq=np.ones(n),
        shadow=v.copy(),
        cost_raw=v.copy(),
        top=np.zeros((n, 1)),
    )
    t.status = np.ones(n, dtype=np.int8)
    out = tmp_path / "t.xlsx"
    write_excel(t, out)
    names = load_workbook(out).sheetnames
    assert "History" not in {n.title() for n in names} and "History~2" in names
