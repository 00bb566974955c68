"""Network method (NET, argusqt/docs/methods.md §8): the table as a circulation, shortest
cycles, the shape rule, cancel, and random 2-D / 1H2D tables through an attacker LP of its own."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protect_helpers import (
    cell_id,
    flat_codelist,
    hier_codelist,
    problem_2d,
    random_1h2d,
    random_2d,
    random_3d,
    random_problem,
)
from test_protect_properties import SETTINGS, check_protected

from argusqt.errors import Cancelled, MethodError
from argusqt.model.status import is_suppressed
from argusqt.progress import CancelToken
from argusqt.protection.lp.components import DOWN, UP, MoveContext
from argusqt.protection.suppress.network import (
    SHAPE_RULE,
    CyclePlanner,
    build_network,
    incidence,
    solve_network,
)

ROWS = [[20, 50, 10], [30, 40, 60], [25, 35, 45]]


def _same_row_space(a: np.ndarray, b: np.ndarray) -> bool:
    rank = np.linalg.matrix_rank
    return rank(a) == rank(b) == rank(np.r_[a, b])


@pytest.mark.parametrize(
    "dims",
    [
        [flat_codelist("r", 4), flat_codelist("c", 3)],
        [hier_codelist("h", [2, 3]), flat_codelist("c", 4)],
        [hier_codelist("h", [3, 2, 2]), flat_codelist("c", 3)],
        [flat_codelist("c", 3), hier_codelist("h", [2, 2])],  # the hierarchy second
    ],
    ids=["2D", "1H2D", "1H2D-3-levels", "2D1H"],
)
def test_node_equations_are_the_table_relations(dims):
    p = random_problem(np.random.default_rng(0), dims)
    net = build_network(p)
    n = incidence(net).toarray()
    assert np.abs(n @ p.values).max() < 1e-9  # the table is a circulation
    assert _same_row_space(n, p.relations.toarray())
    assert (np.abs(n).sum(axis=0) == 2).all()  # every cell is one arc


def test_cycles_are_attacker_moves_within_the_bounds():
    p = random_1h2d(np.random.default_rng(4), [2, 3], 5, primary_share=0.3)
    ctx = MoveContext(p)
    planner = CyclePlanner(p, build_network(p), ctx)
    sup = p.primary.copy()
    m = p.relations.toarray()
    found = 0
    for cell in np.flatnonzero(p.primary):
        for direction in (UP, DOWN):
            cyc = planner.cycle(int(cell), direction, sup)
            if cyc is None:
                continue
            found += 1
            d = np.zeros(p.n_cells)
            d[cyc[:, 0].astype(int)] = cyc[:, 1]
            assert np.abs(m @ d).max() < 1e-9
            assert d[cell] == pytest.approx(direction * ctx.required(int(cell), direction))
            moved = p.values + d
            assert (moved >= p.lower - 1e-9).all() and (moved <= p.upper + 1e-9).all()
    assert found > 0


def test_shortest_cycle_is_the_cheapest_rectangle():
    p = problem_2d(ROWS, [(1, 1)], 5.0)
    res = solve_network(p, {})
    sec = set(np.flatnonzero(is_suppressed(res.status) & ~p.primary).tolist())
    assert sec == {cell_id(p, 1, 3), cell_id(p, 3, 1), cell_id(p, 3, 3)}
    assert res.cost == pytest.approx(80.0)
    # one cycle, scaled both ways within the bounds, proves both directions
    assert res.figures["cycles"] == 1 and res.figures["flows"] == 0


def test_no_single_cycle_with_room_splits_the_move_over_several():
    # totals protected: the primary 100 must move by 60, every other cell in its row and
    # column is 40, so no one cycle carries the move; the min-cost flow splits it
    p = problem_2d([[100, 40, 40], [40, 50, 50], [40, 50, 50]], [(1, 1)], 60.0)
    totals = np.array([cell_id(p, 0, j) for j in range(4)] + [cell_id(p, i, 0) for i in range(4)])
    p.status[totals] = 10
    res = solve_network(p, {})
    assert res.figures["flows"] > 0
    assert res.audit.ok
    check_protected(p, res.status)


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda rng: random_3d(rng, [2], [2], 2), "this table has 3 dimensions"),
        (
            lambda rng: random_problem(
                rng, [hier_codelist("a", [2, 2]), hier_codelist("b", [2, 2])]
            ),
            "both a and b have hierarchy levels",
        ),
        (lambda rng: random_problem(rng, [flat_codelist("a", 5)]), "this table has 1 dimension"),
    ],
    ids=["3D", "2H", "1D"],
)
def test_other_shapes_are_refused_naming_the_rule(make, words):
    p = make(np.random.default_rng(0))
    with pytest.raises(MethodError) as err:
        solve_network(p, {})
    assert SHAPE_RULE in str(err.value) and words in str(err.value)


def test_progress_and_cleanup_are_logged():
    p = random_1h2d(np.random.default_rng(5), [3, 3], 6)
    events = []
    res = solve_network(p, {}, progress=events.append)
    assert any(e.message.startswith("Network: primary") for e in events)
    assert any(line.startswith("clean-up") for line in res.log)
    plain = solve_network(p, {"cleanup": False})
    assert res.cost <= plain.cost + 1e-9


def test_cancel_before_start_still_protects_within_the_grace_time():
    p = random_1h2d(np.random.default_rng(2), [2, 3], 4)
    token = CancelToken()
    token.cancel()
    res = solve_network(p, {}, cancel=token)
    assert res.cancelled and res.audit.ok
    check_protected(p, res.status)


def test_cancel_without_time_left_gives_no_pattern():
    p = random_1h2d(np.random.default_rng(2), [2, 3], 4)
    token = CancelToken()
    token.cancel()
    token.cancelled_at = time.monotonic() - 3600.0
    with pytest.raises(Cancelled):
        solve_network(p, {}, cancel=token)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    nrow=st.integers(2, 6),
    ncol=st.integers(2, 6),
    share=st.floats(0.05, 0.3),
)
def test_net_2d_pattern_is_protected(seed, nrow, ncol, share):
    p = random_2d(np.random.default_rng(seed), nrow, ncol, primary_share=share)
    res = solve_network(p, {})
    check_protected(p, res.status)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    b1=st.integers(2, 3),
    b2=st.integers(1, 3),
    ncol=st.integers(2, 4),
    zero_share=st.sampled_from([0.0, 0.1]),
    second=st.booleans(),
)
def test_net_1h2d_pattern_is_protected(seed, b1, b2, ncol, zero_share, second):
    rng = np.random.default_rng(seed)
    dims = [hier_codelist("h", [b1, b2]), flat_codelist("c", ncol)]
    p = random_problem(rng, dims[::-1] if second else dims, zero_share=zero_share)
    res = solve_network(p, {})
    check_protected(p, res.status)
