"""Cancel in the real windows: OPT on a 115k-cell table, cancelled during its start heuristic.

tau_testW IndustryCode × Region × Size | Var2 with the p%-rule (15, 1): Specify | Tables,
Modify | Protect table (OPT), then the progress dialog's Cancel button while the start
heuristic runs. The window must be back quickly and the table must not carry a pattern
that suppresses every cell (the old fallback); with no audited pattern it stays unprotected.
"""

from __future__ import annotations

import time

import conftest_gui  # noqa: F401  (offscreen Qt)
import numpy as np
import pytest
from conftest_gui import run_dialog
from PySide6.QtWidgets import QDialogButtonBox
from test_gui_acceptance import _choose_variables, _open_and_specify, tauw  # noqa: F401

from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.model.status import is_primary, is_secondary, is_suppressed
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem

pytestmark = pytest.mark.gui


def _spec_big(d: SpecifyTablesDialog) -> None:
    d.response.setCurrentText("Var2")
    d.individual.p[0].check.setChecked(True)
    d.individual.p[0].params[0].setValue(15)
    d.individual.p[0].params[1].setValue(1)
    _choose_variables(d, ["IndustryCode", "Region", "Size"])
    d.add_table.click()
    d.compute.click()


def test_cancel_during_opt_start_heuristic_on_115k_cells(qtbot, window, monkeypatch, tauw):  # noqa: F811
    _open_and_specify(qtbot, window, monkeypatch, tauw, _spec_big)
    table = window.tables[0]
    assert table.n_cells > 100_000
    before = table.status.copy()

    def opt(d: ProtectDialog) -> None:
        d.select("OPT")
        d.set_value("OPT", "max_minutes", 30)
        d.run_button.click()

    run_dialog(qtbot, ProtectDialog, opt)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: window.runner.dialog is not None, timeout=60_000)
    dialog = window.runner.dialog
    # the start heuristic reports its primaries; cancel while it runs
    qtbot.waitUntil(lambda: "Heuristic: primary" in dialog.log.toPlainText(), timeout=120_000)
    assert window.runner.busy
    assert "branch-and-cut" not in dialog.log.toPlainText()
    t0 = time.perf_counter()
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    took = time.perf_counter() - t0
    print(f"Cancel during OPT's start heuristic (115k cells): back in {took:.2f} s")
    assert took < 20.0  # ≥ 10× the quiet figure (benchmarks/bench_cancel.py)
    assert not window.errors, window.errors  # a cancel is no error

    status = table.status
    everything = ~is_primary(before) & (before != 10) & (before != 14)
    assert not (is_secondary(status) & everything).sum() == everything.sum()
    if is_secondary(status).any():  # an audited pattern was kept: it must pass again
        verdict = publication_audit(CSPProblem.from_table(table), is_suppressed(status))
        assert verdict.ok, verdict.summary()
    else:  # no audited pattern: the table is as before and the user is told so
        np.testing.assert_array_equal(status, before)
        assert "unprotected" in window.result_box.text()
