"""Manual status changes and their allowed transitions (argusqt/docs/rules.md §7), trivial
levels."""

from __future__ import annotations

import numpy as np
import pytest

from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec
from argusqt.rules.changes import (
    StatusChangeError,
    set_cost,
    set_protected,
    set_protection_levels,
    set_safe,
    set_secondary,
    set_unsafe,
    trivial_equivalents,
    undo_secondary,
)
from argusqt.rules.classify import apply_rules
from argusqt.rules.parse import parse_safety_rule


def freq_table() -> Table:
    """Cells: total(4 rec, 800), A (2 rec, 500 → FREQ unsafe), B (1 rec, 300), C (empty)."""
    dim = CodeList.flat("x", ["A", "B", "C"])
    v = np.array([800.0, 500.0, 300.0, 0.0])
    f = np.array([3.0, 2.0, 1.0, 0.0])
    top = np.array([[300, 250], [250, 250], [300, 0], [0, 0]], dtype=float)
    spec = TableSpec(["x"], "y", rules=parse_safety_rule("FREQ(2,30)|MAN(10)"))
    t = Table(spec, [dim], v, f, v.copy(), v.copy(), top)
    apply_rules(t)
    return t


def test_initial_statuses():
    t = freq_table()
    assert t.status.tolist() == [1, 1, 5, 14]


def test_set_unsafe_keeps_rule_status_or_manual():
    t = freq_table()
    assert set_unsafe(t, [1]) == 1
    assert t.status[1] == 9
    assert t.lpl[1] == pytest.approx(50) and t.upl[1] == pytest.approx(50)  # MAN 10 % of 500
    t.lpl[2] = t.upl[2] = 7
    assert set_unsafe(t, [2]) == 0  # already unsafe by the rule: status kept, PL recomputed
    assert t.status[2] == 5 and t.upl[2] == pytest.approx(90)
    with pytest.raises(StatusChangeError, match="status 14"):
        set_unsafe(t, [3])


def test_set_safe_gives_1_or_2():
    t = freq_table()
    assert set_safe(t, [2]) == 1
    assert t.status[2] == 2  # the rules say unsafe → safe (manual)
    set_unsafe(t, [1])
    assert set_safe(t, [1]) == 1 and t.status[1] == 1  # the rules say safe
    set_secondary(t, [1], manual=False)
    with pytest.raises(
        StatusChangeError, match="secondary suppression.*Undo the table's suppression first"
    ):
        set_safe(t, [1])  # what to do instead, not a list of status numbers (issue 23)


def test_protect_and_secondary_transitions():
    t = freq_table()
    with pytest.raises(StatusChangeError, match="protect"):
        set_protected(t, [2])  # an unsafe cell cannot be protected
    assert set_protected(t, [1]) == 1 and t.status[1] == 10
    with pytest.raises(StatusChangeError):
        set_unsafe(t, [1])  # a protected cell cannot be made unsafe
    assert set_secondary(t, [0], manual=False) == 1 and t.status[0] == 11
    set_safe(t, [2])
    assert set_secondary(t, [2], manual=True) == 1 and t.status[2] == 12
    assert undo_secondary(t) == 2
    assert t.status.tolist() == [1, 10, 2, 14]


def test_refused_change_changes_nothing():
    t = freq_table()
    before = t.status.copy()
    with pytest.raises(StatusChangeError, match=r"\(C\)"):
        set_protected(t, [0, 1, 3])
    assert (t.status == before).all()


def test_cost_and_levels():
    t = freq_table()
    assert set_cost(t, [0, 1], 0) == 2
    assert t.cost[0] == 1 and t.cost[1] == 1
    with pytest.raises(StatusChangeError, match="cost"):
        set_cost(t, [1], -3)
    with pytest.raises(StatusChangeError, match="non-empty"):
        set_cost(t, [3], 5)
    assert set_protection_levels(t, [2], 100, 200) == 1
    assert (t.lpl[2], t.upl[2]) == (100, 200)
    with pytest.raises(StatusChangeError, match="unsafe cells 3-9"):
        set_protection_levels(t, [1], 1, 1)
    with pytest.raises(StatusChangeError, match="≥ 0"):
        set_protection_levels(t, [2], -1, 1)


def test_trivial_equivalents():
    # R: Total → A → A1 (single child chain) and B → B1, B2
    r = CodeList.from_tree("r", [(1, "A"), (2, "A1"), (1, "B"), (2, "B1"), (2, "B2")])
    c = CodeList.from_tree("c", [(1, "X"), (2, "X1")])  # Total → X → X1: all three identical
    n = len(r) * len(c)
    v = np.ones(n)
    t = Table(TableSpec(["r", "c"], "y"), [r, c], v, v, v, v, np.zeros((n, 2)))
    cell = t.cell_index((1, 2))  # (A, X1)
    got = trivial_equivalents(t, cell)
    assert got == sorted(t.cell_index((a, b)) for a in (1, 2) for b in (0, 1, 2))
    assert trivial_equivalents(t, t.cell_index((4, 0))) == [t.cell_index((4, b)) for b in range(3)]
