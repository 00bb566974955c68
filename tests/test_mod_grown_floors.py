"""MOD's subtable floor check attacks a pattern that grows earlier checked ones on the pairs
all of those failed only (docs/design.md, D-117): every check's finds equal a fresh
check's, on seeded patterns some respondent narrows, their growths and their neighbours."""

from __future__ import annotations

import numpy as np
import pytest
from test_floor_gather import _patterns

from argusqt.protection.audit import floor_passed
from argusqt.protection.lp.components import variable_components
from argusqt.protection.suppress import modular


def _finds(found) -> list:
    return [tuple(np.asarray(part).tolist() for part in f) for f in found]


def _sequence(problem, patterns, seed):
    """Each pattern, then growths of it (a few cells more, then every cell: SCIP's
    all-suppressed candidate) and neighbours that grow nothing checked."""
    rng = np.random.default_rng(seed)
    out = []
    for sup in patterns:
        out.append(sup)
        for more in (2, 5):
            grown = sup.copy()
            grown[rng.integers(0, problem.n_cells, more)] = True
            out.append(grown)
        other = sup.copy()
        other[rng.integers(0, problem.n_cells, 3)] = False
        out.append(other | problem.primary)
    out.append(np.ones(problem.n_cells, dtype=bool))
    return out


@pytest.mark.parametrize("seed", [2, 5, 6, 9])
def test_a_grown_pattern_finds_what_a_fresh_check_finds(monkeypatch, seed):
    problem, patterns = _patterns(monkeypatch, seed, "MOD")
    ltrue = np.asarray(problem.primary, dtype=bool)
    calls: list[object] = []
    audit = modular.floor_audit

    def counted(*args, **kw):
        calls.append(kw.get("only"))
        return audit(*args, **kw)

    monkeypatch.setattr(modular, "floor_audit", counted)
    check = modular._floor_check(problem, problem.floors, ltrue)
    found = 0
    for sup in _sequence(problem, patterns, seed):
        got = check(sup, None)
        fresh = modular._floor_check(problem, problem.floors, ltrue)(sup, None)
        assert got is not None and fresh is not None
        assert _finds(got) == _finds(fresh)
        found += len(fresh)
    assert found > 0  # some respondent narrows some of these patterns
    assert any(only is not None for only in calls)  # and some checks were on fewer pairs


def test_off_every_check_attacks_every_pair(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    monkeypatch.setattr(modular, "GROWN_FLOORS", False)
    calls: list[object] = []
    audit = modular.floor_audit
    monkeypatch.setattr(
        modular, "floor_audit", lambda *a, **kw: calls.append(kw.get("only")) or audit(*a, **kw)
    )
    check = modular._floor_check(problem, problem.floors, np.asarray(problem.primary))
    for sup in _sequence(problem, patterns, 2):
        check(sup, None)
    assert calls and all(only is None for only in calls)


def test_the_kept_patterns_are_bounded(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 5, "MOD")
    monkeypatch.setattr(floor_passed, "KEPT", 3)
    grown = floor_passed.PassedPairs(problem)
    for sup in _sequence(problem, patterns, 5):
        grown.add(sup, [])
    assert len(grown.kept) == 3


def test_a_pair_is_spared_only_where_its_component_stays_suppressed(monkeypatch):
    spared = 0
    for seed in (2, 5, 6, 9):
        problem, patterns = _patterns(monkeypatch, seed, "MOD")
        for sup in patterns:
            grown = floor_passed.PassedPairs(problem)
            grown.add(sup, [])  # every pair passed
            assert grown.pairs(sup) == []
            assert grown.pairs(np.ones(problem.n_cells, dtype=bool)) == []
            comps = variable_components(problem.relations, sup)
            for cell in np.flatnonzero(sup & ~problem.primary).tolist():
                smaller = sup.copy()
                smaller[cell] = False  # a secondary published
                wanted = grown.targets(smaller)
                again = grown.pairs(smaller)
                again = wanted if again is None else again
                broken = next(comp.cells for comp in comps if cell in comp.cells)
                # every pair of the component that lost a cell is attacked again, only those
                assert again == [(c, d) for c, d in wanted if c in broken]
                spared += len(wanted) - len(again)
    assert spared > 0
