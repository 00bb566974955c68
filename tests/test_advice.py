"""Suggested method and time limit from a table's size (issue 15, goal 5)."""

from __future__ import annotations

import conftest_gui  # noqa: F401
import numpy as np
import pytest
from protect_helpers import random_1h2d, random_2d

from argusqt.protection.core.advice import OPT_CELLS, recommend, recommend_for_table


def test_small_tables_get_opt_large_ones_the_heuristic():
    opt = recommend(520, 61, hierarchical=True)
    assert opt.method == "OPT"
    # no promise of seconds: on the sample data's 738 × 63 table OPT stops at its limit
    assert "often" in opt.reason and "how far from optimal" in opt.reason
    mod = recommend(738, 159, hierarchical=True)  # the sample table: OPT does not converge
    assert mod.method == "MOD" and "subtable" in mod.reason
    assert recommend(7_290, 1_408, hierarchical=True).method == "MOD"
    heur = recommend(97_768, 19_308, hierarchical=True)
    assert heur.method == "HEUR" and heur.minutes > 0
    assert recommend(900, 150, hierarchical=False).method == "OPT"  # flat: no subtables
    assert recommend(40_000, 900, hierarchical=False).method == "HEUR"
    for a in (heur, mod):
        assert "cells" in a.reason and a.params == {"max_minutes": a.minutes}


def test_advice_for_a_table_reads_its_size_and_hierarchy():
    rng = np.random.default_rng(0)
    flat = random_2d(rng, 6, 6)
    hier = random_1h2d(rng, [3, 3], 4)

    class T:  # what recommend_for_table reads of a Table
        def __init__(self, p):
            self.status, self.dims = p.status, p.dims

    a = recommend_for_table(T(flat))
    assert a.method == "OPT" and flat.n_cells <= OPT_CELLS
    assert f"{flat.n_cells:,} cells" in a.reason
    assert recommend_for_table(T(hier)).method == "OPT"


@pytest.mark.gui
def test_protect_dialog_preselects_the_suggestion_and_says_why(qtbot, tmp_path):
    from argusqt.gui.protectdialog import ProtectDialog
    from argusqt.protection.core import registry
    from argusqt.protection.core.params import TableFacts

    facts = TableFacts(1, 738, 2, True, 3, 5)
    d = ProtectDialog("activity × region", registry.methods(), facts)
    qtbot.addWidget(d)
    d.suggest(recommend(738, 159, hierarchical=True))
    d.show()
    assert d.method() == "MOD" and d.value("MOD", "max_minutes") == 1
    assert d.advice.isVisible() and "Suggested for this table: Modular" in d.advice.text()
    assert "738 cells" in d.advice.text()
    d.grab().save(str(tmp_path / "protect_dialog_advice.png"))
