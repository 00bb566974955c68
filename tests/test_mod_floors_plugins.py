"""MOD's subtables' floors search with SCIP's all-suppressed heuristics switched off
(`modular.FLOORS_PLUGINS_OFF`, off by default: D-111).

The floors' search starts from the first search's pattern, which a respondent narrows, so
SCIP has no incumbent and `trivial`, `locks` and `shiftandpropagate` offer every free cell
suppressed: a full floor check for a pattern that is kept where the LP share binds. With them
off (and rapid learning, as in the polish, D-84) MOD's patterns still pass the independent
attacker and fewer patterns are checked; the default keeps SCIP's setting."""

from __future__ import annotations

import numpy as np
from lower_bound_attacker import attack
from test_insider_floors import secondary_cost_of

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


def _searched(monkeypatch, second: modular.PatternOutcome) -> np.ndarray | None:
    """_search's pattern when the first search proves `first` optimal, the floor check
    rejects it and the floors' search ends with `second` (both searches stand-ins)."""
    fixed = np.array([1.0, np.nan, np.nan, 0.0, np.nan])
    first = np.array([True, True, False, False, False])
    runs = iter([_outcome(first, True), second])
    monkeypatch.setattr(modular, "_solve", lambda *a, **kw: next(runs))
    monkeypatch.setattr(modular, "_floor_check", lambda *a: lambda mask, stop: [(0, np.array([0]))])
    mask, infeasible = modular._search(
        None, fixed, first, 100, 0.0, None, None, None, None, floors=(None, None)
    )
    assert not infeasible
    return mask


def test_an_unproven_all_suppressed_floors_pattern_gives_way_to_the_first(monkeypatch):
    """Switched on: where the floors' search's LP share ran out on SCIP's trivial pattern
    (every free cell suppressed), the first search's pattern goes on to the final repair
    (sample-nk: 159.8 M → 52.0 M); a proven one, or any other unproven one, is kept."""
    assert modular.FLOORS_UNPROVEN_ALL is False  # off by default: g03 +0.02 % (D-111)
    monkeypatch.setattr(modular, "FLOORS_UNPROVEN_ALL", True)
    every = np.array([True, True, True, False, True])
    first = np.array([True, True, False, False, False])
    np.testing.assert_array_equal(_searched(monkeypatch, _outcome(every, False)), first)
    np.testing.assert_array_equal(_searched(monkeypatch, _outcome(every, True)), every)
    other = np.array([True, True, True, False, False])
    np.testing.assert_array_equal(_searched(monkeypatch, _outcome(other, False)), other)
    monkeypatch.setattr(modular, "FLOORS_UNPROVEN_ALL", False)  # the default
    np.testing.assert_array_equal(_searched(monkeypatch, _outcome(every, False)), every)
