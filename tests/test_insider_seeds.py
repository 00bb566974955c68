"""The insider audit started from a method's moves (Cover.seed, docs/design.md D-49).

HEUR hands its kept attacker moves to the publication audit so that the insider cover
need not find them again by path LPs. The moves only ever prove safety, so the verdict
must be the one the audit gives without them, and the one of an attacker that shares none
of that code (test_insider_fast's brute force, one HiGHS LP per attacker). A move that is
not an attacker move of the pattern (a broken relation, a published cell) must be refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protect_helpers import cell_id
from test_insider_fast import PROPERTY, _problem, _row_insider, assert_agrees_with_brute_force
from test_issue27_combined import MICRODATA, SECTIONS

import argusqt
import argusqt.protection.run as run_module
from argusqt.model.status import is_suppressed
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.audit.insider_repair import make_publishable
from argusqt.protection.run import run_method
from argusqt.protection.suppress import combined
from argusqt.protection.suppress.heuristic import solve_heuristic


def _pairs(out) -> set[tuple[int, int]]:
    return {(d.respondent, d.cell) for d in out.disclosures}


def _heur(seed: int):
    problem = _problem(seed)
    result = solve_heuristic(problem)
    return problem, is_suppressed(result.status) | problem.primary, result.moves


@PROPERTY
@given(st.integers(0, 10**6))
def test_seeded_insider_audit_finds_what_the_brute_force_finds(seed):
    problem, sup, moves = _heur(seed)
    seeded = insider_audit(problem, sup, moves=moves)
    plain = insider_audit(problem, sup)
    assert _pairs(seeded) == _pairs(plain)
    assert_agrees_with_brute_force(problem, sup, _pairs(seeded))


def test_heur_moves_are_checked_attacker_moves_and_save_cover_lps():
    seeded_lps = plain_lps = used = 0
    for seed in range(8):
        problem, sup, moves = _heur(seed)
        assert moves, "HEUR keeps the moves that prove its pattern"
        seeded = insider_audit(problem, sup, moves=moves)
        plain = insider_audit(problem, sup)
        assert _pairs(seeded) == _pairs(plain)
        used += seeded.figures.get("seeded", 0)
        seeded_lps += seeded.n_lps
        plain_lps += plain.n_lps
    assert used > 0
    assert seeded_lps < plain_lps


def test_a_move_breaking_a_relation_is_refused():
    p, sup = _row_insider()
    b = cell_id(p, 1, 2)
    # B alone shifted (row 1 no longer adds up): no attacker can make that move
    bogus = (np.array([b], dtype=np.int64), np.array([5.0]))
    out = insider_audit(p, sup, moves=[bogus])
    assert out.figures.get("seeded", 0) == 0
    assert _pairs(out) == {(0, b)}


def test_a_tiny_move_breaking_a_relation_is_refused():
    """Review of D-49: the relation check was absolute (1e-7), so a move of size 1e-6 that
    breaks its relation by 1e-7 passed, and `proves` then scaled it up to the bounds."""
    p, sup = _row_insider()
    b = cell_id(p, 1, 2)
    bogus = (np.array([b], dtype=np.int64), np.array([1e-9]))
    out = insider_audit(p, sup, moves=[bogus])
    assert out.figures.get("seeded", 0) == 0
    assert _pairs(out) == {(0, b)}


def test_a_move_through_a_published_cell_is_refused():
    p, sup = _row_insider()
    b, row1 = cell_id(p, 1, 2), cell_id(p, 1, 0)
    # B and the row-1 total up, A fixed: a real move of the table, but the row total is
    # published, so not a move of this attacker (nor of the outsider)
    cells = np.array([row1, b, 0, cell_id(p, 0, 2)], dtype=np.int64)
    move = (cells, np.array([3.0, 3.0, 3.0, 3.0]))
    assert not sup[row1]
    out = insider_audit(p, sup, moves=[move])
    assert out.figures.get("seeded", 0) == 0
    assert _pairs(out) == {(0, b)}


def test_virtual_cells_of_a_move_are_dropped_and_the_rest_checked():
    p, sup = _row_insider()
    b = cell_id(p, 1, 2)
    d = cell_id(p, 2, 2)
    c = cell_id(p, 2, 1)
    a = cell_id(p, 1, 1)
    # a real move of the four interior cells (A+, B−, C−, D+) plus a cell past the table
    cells = np.array([a, b, c, d, p.n_cells + 3], dtype=np.int64)
    move = (cells, np.array([2.0, -2.0, -2.0, 2.0, 7.0]))
    out = insider_audit(p, sup, moves=[move])
    assert out.figures.get("seeded", 0) == 1
    # it moves A, which the respondent knows: B stays disclosed to it
    assert _pairs(out) == {(0, b)}


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_make_publishable_with_moves_gives_the_same_pattern(seed):
    problem, sup, moves = _heur(seed)
    fixed_a, verdict_a, added_a = make_publishable(problem, sup)
    fixed_b, verdict_b, added_b = make_publishable(problem, sup, moves=moves)
    assert verdict_a.ok and verdict_b.ok
    assert np.array_equal(fixed_a, fixed_b) and added_a == added_b


def _attacker_move(problem, sup, cells, d) -> bool:
    """The test's own check: real cells only, all suppressed, every relation kept."""
    n = problem.n_cells
    if cells.size == 0 or cells.max() >= n or not sup[cells].all():
        return False
    full = np.zeros(n)
    full[cells] = d
    residual = np.abs(problem.relations @ full).max(initial=0.0)
    return bool(residual <= 1e-6 * max(1.0, float(np.abs(d).max())))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_run_keeps_the_moves_that_proved_its_pattern(seed):
    problem = _problem(seed)
    result = run_method(problem, "HEUR", {"polish": 0})
    sup = is_suppressed(result.status)
    found = result.verdict.insider.moves if result.verdict.insider else []
    assert all(_attacker_move(problem, sup, c, d) for c, d in found)
    assert len(result.moves) >= len(found)
    # a second audit of the same pattern from them: the same verdict
    again = insider_audit(problem, sup, moves=result.moves)
    assert _pairs(again) == _pairs(insider_audit(problem, sup)) == set()


def test_the_rule_on_combined_cells_hands_the_moves_on_and_drops_them(monkeypatch):
    calls = []

    def recording(problem, *args, **kwargs):
        result = real(problem, *args, **kwargs)
        calls.append((len(problem.moves), len(result.moves), result))
        return result

    real = run_module.run_method
    monkeypatch.setattr(run_module, "run_method", recording)
    # the rerun path, as methods outside GROWN take it (HEUR's pattern grows instead, D-56)
    monkeypatch.setattr(combined, "GROWN", frozenset())
    # the respondents sharing cells (D-91) add cells before the rule runs HEUR again: off
    # here, the test is about the moves handed on through the rerun
    import argusqt.protection.core.problem as problem_module

    monkeypatch.setattr(problem_module, "floors_of", lambda table: None)
    p = argusqt.protect(
        MICRODATA,
        explanatory=["nace"],
        response="turnover",
        rules="NK(2,80)",
        hierarchies={"nace": SECTIONS},
        method="HEUR",
        progress=False,
    )[0]
    assert len(calls) >= 2  # the rule on combined cells ran HEUR again
    assert calls[0][0] == 0 and calls[0][1] > 0
    assert calls[1][0] == calls[0][1]  # the next run's audit starts from them
    assert calls[-1][2].moves == []  # not kept with the session
    assert p.audit().ok
