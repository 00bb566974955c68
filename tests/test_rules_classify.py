"""Rule classification and protection levels: the examples of argusqt/docs/rules.md §3–4."""

from __future__ import annotations

import numpy as np
import pytest

from argusqt.errors import SpecificationError
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec
from argusqt.rules.classify import apply_rules, primary_counts
from argusqt.rules.parse import parse_safety_rule


def cells_table(
    contributions: list[list[float]],
    rule: str,
    *,
    value: list[float] | None = None,
    freq: list[float] | None = None,
    frequency_table: bool = False,
    decimals: int = 0,
    k: int = 6,
    **extra,
) -> Table:
    """A 1-D table whose cell i (i ≥ 1) has the given shadow contributions (cell 0 = their sum)."""
    rows = [[x for c in contributions for x in c], *contributions]
    n = len(rows)
    top = np.zeros((n, k))
    for i, r in enumerate(rows):
        s = sorted((abs(x) for x in r), reverse=True)[:k]
        top[i, : len(s)] = s
    shadow = np.array([sum(r) for r in rows], dtype=float)
    f = np.array([len(r) for r in rows], dtype=float) if freq is None else np.r_[sum(freq), freq]
    val = shadow.copy() if value is None else np.r_[sum(value), value]
    dim = CodeList.flat("x", [f"{i:02d}" for i in range(1, n)])
    spec = TableSpec(["x"], None if frequency_table else "y", rules=parse_safety_rule(rule))
    return Table(spec, [dim], val, f, shadow, np.abs(val), top, decimals=decimals, **extra)


E3 = [
    ([55, 30, 10, 3, 2], "P(20)", None),
    ([55, 30, 10, 3, 2], "P(30)", 1.5),
    ([55, 30, 10, 3, 2], "P(10,2)", 0.5),
    ([55, 30, 10, 3, 2], "P(10,50,1)", None),
    ([59, 40, 1], "P(10)", 4.9),
    ([61, 20, 19], "P(10)", None),
    ([30, 30, 20, 10, 10], "P(10)", None),
    ([80, 15, 5], "P(20)", 11),
    ([50], "P(1)", 0.5),
    ([50, 45, 5], "P(10)", None),  # boundary: equality is safe
]
E4 = [
    ([30, 30, 20, 10, 10], "NK(1,50)", None),
    ([30, 30, 20, 10, 10], "NK(2,50)", 20),
    ([30, 30, 20, 10, 10], "NK(3,75)", 6.6667),
    ([59, 40, 1], "NK(1,60)", None),
    ([61, 20, 19], "NK(1,60)", 1.6667),
    ([80, 15, 5], "NK(1,70)|P(20)", 14.2857),
    ([70, 30], "NK(1,70)", None),
]


@pytest.mark.parametrize(("contrib", "rule", "pl"), E3 + E4)
def test_e3_e4_rows(contrib, rule, pl):
    t = cells_table([contrib], rule, decimals=4)
    apply_rules(t)
    if pl is None:
        assert t.status[1] == 1
        assert t.lpl[1] == t.upl[1] == pytest.approx(1e-4)  # safe cells get MinPL
    else:
        assert t.status[1] == 3
        assert t.upl[1] == pytest.approx(pl, abs=1e-4)
        assert t.lpl[1] == t.upl[1]


def test_e5_1_frequency_rule():
    t = cells_table([[300, 200], [100, 100, 300]], "FREQ(3,30)")
    apply_rules(t)
    assert t.status[1] == 5 and t.lpl[1] == 150 and t.upl[1] == 150
    assert t.status[2] == 1
    ft = cells_table([[1, 1]], "FREQ(3,30)", frequency_table=True)
    apply_rules(ft)
    assert ft.status[1] == 5 and ft.lpl[1] == ft.upl[1] == 1  # max(0.6, 1)


def test_e5_2_zero_rule_and_frequency_first():
    t = cells_table([[0, 0, 0, 0]], "ZERO(5)")
    apply_rules(t)
    assert t.status[1] == 6 and t.lpl[1] == 0 and t.upl[1] == 5
    t = cells_table([[0, 0, 0, 0]], "FREQ(5,30)|ZERO(5)")
    apply_rules(t)
    assert t.status[1] == 5 and t.lpl[1] == 0 and t.upl[1] == 5


def test_e5_3_request_rule():
    spec_top = np.array([[800.0, 0], [800.0, 0]])
    t = cells_table(
        [[800, 150, 50]], "REQ(70,60,0,10)", request_top=spec_top, request_freq=np.array([1.0, 1.0])
    )
    apply_rules(t)
    assert t.status[1] == 4 and t.lpl[1] == 100 and t.upl[1] == 100
    t = cells_table(
        [[800, 150, 50]],
        "REQ(70,60,0,10)",
        request_top=np.array([[0, 150.0], [0, 150.0]]),
        request_freq=np.array([1.0, 1.0]),
    )
    apply_rules(t)
    assert t.status[1] == 1
    # minimum frequency: a requesting record in a cell of fewer than minfreq records
    t = cells_table(
        [[100, 150, 50]],
        "REQ(70,60,4,10)",
        request_top=np.array([[0, 50.0], [0, 50.0]]),
        request_freq=np.array([1.0, 1.0]),
    )
    apply_rules(t)
    assert t.status[1] == 4
    with pytest.raises(SpecificationError, match="REQUEST"):
        apply_rules(cells_table([[1]], "REQ(70,60,0,10)"))


def test_e5_4_missing_safe():
    dim = CodeList.flat("x", ["01"], missing=["99"])
    spec = TableSpec(["x"], "y", rules=parse_safety_rule("FREQ(3,30)|MIS(1)"))
    v = np.array([30.0, 20.0, 10.0])
    f = np.array([3.0, 2.0, 1.0])
    t = Table(spec, [dim], v, f, v, v, np.c_[v, np.zeros(3)])
    apply_rules(t)
    assert t.status.tolist() == [1, 5, 1]
    spec.rules.missing_safe = False
    apply_rules(t)
    assert t.status.tolist() == [1, 5, 5]


def test_e5_6_shadow_differs_from_response():
    t = cells_table([[55, 30, 10, 3, 2]], "P(30)", value=[2000])
    apply_rules(t)
    assert t.status[1] == 3 and t.upl[1] == pytest.approx(30) and t.lpl[1] == pytest.approx(30)
    t = cells_table([[55, 30, 10, 3, 2]], "P(30)|NK(1,50)", value=[2000])
    apply_rules(t)
    assert t.upl[1] == pytest.approx(200) and t.lpl[1] == pytest.approx(200)


def test_e5_7_minimum_protection_level():
    # 1 record < FREQ(2, 1 %) → 1 % of 0.5 = 0.005 < MinPL 0.01 (2 decimals)
    t = cells_table([[100]], "FREQ(2,1)", value=[0.5], decimals=2)
    apply_rules(t)
    assert t.status[1] == 5 and t.upl[1] == pytest.approx(0.01) and t.lpl[1] == pytest.approx(0.01)


def test_empty_cells_and_counts():
    t = cells_table([[5, 5], []], "FREQ(3,30)", freq=[2, 0])
    apply_rules(t)
    assert t.status.tolist() == [5, 5, 14]  # the total has 2 records too
    assert t.lpl[2] == t.upl[2] == 0
    counts = primary_counts(t)
    assert counts[1] == 0 and counts[5] == 2 and counts[14] == 1 and sum(counts.values()) == 3


def test_frequency_table_refuses_magnitude_rules():
    with pytest.raises(SpecificationError, match="frequency table"):
        apply_rules(cells_table([[1, 1]], "P(10)", frequency_table=True))


# ------------------------------------------------------------------ E6 holdings
HOLD_CELLS = {  # cell: [(value, holding), ...]
    "800x20": [(599, 1), (344, 1), (244, 1), (644, 2)],
    "800x30": [(355, 1), (433, 2), (323, 3), (343, 3)],
    "900x20": [(23, 4), (43, 5), (34, 5), (53, 5)],
    "900x30": [(700, 6), (200, 6), (60, 7), (40, 8), (10, 9)],
}


def holding_table(rule: str) -> Table:
    """2×2 table (act 800/900 × size 20/30) from the manual's §4.4.4 records, totals included."""
    act = CodeList.flat("act", ["800", "900"])
    size = CodeList.flat("size", ["20", "30"])
    recs: dict[int, list[tuple[float, int]]] = {i: [] for i in range(9)}
    for key, rs in HOLD_CELLS.items():
        a, s = key.split("x")
        ai, si = act.codes.index(a), size.codes.index(s)
        for cell in {(0, 0), (ai, 0), (0, si), (ai, si)}:
            recs[cell[0] * 3 + cell[1]].extend(rs)
    k = 6
    value = np.zeros(9)
    freq = np.zeros(9)
    hfreq = np.zeros(9)
    top = np.zeros((9, k))
    htop = np.zeros((9, k))
    for c, rs in recs.items():
        value[c] = sum(v for v, _ in rs)
        freq[c] = len(rs)
        hs: dict[int, float] = {}
        for v, h in rs:
            hs[h] = hs.get(h, 0) + v
        hfreq[c] = len(hs)
        s = sorted((v for v, _ in rs), reverse=True)[:k]
        top[c, : len(s)] = s
        s = sorted(hs.values(), reverse=True)[:k]
        htop[c, : len(s)] = s
    spec = TableSpec(["act", "size"], "y", rules=parse_safety_rule(rule))
    return Table(
        spec, [act, size], value, freq, value.copy(), value.copy(), top, hfreq=hfreq, htop=htop
    )


def _status(t: Table) -> dict[str, int]:
    names = {"800x20": (1, 1), "800x30": (1, 2), "900x20": (2, 1), "900x30": (2, 2)}
    return {k: int(t.status[t.cell_index(v)]) for k, v in names.items()}


def test_e6_holding_rules():
    t = holding_table("P(10,1)|FREQ(0,0)|FREQ(3,30)")
    apply_rules(t)
    assert _status(t) == {"800x20": 5, "800x30": 1, "900x20": 5, "900x30": 1}
    margins = [c for c in range(9) if 0 in t.cell_nodes(c)]
    assert (t.status[margins] == 1).all()
    assert t.value[0] == 4448 and t.freq[0] == 17 and t.hfreq[0] == 9
    # holding-level P(10) alone (3rd P)
    t = holding_table("P(0,0)|P(0,0)|P(10,1)")
    apply_rules(t)
    assert _status(t) == {"800x20": 3, "800x30": 1, "900x20": 3, "900x30": 3}
    assert (t.status[margins] == 1).all()
    c = t.cell_index((2, 2))
    assert t.upl[c] == pytest.approx(40)  # d = 90 − 50; shadow = response
    assert t.upl[t.cell_index((1, 1))] == pytest.approx(118.7)
    assert t.upl[t.cell_index((2, 1))] == pytest.approx(13)
    # P(10) on records alone: every cell safe (900×30: R1 = 110 ≥ 70)
    t = holding_table("P(10)")
    apply_rules(t)
    assert (t.status == 1).all()


def test_holding_rules_need_holdings():
    t = cells_table([[1, 2]], "P(0,0)|P(0,0)|P(10,1)")
    with pytest.raises(SpecificationError, match="HOLDING"):
        apply_rules(t)


# ------------------------------------------------------------------ E6 weights
def weighted_table(rule: str) -> Table:
    """Records 100 (w 4) and 10 (w 7): value 470, unit contributions 100×4, 10×7."""
    units = [100] * 4 + [10] * 7
    dim = CodeList.flat("x", ["01"])
    top = np.zeros((2, 6))
    top[:, :6] = units[:6]
    v = np.array([470.0, 470.0])
    spec = TableSpec(["x"], "y", rules=parse_safety_rule(rule))
    return Table(
        spec,
        [dim],
        v,
        np.array([2.0, 2.0]),
        v.copy(),
        v.copy(),
        top,
        weight_sum=np.array([11.0, 11.0]),
    )


@pytest.mark.parametrize(
    ("rule", "status", "pl"),
    [
        ("NK(1,50)|WGT(1)", 1, None),
        ("NK(2,50)|WGT(1)", 1, None),
        ("NK(3,60)|WGT(1)", 3, 30),
        ("P(10)|WGT(1)", 1, None),
        ("FREQ(12,10)|WGT(1)", 5, 47),
        ("FREQ(11,10)|WGT(1)", 1, None),
    ],
)
def test_e6_weights(rule, status, pl):
    t = weighted_table(rule)
    apply_rules(t)
    assert t.status[1] == status
    if pl is not None:
        assert t.upl[1] == pytest.approx(pl) and t.lpl[1] == pytest.approx(pl)


def test_too_few_contributions_refused():
    t = cells_table([[5, 4, 3]], "P(10,3)", k=2)
    with pytest.raises(SpecificationError, match="4 largest"):
        apply_rules(t)


def test_holding_frequency_uses_individual_range():
    """argusqt/docs/rules.md §4.1: status 5 from the holding FREQ gets the 1st FREQ's range
    (logged)."""
    t = holding_table("FREQ(3,30)|FREQ(3,10)")
    apply_rules(t)
    c = t.cell_index((1, 1))  # 800×20: 4 records (safe), 2 holdings (unsafe)
    assert t.status[c] == 5
    assert t.upl[c] == pytest.approx(0.3 * 1831) and t.lpl[c] == t.upl[c]
    assert any("individual range 30" in n for n in t.notes)


def test_mixed_signs_noted_not_refused():
    t = cells_table([[50, -30, 10]], "P(10)")
    apply_rules(t)
    assert t.status[1] in (1, 3)
    assert any("mix positive and negative" in n for n in t.notes)
    t = cells_table([[50, 30, 10]], "P(10)")
    apply_rules(t)
    assert not t.notes
