"""A count table prints '-' for an empty cell, so an outsider knows every suppressed cell holds
at least 1 (docs/design.md D-94): patterns are judged with that floor, an independent LP here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

import argusqt
from argusqt.export.audit_report import audit_table
from argusqt.model.status import Status, is_primary, is_suppressed
from argusqt.protection.core.problem import CSPProblem


def _range(rel, lo: np.ndarray, hi: np.ndarray, cell: int) -> tuple[float, float]:
    """Smallest and largest value of `cell` the relations allow within [lo, hi]."""
    e = np.zeros(lo.size)
    e[cell] = 1.0
    zero = np.zeros(rel.shape[0])
    bounds = np.c_[lo, hi]
    small = linprog(e, A_eq=rel, b_eq=zero, bounds=bounds, method="highs")
    large = linprog(-e, A_eq=rel, b_eq=zero, bounds=bounds, method="highs")
    assert small.status == 0 and large.status == 0
    return float(small.fun), float(-large.fun)


def shortfalls(table) -> list[tuple[int, str]]:
    """Primaries an outsider who reads '-' narrows inside [max(a − LPL, floor), a + UPL]:
    every non-empty cell at least 1, published cells exact (the floor: all cells hidden)."""
    status = np.asarray(table.status)
    value = np.asarray(table.value, dtype=float)
    rel = table.relations.toarray()
    nonempty = status != Status.EMPTY
    top = 1.5 * value.max() + 1.0
    lo = np.where(nonempty, 1.0, 0.0)
    hi = np.where(nonempty, top, 0.0)
    sup = is_suppressed(status)
    seen_lo = np.where(sup, lo, value)
    seen_hi = np.where(sup, hi, value)
    out = []
    for c in np.flatnonzero(is_primary(status)):
        floor = _range(rel, lo, hi, int(c))[0]
        small, large = _range(rel, seen_lo, seen_hi, int(c))
        need_lo = max(value[c] - table.lpl[c], floor)
        if small > need_lo + 0.5:
            out.append((int(c), "low"))
        if large < value[c] + max(table.upl[c], 1.0) - 0.5:
            out.append((int(c), "high"))
    return out


SEED = 1  # 29 records: four primaries narrowed on main (review scan)


def _frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 40))
    return pd.DataFrame({"a": rng.choice(list("ABCD"), n), "b": rng.choice(list("ABCD"), n)})


@pytest.mark.parametrize("method", ["OPT", "MOD", "HEUR"])
def test_count_table_pattern_holds_against_the_nonempty_floor(method):
    """Reproducer: on main OPT let (A, Total)-type cells out whose only way down went below 1."""
    prot = argusqt.protect(
        _frame(SEED),
        explanatory=["a", "b"],
        response=None,
        rules=[argusqt.FREQ(3, 10)],
        method=method,
        progress=False,
    )
    table = prot.tables[0].table
    assert shortfalls(table) == []
    assert prot.tables[0].audit().ok
    report = audit_table(table, 1)  # the report asks what the audit asked: down to 1
    assert report.ok and min(line.need_lower for line in report.primaries) >= 1.0


def test_floor_counts_nonempty_leaves_and_clips_the_lower_level():
    """A total over two non-empty cells is known ≥ 2: its lower level ends there."""
    frame = pd.DataFrame({"a": ["A", "A", "B", "C", "C", "C"], "b": ["X", "Y", "X", "X", "Y", "Y"]})
    prot = argusqt.protect(
        frame, explanatory=["a", "b"], response=None, rules=[argusqt.FREQ(3, 10)], method="OPT",
        progress=False,
    )  # fmt: skip
    table = prot.tables[0].table
    problem = CSPProblem.from_table(table)
    codes = [tuple(x.strip() for x in table.cell_codes(i)) for i in range(table.n_cells)]
    at = {c: i for i, c in enumerate(codes)}
    assert problem.lower[at[("A", "X")]] == 1.0
    assert problem.lower[at[("A", "Total")]] == 2.0  # two non-empty leaves
    assert problem.lower[at[("Total", "Total")]] == 5.0  # A·X, A·Y, B·X, C·X, C·Y
    assert problem.lower[at[("B", "Y")]] == 0.0  # empty: printed '-'
    a_total = at[("A", "Total")]
    assert problem.lpl[a_total] == 0.0  # 2 − floor 2: only the upper side is asked
    assert problem.upl[a_total] == table.upl[a_total]


def test_no_floor_for_magnitude_or_weighted_tables():
    """A non-empty magnitude cell may hold 0 (or a weighted count less than 1): no floor."""
    frame = pd.DataFrame({"a": ["A", "A", "B"], "y": [0.0, 5.0, 3.0]})
    mag = argusqt.protect(
        frame, explanatory=["a"], response="y", rules=[argusqt.FREQ(3, 10)], method="OPT",
        progress=False,
    )  # fmt: skip
    assert CSPProblem.from_table(mag.tables[0].table).lower.max() == 0.0


def test_levels_written_are_the_levels_protected():
    """The CONFIDENTIAL Excel cells sheet, the intermediate file and the audit report give a
    count's lower level ending at its floor, as the model protects it (fl19; they gave the
    rule's level reaching below what '-' tells)."""
    import io

    import openpyxl

    from argusqt.export.excel import ExcelOptions, excel_bytes
    from argusqt.export.intermediate import intermediate_lines

    prot = argusqt.protect(_frame(SEED), explanatory=["a", "b"], response=None,
                           rules=[argusqt.FREQ(3, 10)], method="OPT", progress=False)  # fmt: skip
    table = prot.tables[0].table
    prim = np.flatnonzero(is_primary(table.status))
    two = int(prim[table.value[prim] == 2][0])
    table.lpl[two] = 2.0  # a level set by hand: the model asks only down to 1 record
    model = CSPProblem.from_table(table)
    clipped = [c for c in prim.tolist() if model.lpl[c] < table.lpl[c]]
    assert two in clipped and len(clipped) > 1
    xlsx = excel_bytes(table, ExcelOptions(confidential=True, labels=False))
    wb = openpyxl.load_workbook(io.BytesIO(xlsx))
    rows = list(wb["cells"].iter_rows(min_row=3, values_only=True))
    lines = intermediate_lines(table)
    report = {line.cell: line for line in audit_table(table, 1).primaries}
    for c in clipped:
        assert rows[c][-2] == pytest.approx(model.lpl[c])
        assert report[c].need_lower == pytest.approx(table.value[c] - model.lpl[c])
    assert lines[two].split(";")[-2] == "1"  # the rule's 2 written before (0 is written as 1)
