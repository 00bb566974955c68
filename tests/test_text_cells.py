"""Text outputs never carry a formula a spreadsheet would run; `TA+` writes τ-Argus's bytes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from confidential_helpers import body_lines, body_text

from argusqt.batch.render import batch_lines
from argusqt.export.writetable import write_table
from argusqt.io.textcells import formula_like, neutralise
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec

HYPERLINK = '=HYPERLINK("http://example.invalid/x","click")'
RISKY_CODES = [HYPERLINK, "+cmd|' /C calc'!A0", "@SUM(1,2)", "-2+3", "\tTAB", "\rCR"]
PLAIN_CODES = ["-1", "+2.5", "-", "plain", "a-b"]


def test_formula_like_and_neutralise():
    for text in RISKY_CODES:
        assert formula_like(text) and neutralise(text) == "'" + text
    for text in PLAIN_CODES:  # plain signed numbers and lone signs cannot run anything
        assert not formula_like(text) and neutralise(text) == text
    assert neutralise("'=already") == "'=already"


def risky_table() -> Table:
    """A 2-D table whose codes and variable name look like formulas; negative values, an empty cell."""
    rows = CodeList.flat("=Name", [HYPERLINK, "@SUM(1,2)", "-1"], total_code="Total")
    cols = CodeList.flat("col", ["+cmd|' /C calc'!A0", "plain"], total_code="-2+3")
    inner = np.array([[-5.5, 2.25], [1.0, 0.0], [3.0, -1.75]])
    full = np.zeros((4, 3))
    full[1:, 1:] = inner
    full[0, 1:] = inner.sum(0)
    full[1:, 0] = inner.sum(1)
    full[0, 0] = inner.sum()
    v = full.ravel()
    t = Table(
        spec=TableSpec(["=Name", "col"], "resp"),
        dims=[rows, cols],
        value=v,
        freq=np.where(v == 0, 0.0, 3.0),
        shadow=v.copy(),
        cost_raw=np.abs(v),
        top=np.zeros((v.size, 2)),
        decimals=2,
    )
    t.status = np.where(v == 0, 14, 1).astype(np.int8)
    return t


def _files(tmp_path: Path, out_type: int, options: str) -> dict[str, bytes]:
    ext = {1: ".csv", 2: ".csv", 3: ".txt", 4: ".sbs", 5: ".tab"}[out_type]
    folder = tmp_path / f"t{out_type}{options.replace('+', 'p')}"
    folder.mkdir()
    write_table(risky_table(), out_type, options, folder / f"out{ext}")
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


_NUMBER = re.compile(r"-?\d+(\.\d+)?\Z")


def _fields(name: str, data: bytes) -> list[str]:
    text = data.decode("utf-8")
    if name.endswith(".hrc"):
        return [line.lstrip("@") for line in text.split("\n") if line]
    if name.endswith(".rda"):
        return re.findall(r'"([^"]*)"', text)
    sep = ";" if name.endswith(".tab") else ","
    return [f.strip().strip('"') for line in text.split("\n") for f in line.split(sep)]


@pytest.mark.parametrize("out_type", [1, 2, 3, 4, 5])
def test_no_text_output_carries_a_formula(tmp_path, out_type):
    files = _files(tmp_path, out_type, "AS+" if out_type in (2, 3) else "")
    texts = [f for name, data in files.items() for f in _fields(name, data)]
    running = [f for f in texts if formula_like(f)]
    assert not running, f"type {out_type}: formula-like cells {running}"
    neutralised = [f for f in texts if f.startswith("'")]
    assert neutralised, "the risky codes must still be there, as text"
    if out_type != 4:  # SBS omits empty cells
        # negative numbers and τ-Argus's empty '-' are values, written as they are
        assert "-5.50" in texts and "-1.75" in texts
    assert "-1" in texts  # a code that is a plain number is not a formula: unchanged


@pytest.mark.parametrize("out_type", [1, 2, 3, 4, 5])
def test_tau_exact_option_writes_codes_as_given(tmp_path, out_type):
    safe = _files(tmp_path, out_type, "")
    exact = _files(tmp_path, out_type, "TA+")
    assert safe.keys() == exact.keys()
    joined = b"".join(exact.values()).decode()
    assert "=HYPERLINK('http://example.invalid/x','click')" in joined  # τ-Argus turns " into '
    assert "'=HYPERLINK" not in joined and "'@SUM" not in joined
    # the only difference is the ' in front of the risky texts
    written = [c.replace('"', "'") for c in (*RISKY_CODES[:4], "=Name")]
    for name in safe:
        want = exact[name].decode()
        for w in written:
            if not (name.endswith(".rda") and w == "=Name"):  # variable names are not cells
                want = want.replace(w, "'" + w)
        assert safe[name].decode() == want, name


def test_codevalue_bytes(tmp_path):
    out = tmp_path / "cv.txt"
    write_table(risky_table(), 3, "AS+FL+", out)
    lines = body_lines(out)  # after its CONFIDENTIAL line
    link = "\"'=HYPERLINK('http://example.invalid/x','click')\""
    assert lines[0] == '"\'=Name","col","resp","Status"'
    assert (
        '"-1","\'+cmd|\' /C calc\'!A0",-5.50,1' in lines
    )  # code -1 and negative values as they are
    assert '"Total","\'-2+3",-1.00,1' in lines  # the total code -2+3 is neutralised
    assert f'{link},"plain",-,14' in lines  # the empty cell keeps τ-Argus's '-'
    assert '"\'@SUM(1,2)","plain",-1.75,1' in lines


def test_session_keyword_and_history(tmp_path):
    from argusqt.session import Session

    ses = Session()
    ses.tables = [risky_table()]
    ses.kind = "tabular"
    out = tmp_path / "s.txt"
    ses.write_table(1, 3, "AS+", out, tau_exact=True)
    assert body_text(out).startswith('"Total","-2+3"')
    assert "=HYPERLINK(" in out.read_text() and "'=HYPERLINK" not in out.read_text()
    assert batch_lines(ses)[-1].startswith("<WRITETABLE> (1, 3, AS+TA+,")
    ses.write_table(1, 3, "AS+", out)
    assert "'=HYPERLINK" in out.read_text()


def test_excel_cells_share_the_rule(tmp_path):
    from openpyxl import load_workbook

    from argusqt.export.excel import write_excel

    out = tmp_path / "t.xlsx"
    write_excel(risky_table(), out)
    ws = load_workbook(out)["table"]
    cells = {c.value: c for row in ws.iter_rows() for c in row if isinstance(c.value, str)}
    link = cells[HYPERLINK]
    assert link.data_type == "s" and link.quotePrefix
    assert not cells["-1"].quotePrefix  # the same rule as the text writers


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) not installed")
def test_libreoffice_opens_the_hyperlink_label_as_text(tmp_path):
    """Open the written CSV in LibreOffice (headless, → xlsx) and read the cell back."""
    from openpyxl import load_workbook

    safe = tmp_path / "safe.csv"
    exact = tmp_path / "exact.csv"
    write_table(risky_table(), 1, "", safe)
    write_table(risky_table(), 1, "TA+", exact)
    env = dict(os.environ, HOME=str(tmp_path))  # a private LibreOffice profile
    cmd = ["soffice", "--headless", "--norestore", "--convert-to", "xlsx", "--outdir"]
    subprocess.run(
        [*cmd, str(tmp_path / "x"), str(safe), str(exact)],
        check=True,
        capture_output=True,
        timeout=300,
        env=env,
    )

    def cell_of(path: Path):
        ws = load_workbook(path).active
        return next(c for row in ws.iter_rows() for c in row if "HYPERLINK" in str(c.value))

    got = cell_of(tmp_path / "x" / "safe.xlsx")
    assert got.data_type == "s" and got.value.startswith("'=HYPERLINK")
    raw = cell_of(tmp_path / "x" / "exact.xlsx")
    assert raw.data_type == "f"  # what the switch writes really is a formula to a spreadsheet


def test_save_dialog_offers_the_switch(qtbot):
    from argusqt.gui.savedialog import SaveTableDialog

    d = SaveTableDialog()
    qtbot.addWidget(d)
    d.select_type(3)
    assert d.options() == "AS-SE-FL-QU+"  # off: not written, the batch line stays τ-Argus's
    d.checks["TA"].setChecked(True)
    assert d.options() == "AS-SE-FL-QU+TA+"
    d.select_type(6)
    assert not d.checks["TA"].isEnabled() and "TA" not in d.options()
