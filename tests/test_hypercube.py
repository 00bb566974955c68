"""Hypercube (GH, argusqt/docs/methods.md §7): hand-checked boxes, singletons, model size,
repair, cancel, and random tables through an attacker LP that shares no code with the method."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protect_helpers import (
    cell_id,
    flat_codelist,
    problem_2d,
    problem_from_table,
    random_1h2d,
    random_2d,
    random_3d,
    table_from_leaves,
)
from test_protect_properties import SETTINGS, check_protected

from argusqt.errors import Cancelled, MethodError
from argusqt.model.status import is_suppressed
from argusqt.progress import CancelToken
from argusqt.protection.suppress.hypercube import _Box, solve_hypercube

# interior cells of a 3 × 3 table; costs are the values
ROWS = [[20, 50, 10], [30, 40, 60], [25, 35, 45]]


def _secondaries(problem, result) -> set[int]:
    sup = is_suppressed(result.status)
    return set(np.flatnonzero(sup & ~problem.primary).tolist())


def test_box_corner_signs_alternate_inside_and_follow_a_margin():
    inside = _Box((1, 1), (3, 2))
    flat, sign = inside.corners((4, 4))
    assert dict(zip(flat.tolist(), sign.tolist(), strict=True)) == {5: 1, 6: -1, 13: -1, 14: 1}
    with_total = _Box((1, 1), (0, 2))  # the column total moves with its cell
    flat, sign = with_total.corners((4, 4))
    assert dict(zip(flat.tolist(), sign.tolist(), strict=True)) == {5: 1, 6: -1, 1: 1, 2: -1}


def test_cheapest_rectangle_is_chosen():
    # boxes of cell (1,1): with (1,3),(3,1),(3,3) cost 10+25+45 = 80, the cheapest; every
    # corner can move by at least 10 ≥ the protection level 5
    p = problem_2d(ROWS, [(1, 1)], 5.0)
    res = solve_hypercube(p, {})
    expected = {cell_id(p, 1, 3), cell_id(p, 3, 1), cell_id(p, 3, 3)}
    assert _secondaries(p, res) == expected
    assert res.cost == pytest.approx(80.0)
    assert res.audit.ok
    check_protected(p, res.status)


def test_a_corner_too_small_for_the_level_is_not_used():
    # level 12: cell (1,3) = 10 cannot move by 12 at 100 % a-priori bounds, so the box
    # (1,2),(3,1),(3,2) = 50+25+35 = 110 wins over (2,·) boxes (120) and over two boxes added
    # up (80 + 120)
    p = problem_2d(ROWS, [(1, 1)], 12.0)
    res = solve_hypercube(p, {})
    assert _secondaries(p, res) == {cell_id(p, 1, 2), cell_id(p, 3, 1), cell_id(p, 3, 2)}
    assert res.cost == pytest.approx(110.0)


def test_apriori_percentage_narrows_the_corners_room():
    # at 40 % the corners move by at most 40 % of their value: (1,3) = 10 gives 4 < 5, and
    # the cheapest single box is (3,2): 50·0.4 = 20, 25·0.4 = 10, 35·0.4 = 14 ≥ 5
    p = problem_2d(ROWS, [(1, 1)], 5.0)
    res = solve_hypercube(p, {"apriori_percent": 40})
    assert _secondaries(p, res) == {cell_id(p, 1, 2), cell_id(p, 3, 1), cell_id(p, 3, 2)}


def test_singleton_is_a_corner_of_two_boxes_sharing_only_it():
    dims = [flat_codelist("r", 3), flat_codelist("c", 3)]
    freq = np.full((3, 3), 5.0)
    freq[0, 0] = 1.0  # cell (1,1) has a single respondent
    table = table_from_leaves(dims, np.asarray(ROWS, float), freq)
    p = problem_from_table(table, np.array([cell_id((4, 4), 1, 1)]), 5.0)
    # the boxes as chosen (the clean-up would publish the second box again: the insider
    # audit of the publication step decides whether the singleton needs it)
    plain = solve_hypercube(p, {"singleton_protection": False, "cleanup": False})
    assert len(_secondaries(p, plain)) == 3
    res = solve_hypercube(p, {"singleton_protection": True, "cleanup": False})
    sup = is_suppressed(res.status).reshape(4, 4)
    # two boxes through (1,1) sharing only it: two more suppressed cells in its row and column
    assert sup[1, 1:].sum() + sup[1, 0] >= 3 and sup[1:, 1].sum() + sup[0, 1] >= 3
    assert res.audit.ok


def test_cleanup_publishes_again_corners_later_boxes_made_redundant_and_logs_it():
    rng = np.random.default_rng(4)  # 14 of 27 box corners are not needed
    p = random_1h2d(rng, [3, 3], 6)
    boxes = solve_hypercube(p, {"cleanup": False})
    res = solve_hypercube(p, {})
    kept, before = _secondaries(p, res), _secondaries(p, boxes)
    assert kept < before  # only removes, and here removes some
    (line,) = [x for x in res.log if x.startswith("clean-up:")]
    assert line.startswith(f"clean-up: {len(before) - len(kept)} of {len(before)} secondary")
    assert res.cost < boxes.cost
    check_protected(p, res.status)


def test_a_pattern_the_cleanup_leaves_unprotected_is_repaired_and_logged(monkeypatch):
    # the clean-up finds witnesses on neighbourhoods only; should it publish a needed cell
    # (here: every secondary), the repair step must put the pattern right and say so
    from argusqt.protection.suppress import hypercube

    def careless(problem, sup, **_):
        return sup & problem.primary, {"removed": 0, "lps": 0, "elapsed": 0.0, "stopped": False}

    monkeypatch.setattr(hypercube, "cleanup", careless)
    p = random_1h2d(np.random.default_rng(4), [3, 3], 6)
    res = solve_hypercube(p, {})
    (line,) = [x for x in res.log if x.startswith("repair after the clean-up:")]
    assert int(line.split()[4]) > 0
    assert res.figures["repair_added"] > 0
    check_protected(p, res.status)


def test_normal_model_refuses_a_long_sub_codelist_and_large_takes_it():
    rng = np.random.default_rng(3)
    p = random_2d(rng, 200, 2, primary_share=0.01)
    with pytest.raises(MethodError, match="large model"):
        solve_hypercube(p, {"model_size": 0})
    res = solve_hypercube(p, {"model_size": 1})
    assert res.audit.ok
    assert any("large model" in line for line in res.log)


def test_no_time_for_boxes_leaves_the_pattern_to_the_repair_step_which_is_logged():
    rng = np.random.default_rng(7)
    p = random_1h2d(rng, [3, 3], 5)
    res = solve_hypercube(p, {"max_time": 0})
    assert res.timed_out
    assert res.figures["repair_added"] > 0
    assert any("repair after the full-table audit" in line for line in res.log)
    check_protected(p, res.status)


def test_progress_events_name_the_method():
    rng = np.random.default_rng(1)
    p = random_1h2d(rng, [2, 3], 4)
    events = []
    solve_hypercube(p, {}, progress=events.append)
    assert any(e.message.startswith("Hypercube: subtable") for e in events)
    assert events[-1].fraction == 1.0


def test_cancel_before_start_still_returns_an_audited_pattern_not_suppress_all():
    rng = np.random.default_rng(2)
    p = random_1h2d(rng, [2, 3], 4)
    token = CancelToken()
    token.cancel()
    res = solve_hypercube(p, {}, cancel=token)
    assert res.cancelled and res.audit.ok
    assert len(_secondaries(p, res)) < int(p.candidate.sum())
    check_protected(p, res.status)


def test_cancel_without_time_to_audit_gives_no_pattern():
    rng = np.random.default_rng(2)
    p = random_1h2d(rng, [2, 3], 4)
    token = CancelToken()
    token.cancel()
    token.cancelled_at = time.monotonic() - 3600.0  # the grace time is long over
    with pytest.raises(Cancelled):
        solve_hypercube(p, {}, cancel=token)


def test_bad_percentage_is_refused():
    p = problem_2d(ROWS, [(1, 1)], 5.0)
    with pytest.raises(MethodError, match="percentage"):
        solve_hypercube(p, {"apriori_percent": 0})


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    nrow=st.integers(2, 6),
    ncol=st.integers(2, 6),
    share=st.floats(0.05, 0.3),
    pct=st.sampled_from([100.0, 30.0]),
)
def test_gh_2d_pattern_is_protected(seed, nrow, ncol, share, pct):
    p = random_2d(np.random.default_rng(seed), nrow, ncol, primary_share=share)
    res = solve_hypercube(p, {"apriori_percent": pct})
    check_protected(p, res.status)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    b1=st.integers(2, 3),
    b2=st.integers(1, 3),
    ncol=st.integers(2, 4),
    zero_share=st.sampled_from([0.0, 0.1]),
)
def test_gh_1h2d_pattern_is_protected(seed, b1, b2, ncol, zero_share):
    p = random_1h2d(np.random.default_rng(seed), [b1, b2], ncol, zero_share=zero_share)
    res = solve_hypercube(p, {})
    check_protected(p, res.status)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), b=st.integers(1, 2), n2=st.integers(2, 3))
def test_gh_3d_pattern_is_protected(seed, b, n2):
    p = random_3d(np.random.default_rng(seed), [2, b], [2], n2)
    res = solve_hypercube(p, {})
    check_protected(p, res.status)
