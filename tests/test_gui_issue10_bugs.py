"""Three bugs a user met through the windows (issue 10), driven as the user drives them:
the batch file written by File | Write batch file must repeat what the session shows.

1. Global recode → Undo left `<RECODE>` in the batch file (it replayed an undone recode).
2. Linked OPT wrote `<SUPPRESS> OPT(0, …)`, which the batch runner refused.
3. Manual status changes were lost from the batch file after File | Save session → Open session.
"""

from __future__ import annotations

from pathlib import Path

import conftest_gui  # noqa: F401
import numpy as np
import pytest
from conftest_gui import run_dialog

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.runner import run_batch
from argusqt.rules.parse import parse_safety_rule

pytestmark = pytest.mark.gui


def _open(qtbot, window, sample: Path, *dims: str) -> None:
    """File | Open microdata, then Specify | Tables with these explanatory variables."""
    specs = []
    for d in dims:
        spec = parse_specify_table(f'{d}|"turnover"||')
        spec.rules = parse_safety_rule("P(15,1)|FREQ(3,20)")
        specs.append(spec)
    window.settings.setValue("options/specifyAfterOpen", False)  # specs are set below
    window.open_microdata(str(sample / "enterprise.asc"), str(sample / "enterprise.rda"))
    qtbot.waitUntil(lambda: window.session is not None and not window.runner.busy, timeout=60_000)
    window.compute_tables(specs)
    qtbot.waitUntil(
        lambda: len(window.views) == len(dims) and not window.runner.busy, timeout=60_000
    )


def _write_batch(qtbot, window, monkeypatch, arb: Path) -> str:
    """File | Write batch file, to `arb`; its text."""
    from PySide6.QtWidgets import QFileDialog

    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(arb), ""))
    window.actions["write_batch"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    return arb.read_text()


def _replays(arb: Path, tables) -> None:
    out = run_batch(arb)
    assert out.ok, f"the written batch file does not run: {out.error}"
    assert len(out.session.tables) == len(tables)
    for a, b in zip(tables, out.session.tables, strict=True):
        assert [list(d.codes) for d in a.dims] == [list(d.codes) for d in b.dims]
        np.testing.assert_array_equal(a.status, b.status)


def test_bug1_undone_recode_is_not_in_the_batch_file(qtbot, window, sample, monkeypatch):
    from argusqt.gui.recodedialog import RecodeDialog

    _open(qtbot, window, sample, '"activity""size"')
    n_size = len(window.tables[0].dims[1])

    def recode_then_undo(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow(1)  # size
        d.load_grc(str(sample / "size3.grc"))
        assert d.apply()
        assert len(d.table.dims[1]) < n_size
        assert d.undo()
        d.reject()

    driven = run_dialog(qtbot, RecodeDialog, recode_then_undo, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert len(window.tables[0].dims[1]) == n_size
    text = _write_batch(qtbot, window, monkeypatch, sample / "bug1.arb")
    assert "<RECODE>" not in text
    _replays(sample / "bug1.arb", window.tables)


def test_bug2_linked_opt_batch_file_runs(qtbot, window, sample, monkeypatch):
    _open(qtbot, window, sample, '"size""region"', '"size"')
    window.protect_table("OPT", {"max_minutes": 1}, linked=True)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert not window.errors, window.errors
    text = _write_batch(qtbot, window, monkeypatch, sample / "bug2.arb")
    assert "<SUPPRESS> OPT(0" in text
    _replays(sample / "bug2.arb", window.tables)


def test_bug3_manual_changes_survive_save_and_open_session(qtbot, window, sample, monkeypatch):
    _open(qtbot, window, sample, '"activity""region"')
    view = window.views[0]
    t = view.table
    safe = np.flatnonzero(t.status == 1)
    assert view.select_cell(int(safe[-1]))
    view.buttons["unsafe"].click()
    assert view.select_cell(int(safe[0]))
    view.buttons["protected"].click()
    assert int(window.tables[0].status[safe[0]]) == 10
    statuses = np.asarray(window.tables[0].status).copy()

    aqs = sample / "work.aqs"
    window.save_session(str(aqs))
    qtbot.waitUntil(lambda: not window.runner.busy and aqs.is_file(), timeout=60_000)
    window.open_session(str(aqs))
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    np.testing.assert_array_equal(window.tables[0].status, statuses)

    text = _write_batch(qtbot, window, monkeypatch, sample / "bug3.arb")
    assert "<APRIORI>" in text  # the manual changes, as an a-priori file beside it
    out = run_batch(sample / "bug3.arb")
    assert out.ok, out.error
    np.testing.assert_array_equal(out.session.table(1).status, statuses)


def test_typed_recode_is_written_beside_the_batch_file(qtbot, window, sample, monkeypatch):
    """A recode typed in the dialog (no file of its own) goes beside the batch file, under a
    name the batch file gives: the folder can be moved or sent (it was a temporary folder)."""
    from argusqt.gui.recodedialog import RecodeDialog

    _open(qtbot, window, sample, '"activity""size"')
    n_size = len(window.tables[0].dims[1])

    def type_recode(d: RecodeDialog) -> None:
        d.var_list.setCurrentRow(1)  # size: flat → the code-group editor
        d.text.setPlainText("1: 1-2\n2: 3-4\n3: 5-6\n")
        assert d.apply()
        d.reject()

    driven = run_dialog(qtbot, RecodeDialog, type_recode, timeout=60)
    window.actions["recode"].trigger()
    driven.check()
    assert len(window.tables[0].dims[1]) < n_size
    out = sample / "to_send"
    out.mkdir()
    text = _write_batch(qtbot, window, monkeypatch, out / "typed.arb")
    side = out / "typed_recode1_size.grc"
    assert side.is_file() and side.read_text().startswith("1: 1-2")
    assert '<RECODE> 1, size, "typed_recode1_size.grc"' in text
    assert "argusqt_recode_" not in text  # the temporary folder it used to name
    _replays(out / "typed.arb", window.tables)
