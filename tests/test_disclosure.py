"""The one publication verdict for every face (argusqt/docs/methods.md §2.1): intervals, rounded values,
adjusted values, with the point estimates an attacker who knows the method tries."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import (
    cell_id,
    flat_codelist,
    problem_2d,
    problem_from_table,
    table_from_leaves,
)

from argusqt.errors import PublicationError
from argusqt.export.gate import clear_for_publication, mark_protected, protection_state
from argusqt.model.table import ProtectionInfo
from argusqt.protection.audit.disclosure import (
    ESTIMATE_FRACTION,
    Face,
    adjusted_verdict,
    face_verdict,
    interval_verdict,
    point_tolerance,
    rounded_verdict,
    rounding_interval,
)

EX1 = [[895, 137], [753, 973], [569, 486], [540, 793]]
RECT = [(1, 1), (1, 2), (2, 1), (2, 2)]


def _intervals(p, cells, down, up):
    """Point intervals everywhere except `cells`, which get [a − down, a + up]."""
    a = p.values
    lb, ub = a.copy(), a.copy()
    for c in cells:
        k = cell_id(p, *c)
        lb[k], ub[k] = a[k] - down, a[k] + up
    return lb, ub


def test_tolerance_is_half_a_unit_or_a_fraction_of_the_level():
    p = problem_2d(EX1, [(1, 1)], 50.0)
    tol = point_tolerance(p)
    c = cell_id(p, 1, 1)
    assert tol[c] == pytest.approx(ESTIMATE_FRACTION * 50.0)
    assert tol[cell_id(p, 1, 2)] == pytest.approx(0.5)  # not primary: half a printed unit


def test_centred_interval_is_disclosed_by_its_midpoint():
    p = problem_2d(EX1, [(1, 1)], 50.0)
    lb, ub = _intervals(p, RECT, 50.0, 50.0)
    verdict = interval_verdict(p, lb, ub)
    c = cell_id(p, 1, 1)
    assert verdict.outsider.ok  # the LP attacker alone would let it pass
    assert not verdict.ok and verdict.failing_cells.tolist() == [c]
    assert verdict.reasons(c) == ["midpoint"]
    assert verdict.disclosures[0].lower == verdict.disclosures[0].upper == 895.0


def test_asymmetric_interval_passes_and_the_lp_attacker_agrees():
    p = problem_2d(EX1, [(1, 1)], 50.0)
    lb, ub = _intervals(p, RECT, 50.0, 80.0)
    verdict = interval_verdict(p, lb, ub)
    assert verdict.ok, verdict.summary()
    assert face_verdict(p, Face("interval", lower=lb, upper=ub)).ok


def test_endpoint_on_the_true_value_is_disclosed():
    dims = [flat_codelist("r", 4), flat_codelist("c", 2)]
    table = table_from_leaves(dims, np.asarray(EX1, float))
    c = table.cell_index((1, 1))
    p = problem_from_table(table, np.array([c]), 0.0, 50.0)  # only an upper level
    lb, ub = _intervals(p, RECT, 90.0, 90.0)
    lb[c] = p.values[c]  # printed from the true value up
    verdict = interval_verdict(p, lb, ub)
    assert verdict.outsider.ok
    assert verdict.reasons(c) == ["endpoint"]


def test_rounding_interval_must_cover_the_protection_interval():
    # the example in whole numbers: value 1521, level 152, base 412, printed 1236
    p = problem_2d([[1521, 300], [700, 900]], [(1, 1)], 152.0)
    c = cell_id(p, 1, 1)
    lo, hi = rounding_interval(np.array([1236.0]), 412, 0, 0)
    assert (lo[0], hi[0]) == (825.0, 1647.0)  # whole numbers strictly within one base
    x = p.values.copy()
    x[c] = 1236.0
    verdict = rounded_verdict(p, x, 412, 0)
    assert verdict.reasons(c) == ["rounding interval"]
    with pytest.raises(ValueError):
        face_verdict(p, Face("round", published=x))  # the base is part of the face


def test_rounded_table_with_a_wide_base_passes():
    p = problem_2d([[1521, 300], [700, 900]], [(1, 1)], 152.0)
    # an additive zero-restricted rounding to base 1000 (cells in row-major order)
    rounded = {(0, 0): 4000, (0, 1): 3000, (0, 2): 1000, (1, 0): 2000, (1, 1): 2000,
               (1, 2): 0, (2, 0): 2000, (2, 1): 1000, (2, 2): 1000}  # fmt: skip
    x = np.zeros(p.n_cells)
    for (r, col), v in rounded.items():
        x[cell_id(p, r, col)] = v
    assert np.abs(p.relations @ x).max() == 0  # it adds up
    verdict = face_verdict(p, Face("round", published=x, base=1000, steps=0))
    assert verdict.ok, verdict.summary()


def test_adjusted_value_moved_by_exactly_its_level_is_estimated():
    p = problem_2d(EX1, [(1, 1)], 50.0)
    c = cell_id(p, 1, 1)
    x = p.values.copy()
    x[c] = 945.0  # a + UPL: the attacker's `adjusted − UPL` is the true value
    assert adjusted_verdict(p, x).reasons(c) == ["level estimate"]
    x[c] = 900.0  # not moved out of its protection interval
    assert adjusted_verdict(p, x).reasons(c) == ["adjusted value"]
    x[c] = 945.0 + 23.0  # moved beyond its level by more than the tolerance
    assert adjusted_verdict(p, x).ok


def test_cta_result_gets_the_form_aware_verdict():
    from argusqt.protection.run import run_method

    p = problem_2d(EX1, [(1, 1)], 50.0)
    res = run_method(p, "CTA", {})
    assert res.verdict is not None
    c = cell_id(p, 1, 1)
    moved = abs(float(res.published[c]) - 895.0)
    # a move of exactly the level is estimated back; a wider one passes
    assert res.verdict.ok == (moved > 50.0 + point_tolerance(p)[c])


def _ip_table(down: float, up: float):
    dims = [flat_codelist("r", 4), flat_codelist("c", 2)]
    table = table_from_leaves(dims, np.asarray(EX1, float))
    c = table.cell_index((1, 1))
    p = problem_from_table(table, np.array([c]), 50.0)
    lb, ub = _intervals(p, RECT, down, up)
    table.interval_lower, table.interval_upper = lb, ub
    table.protection = ProtectionInfo("IP", "interval")
    return table, c


def test_gate_refuses_a_centred_interval_table_naming_the_cell():
    table, c = _ip_table(50.0, 50.0)
    mark_protected(table, interval_verdict(problem_from_table(table, np.array([c]), 50.0),
                                           table.interval_lower, table.interval_upper))  # fmt: skip
    assert protection_state(table) == "refused"
    with pytest.raises(PublicationError) as err:
        clear_for_publication(table)
    assert err.value.cells == [table.cell_codes(c)]
    assert "midpoint" in str(err.value)


def test_gate_passes_an_asymmetric_interval_table():
    table, _c = _ip_table(50.0, 80.0)
    assert "Audit passed" in clear_for_publication(table)


def test_endpoint_at_the_a_priori_bound_is_not_an_estimate():
    """A zero primary of a non-negative table sits at its bound 0 whatever is printed."""
    dims = [flat_codelist("r", 2), flat_codelist("c", 2)]
    table = table_from_leaves(dims, np.array([[0.0, 7.0], [5.0, 9.0]]))
    c = table.cell_index((1, 1))
    p = problem_from_table(
        table, np.array([c]), 0.0
    )  # levels 0: one unit up (argusqt/docs/methods.md §12)
    assert p.lower[c] == 0.0 and p.upl[c] == 1.0
    lb, ub = p.values.copy(), p.values.copy()
    for cell in [c, table.cell_index((1, 2)), table.cell_index((2, 1)), table.cell_index((2, 2))]:
        lb[cell], ub[cell] = max(p.values[cell] - 4.0, 0.0), p.values[cell] + 4.0
    verdict = interval_verdict(p, lb, ub)
    assert verdict.ok, verdict.summary()  # lower end 0 = value = bound; midpoint 2 is off
    ub[c] = 0.5  # narrow: its midpoint 0.25 lies within half a unit of the value
    assert interval_verdict(p, lb, ub).reasons(c) == ["midpoint"]
