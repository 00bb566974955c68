"""MOD's subtables' floors search with SCIP's all-suppressed heuristics switched off
(`modular.FLOORS_PLUGINS_OFF`, off by default: D-111).

The floors' search starts from the first search's pattern, which a respondent narrows, so
SCIP has no incumbent and `trivial`, `locks` and `shiftandpropagate` offer every free cell
suppressed: a full floor check for a pattern that is kept where the LP share binds. With them
off (and rapid learning, as in the polish, D-84) MOD's patterns still pass the independent
attacker and fewer patterns are checked; the default keeps SCIP's setting."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from lower_bound_attacker import attack
from test_insider_floors import secondary_cost_of

from argusqt.protection.core.result import ProtectionResult
from argusqt.protection.suppress import modular

SEEDS = [0, 3, 29]


def _floor_checks(monkeypatch) -> list[int]:
    """Suppressed cells of each pattern a subtable's floor check judges."""
    seen: list[int] = []
    real = modular._floor_check

    def logged(work, *a, **kw):  # type: ignore[no-untyped-def]
        check = real(work, *a, **kw)

        def judged(mask, stop):  # type: ignore[no-untyped-def]
            seen.append(int(np.count_nonzero(mask[: work.n_cells])))
            return check(mask, stop)

        return judged

    monkeypatch.setattr(modular, "_floor_check", logged)
    return seen


def test_off_by_default():
    assert modular.FLOORS_PLUGINS_OFF == ()


def test_switched_on_fewer_checks_and_still_protected(monkeypatch):
    seen = _floor_checks(monkeypatch)
    plain = {s: secondary_cost_of(s, "MOD") for s in SEEDS}
    n_plain = len(seen)
    seen.clear()
    monkeypatch.setattr(modular, "FLOORS_PLUGINS_OFF", modular.POLISH_PLUGINS_OFF)
    for s in SEEDS:
        cost, table = secondary_cost_of(s, "MOD")
        assert attack(table) == []
        assert cost <= plain[s][0] * 1.5  # the same kind of pattern, not a wholesale one
    assert len(seen) < n_plain


def _outcome(mask: np.ndarray | None, optimal: bool) -> modular.PatternOutcome:
    return modular.PatternOutcome(mask=mask, cost=0.0, bound=None, optimal=optimal)


def _searched(
    monkeypatch, second: modular.PatternOutcome, first_way: bool
) -> tuple[np.ndarray | None, bool]:
    """_search's pattern when the first search proves `first` optimal, the floor check
    rejects it and the floors' search ends with `second` (both searches stand-ins), in the
    run's way `first_way`; and whether the run was told the case was met."""
    fixed = np.array([1.0, np.nan, np.nan, 0.0, np.nan])
    first = np.array([True, True, False, False, False])
    runs = iter([_outcome(first, True), second])
    monkeypatch.setattr(modular, "_solve", lambda *a, **kw: next(runs))
    monkeypatch.setattr(modular, "_floor_check", lambda *a: lambda mask, stop: [(0, np.array([0]))])
    limits = SimpleNamespace(first_on_unproven_all=first_way, met_unproven_all=False)
    mask, infeasible = modular._search(
        None, fixed, first, 100, 0.0, None, None, limits, None, floors=(None, None)
    )
    assert not infeasible
    return mask, limits.met_unproven_all


def test_an_unproven_all_suppressed_floors_pattern_is_met_and_gives_way_the_second_time(
    monkeypatch,
):
    """Where the floors' search's LP share ran out on SCIP's trivial pattern (every free cell
    suppressed), the run is told; its second way sends the first search's pattern on to
    the final repair (sample-nk: 159.8 M → 52.0 M). A proven one, or any other unproven one,
    is kept and not counted."""
    every = np.array([True, True, True, False, True])
    first = np.array([True, True, False, False, False])
    other = np.array([True, True, True, False, False])
    for way, expected in ((False, every), (True, first)):
        mask, met = _searched(monkeypatch, _outcome(every, False), way)
        np.testing.assert_array_equal(mask, expected)
        assert met
    for way in (False, True):
        mask, met = _searched(monkeypatch, _outcome(every, True), way)
        np.testing.assert_array_equal(mask, every)
        assert not met
        mask, met = _searched(monkeypatch, _outcome(other, False), way)
        np.testing.assert_array_equal(mask, other)
        assert not met


def _ways(monkeypatch, costs: list[float], met: bool, **flags: bool) -> list[bool]:
    """solve_modular with its runs stood in (costs in order); the ways it ran."""
    ran: list[bool] = []

    def run(problem, params, progress, cancel, way):  # type: ignore[no-untyped-def]
        ran.append(way)
        result = ProtectionResult("MOD", np.zeros(1), cost=costs[len(ran) - 1], elapsed=1.0)
        if len(ran) == 2:
            for name, value in flags.items():
                setattr(result, name, value)
        return result, met

    monkeypatch.setattr(modular, "_modular_run", run)
    kept = modular.solve_modular(None, {"max_time": 10})
    ran.append(kept.cost)  # type: ignore[arg-type]
    return ran


def test_the_cheaper_way_is_kept_and_ties_keep_the_first(monkeypatch):
    assert modular.FLOORS_UNPROVEN_ALL is True
    assert _ways(monkeypatch, [5.0, 3.0], True) == [False, True, 3.0]
    assert _ways(monkeypatch, [3.0, 5.0], True) == [False, True, 3.0]
    assert _ways(monkeypatch, [3.0, 3.0], True) == [False, True, 3.0]
    assert _ways(monkeypatch, [5.0, 3.0], False) == [False, 5.0]  # not met: one run
    monkeypatch.setattr(modular, "FLOORS_UNPROVEN_ALL", False)
    assert _ways(monkeypatch, [5.0, 3.0], True) == [False, 5.0]


def test_a_second_way_cut_short_keeps_the_first_and_says_so(monkeypatch):
    """The time cap (or a cancel) stopping the second way: the first way's audited pattern,
    marked as decided by the cap, even where the cut run's pattern is cheaper."""
    ran = _ways(monkeypatch, [5.0, 3.0], True, timed_out=True)
    assert ran == [False, True, 5.0]


def test_both_ways_on_a_real_table_publish_what_the_attacker_cannot_break(monkeypatch):
    """A small LP share makes the floors' searches end on SCIP's trivial pattern (seed 2):
    MOD runs both ways, keeps the cheaper, and what it publishes passes the attacker."""
    ways: list[float] = []
    real = modular._modular_run

    def spy(problem, params, progress, cancel, way):  # type: ignore[no-untyped-def]
        result, met = real(problem, params, progress, cancel, way)
        ways.append(result.cost)
        return result, met

    monkeypatch.setattr(modular, "_modular_run", spy)
    monkeypatch.setattr(modular, "SCIP_LPS", 30)
    cost, table = secondary_cost_of(2, "MOD")
    assert len(ways) == 2
    assert cost == pytest.approx(min(ways))
    assert attack(table) == []
