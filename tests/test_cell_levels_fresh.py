"""The cell panel's protected levels (session.cell_levels, D-94 "### fl19") follow every
change of the table: a manual status, new levels, undo and redo; whatever the panel may
cache, it never shows the levels of a table as it was (session 20)."""

from __future__ import annotations

import numpy as np
from test_count_floor import SEED, _frame

import argusqt
from argusqt.model.status import is_primary
from argusqt.session import cell_levels


def test_cell_levels_follow_status_and_level_changes_and_undo():
    done = argusqt.protect(_frame(SEED), explanatory=["a", "b"], response=None,
                           rules=[argusqt.FREQ(3, 10)], method="OPT", progress=False)  # fmt: skip
    s = done.session
    t = s.table(1)
    ones = np.flatnonzero(is_primary(t.status) & (t.value == 1) & (t.lpl == 1))
    assert ones.size
    c = int(ones[0])
    assert cell_levels(s.table(1), c) == (0.0, 1.0)  # known non-empty: '-' tells (D-94)
    s.undo_protection(1)
    s.set_status(1, [c], "safe")
    assert not is_primary(s.table(1).status[c])
    assert cell_levels(s.table(1), c)[0] == float(s.table(1).lpl[c])  # no floor: not unsafe
    s.undo()
    assert cell_levels(s.table(1), c) == (0.0, 1.0)
    s.set_protection_levels(1, [c], 3.0, 4.0)
    assert cell_levels(s.table(1), c) == (0.0, 4.0)  # the new upper level; the floor ends the lower
    s.undo()
    assert cell_levels(s.table(1), c) == (0.0, 1.0)
    s.redo()
    assert cell_levels(s.table(1), c) == (0.0, 4.0)
