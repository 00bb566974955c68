"""Helpers for the GUI tests: offscreen Qt, tiny hand-built tables, message-box capture."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from argusqt.model.codelist import CodeList  # noqa: E402
from argusqt.model.rulespec import PRule, SafetyRules  # noqa: E402
from argusqt.model.table import Table, TableSpec  # noqa: E402
from argusqt.session import Session  # noqa: E402


def membership(dim: CodeList) -> np.ndarray:
    """(nodes × leaves) 0/1 matrix: which leaves each node adds up."""
    leaves = np.flatnonzero(dim.is_leaf)
    m = np.zeros((len(dim), len(leaves)))
    for j, leaf in enumerate(leaves):
        for a in dim.ancestors[leaf]:
            m[a, j] = 1.0
    return m


def small_table(seed: int = 1) -> Table:
    """Region (hierarchical: North{A,B}, South{C,D}) × Gender (flat), additive, with statuses."""
    region = CodeList.from_tree(
        "Region",
        [(1, "N"), (2, "A"), (2, "B"), (1, "S"), (2, "C"), (2, "D")],
        labels={"N": "North", "S": "South", "A": "Amsterdam", "B": "Breda"},
    )
    gender = CodeList.flat("Gender", ["male", "female"])
    rng = np.random.default_rng(seed)
    leaf_val = rng.integers(1, 900, size=(4, 2)).astype(float)
    leaf_val[1, 1] = 12.5
    leaf_freq = rng.integers(1, 20, size=(4, 2)).astype(float)
    leaf_freq[1, 1] = 1
    leaf_freq[2, 0] = 0
    leaf_val[2, 0] = 0
    mr, mg = membership(region), membership(gender)
    value = (mr @ leaf_val @ mg.T).ravel()
    freq = (mr @ leaf_freq @ mg.T).ravel()
    top = np.stack([value * 0.6, value * 0.3], axis=1)
    spec = TableSpec(["Region", "Gender"], "Turnover", rules=SafetyRules(p_individual=[PRule(15)]))
    t = Table(spec, [region, gender], value, freq, value.copy(), value.copy(), top, decimals=1)
    t.status[(freq > 0) & (freq < 3)] = 5
    t.lpl[t.status == 5] = 3.0
    t.upl[t.status == 5] = 3.0
    return t


class Driven(list):
    """Dialogs seen by `run_dialog`; `errors` holds exceptions raised by the driving function."""

    errors: list
    #: set when its test ends (conftest.stop_dialog_pollers): the poll stops
    stopped: bool = False

    def check(self) -> None:
        if self.errors:
            raise self.errors[0]


#: the pollers `run_dialog` started in the running test; a poller whose dialog never came
#: used to poll on for its whole timeout, into the next tests, and drive their dialogs
POLLERS: list[Driven] = []


def stop_dialog_pollers() -> None:
    """Stop every `run_dialog` poller of the test that ends."""
    for seen in POLLERS:
        seen.stopped = True
    POLLERS.clear()


def run_dialog(qtbot, cls, fn, timeout: float = 60.0) -> Driven:
    """When a modal dialog of `cls` appears, call fn(dialog) — drives real exec() dialogs.

    An exception in fn closes the dialog (so the test cannot hang) and is kept in `.errors`.
    """
    import time

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout
    seen = Driven()
    seen.errors = []
    POLLERS.append(seen)

    def poll() -> None:
        if seen.stopped:  # its test is over: never drive the next test's dialogs
            return
        w = QApplication.activeModalWidget()
        if isinstance(w, cls) and w.isVisible():
            seen.append(w)
            try:
                fn(w)
            except BaseException as exc:  # noqa: BLE001 - reported by seen.check()
                seen.errors.append(exc)
                w.reject()
        elif time.monotonic() < deadline:
            QTimer.singleShot(30, poll)

    QTimer.singleShot(30, poll)
    return seen


class FakeSession(Session):
    """The real Session with its data, tables and protection faked: tests the GUI wiring
    without reading files or running solvers (a slow protection can be cancelled)."""

    def __init__(self, slow: float = 0.0) -> None:
        from argusqt.model.metadata import Metadata, Variable

        super().__init__()
        self.metadata = Metadata(
            None,
            "fixed",
            [
                Variable("Region", 1, 1, recodeable=True, hierarchical=True),
                Variable("Gender", 2, 1, recodeable=True),
                Variable("Turnover", 3, 8, numeric=True, decimals=1),
                Variable("Wgt", 11, 4, weight=True),
            ],
        )
        self.slow = slow
        self.calls: list[tuple] = []

    def open_microdata(self, data, meta):
        self.calls.append(("open_microdata", data, meta))
        self.add_log(f"opened {data}")

    def specify_tables(self, specs, progress=None, cancel=None):
        self.specs = list(specs)
        self.tables = []
        for spec in self.specs:
            t = small_table()
            t.spec = spec
            self.tables.append(t)
        return self.tables

    def protect(self, table_no, method, params, progress, cancel):
        from argusqt.progress import ProgressEvent, Stopwatch
        from argusqt.protection.core.result import ProtectionResult

        self.calls.append(("protect", table_no, method, params))
        t = self.tables[table_no - 1]
        sw = Stopwatch()
        cancelled = False
        while sw.elapsed < self.slow:
            progress(
                ProgressEvent(
                    "branch and cut", bound=1.0, incumbent=5.0, gap=0.8, elapsed=sw.elapsed
                )
            )
            if cancel is not None and cancel.wait(0.02):
                cancelled = True
                break
        status = t.status.copy()
        status[(status == 1) & (t.value < 200)] = 11
        t.status[:] = status
        result = ProtectionResult(method, status, cost=1.0, cancelled=cancelled, elapsed=sw.elapsed)
        if cancelled:  # as Session.protect says it (the fake's pattern is not audited)
            result.cancel_note = f"Table {table_no}: {method} cancelled: the fake pattern was kept."
            self.add_log(result.cancel_note)
        return result
