"""Issue 21 acceptance in the real windows: tau_testW Size × Region | Var2, P(15,1), protected
with IP from the Protect dialog, reads "publication audit passed" and saves a workbook whose
printed intervals the independent attacker of test_ip_publication cannot use."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import numpy as np
import openpyxl
import pytest
from conftest_gui import run_dialog
from shared_paths import copy_case
from test_gui_publication import _save_excel_dialog
from test_ip_publication import printed_intervals_safe

from argusqt.gui.opendialog import OpenDataDialog
from argusqt.gui.protectdialog import ProtectDialog
from argusqt.gui.publicationdialog import PublicationRefusedDialog
from argusqt.gui.savedialog import SaveTableDialog
from argusqt.gui.specify import SpecifyTablesDialog
from argusqt.protection.core.problem import CSPProblem

pytestmark = pytest.mark.gui


def _open_testw(qtbot, window, folder):
    def fill_open(d: OpenDataDialog) -> None:
        d.set_data(str(folder / "tau_testW.asc"))
        d.buttons.accepted.emit()

    def fill_spec(d: SpecifyTablesDialog) -> None:
        d.select_variables(["Size", "Region"])
        d.response.setCurrentText("Var2")
        d.individual.p[0].check.setChecked(True)
        d.individual.p[0].params[0].setValue(15)
        d.compute.click()

    run_dialog(qtbot, OpenDataDialog, fill_open)
    run_dialog(qtbot, SpecifyTablesDialog, fill_spec, timeout=60)
    window.actions["open_micro"].trigger()
    qtbot.waitUntil(lambda: bool(window.views), timeout=60_000)
    return window.views[0]


def _interval(text) -> tuple[float, float]:
    lo, hi = str(text).replace(",", "").split("–")
    return float(lo), float(hi)


def test_ip_from_the_protect_dialog_publishes_safe_intervals(qtbot, window, tmp_path):
    folder = copy_case("tau_testW", tmp_path)
    view = _open_testw(qtbot, window, folder)
    t = view.table
    assert int(((t.status >= 3) & (t.status <= 9)).sum()) == 9

    def protect_ip(d: ProtectDialog) -> None:
        d.select("IP")
        d.run_button.click()

    run_dialog(qtbot, ProtectDialog, protect_ip)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    assert "publication audit passed" in view.protection.text()

    out = folder / "ip.xlsx"
    run_dialog(qtbot, SaveTableDialog, _save_excel_dialog(out))
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    assert out.exists()

    # the primaries' intervals as printed in the workbook
    problem = CSPProblem.from_table(t)
    rows = list(openpyxl.load_workbook(out)["table"].iter_rows(values_only=True))
    (h,) = [i for i, r in enumerate(rows) if r and r[0] == t.dims[0].name]
    header = [str(c).strip() if c is not None else "" for c in rows[h]]
    lower, upper = problem.values.copy(), problem.values.copy()
    for p in np.flatnonzero(problem.primary):
        r_code, c_code = (c.strip() for c in t.cell_codes(int(p)))
        row = next(r for r in rows[h + 1 :] if r[0] is not None and str(r[0]).strip() == r_code)
        lower[p], upper[p] = _interval(row[header.index(c_code)])
    # the other cells as the table holds them (the workbook prints the same, rounded outwards)
    others = ~problem.primary
    lower[others], upper[others] = t.interval_lower[others], t.interval_upper[others]
    printed_intervals_safe(problem, lower, upper, t.decimals)

    # the expert option: levels as given (symmetric) → NOT PUBLISHABLE, Save is refused
    def protect_symmetric(d: ProtectDialog) -> None:
        d.select("IP")
        d.set_value("IP", "levels_as_given", True)
        d.run_button.click()

    run_dialog(qtbot, ProtectDialog, protect_symmetric)
    window.actions["protect"].trigger()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=300_000)
    assert not window.errors, window.errors
    assert "NOT PUBLISHABLE" in view.protection.text()
    seen: list[str] = []

    def refused(d: PublicationRefusedDialog) -> None:
        seen.append(d.details.toPlainText())
        d.reject()

    sym = folder / "sym.xlsx"
    run_dialog(qtbot, SaveTableDialog, _save_excel_dialog(sym))
    driven = run_dialog(qtbot, PublicationRefusedDialog, refused, timeout=120)
    window.actions["save_table"].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=120_000)
    driven.check()
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=120_000)
    assert "midpoint" in seen[0]
    assert not sym.exists()
