"""The real window's cell panel on a count table shows the levels protected (docs/design.md
D-94, fl19): a suppressed count of 1 is known non-empty, so its lower level ends at 1 — the
panel says 0 below, and names the rule's level and the floor '-' tells."""

from __future__ import annotations

import conftest_gui  # noqa: F401  (offscreen Qt before PySide6 is imported)
import numpy as np
import pytest
from test_count_floor import SEED, _frame

import argusqt
from argusqt.batch.render import write_batch_file
from argusqt.model.status import is_primary

pytestmark = pytest.mark.gui


def test_cell_panel_shows_a_counts_lower_level_ending_at_its_floor(qtbot, window, tmp_path):
    done = argusqt.protect(_frame(SEED), explanatory=["a", "b"], response=None,
                           rules=[argusqt.FREQ(3, 10)], method="OPT", progress=False)  # fmt: skip
    arb = tmp_path / "job.arb"
    write_batch_file(done.session, arb)
    window.open_batch(str(arb))
    qtbot.waitUntil(lambda: len(window.views) == 1 or bool(window.errors), timeout=60_000)
    qtbot.waitUntil(lambda: not window.runner.busy, timeout=60_000)
    assert not window.errors, window.errors
    view = window.views[0]
    t = view.table
    ones = np.flatnonzero(is_primary(t.status) & (t.value == 1) & (t.lpl == 1))
    assert ones.size  # the rule asks a count of 1 to look possibly 0: '-' says it is not
    assert view.select_cell(int(ones[0]))
    text = view.info.labels["pl"].text()
    assert text.splitlines() == ["0 / 1", "(rule: 1 / 1; known ≥ 1: empty cells print '-')"]
    big = np.flatnonzero(is_primary(t.status) & (t.value >= 2))
    if big.size:  # a level the floor does not reach is shown as the rule gave it
        assert view.select_cell(int(big[0]))
        assert "\n" not in view.info.labels["pl"].text()
