"""The publication audit's shortcuts of D-64: primaries the method's moves already prove skip
the coalition's LPs, and the recheck after an insider repair starts from the repair's moves.

Both only ever prove safety with checked attacker moves, so the verdicts must be those of
the independent attacker of protect_helpers (scipy's linprog over every relation, each
respondent alone in a suppressed cell attacking with its own cells fixed).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protect_helpers import lp_protected, lp_publishable
from test_insider_fast import PROPERTY, _problem

from argusqt.model.status import is_suppressed
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.audit.insider_repair import make_publishable, repair_insiders
from argusqt.protection.audit.outsider import audit
from argusqt.protection.audit.publication import publication_audit, recheck_after_growth
from argusqt.protection.suppress.heuristic import solve_heuristic


def _pairs(verdict) -> set[tuple[int, int]]:
    ins = verdict.insider
    return set() if ins is None else {(d.respondent, d.cell) for d in ins.disclosures}


def _heur(seed: int):
    problem = _problem(seed)
    result = solve_heuristic(problem)  # no singleton cells: insiders are often disclosed
    return problem, is_suppressed(result.status) | problem.primary, result.moves


@PROPERTY
@given(st.integers(0, 10**6))
def test_seeded_audit_and_repair_agree_with_the_independent_attacker(seed):
    problem, sup, moves = _heur(seed)
    verdict = publication_audit(problem, sup, intervals=False, moves=moves)
    assert verdict.ok == lp_publishable(problem, sup)
    assert _pairs(verdict) == _pairs(publication_audit(problem, sup, intervals=False))
    if not verdict.outsider.ok:
        return  # an outsider failure is the method's defect: make_publishable refuses it
    fixed, after, _ = make_publishable(problem, sup, intervals=False, moves=moves)
    assert after.ok
    assert lp_publishable(problem, fixed)


def _disclosed(limit: int = 40):
    """(problem, pattern, HEUR's moves, verdict) of seeds whose pattern an insider breaks."""
    found = []
    for seed in range(limit):
        problem, sup, moves = _heur(seed)
        verdict = publication_audit(problem, sup, intervals=False, moves=moves)
        if verdict.outsider.ok and not verdict.ok:
            found.append((problem, sup, moves, verdict))
            if len(found) == 4:
                break
    assert len(found) >= 3, "the generator makes patterns insiders break"
    return found


def test_the_repairs_moves_are_attacker_moves_that_leave_the_respondent_alone():
    checked = 0
    for problem, sup, _, verdict in _disclosed():
        m = problem.relations.tocsr()
        for d in verdict.disclosures[:3]:
            found: list[tuple[np.ndarray, np.ndarray]] = []
            one = dataclasses.replace(verdict, disclosures=[d])
            grown = repair_insiders(problem, sup, one, found=found)
            assert found
            for cells, shifts in found:
                assert grown[cells].all()  # only suppressed cells move
                move = np.zeros(problem.n_cells)
                move[cells] = shifts
                assert np.abs(m @ move).max() <= 1e-7 * np.abs(shifts).max()  # relations kept
                # the respondent's own cells stay at their values
                assert not np.any(move[list(d.known_cells)])
                checked += 1
    assert checked > 0


def test_recheck_from_the_repairs_moves_gives_the_full_verdict_with_fewer_lps():
    seeded_lps = plain_lps = 0
    for problem, sup, moves, verdict in _disclosed():
        found: list[tuple[np.ndarray, np.ndarray]] = []
        grown = repair_insiders(problem, sup, verdict, found=found)
        plain = recheck_after_growth(problem, sup, grown, verdict, moves=moves)
        seeded = recheck_after_growth(
            problem, sup, grown, verdict, moves=moves + verdict.insider.moves + found
        )
        full = publication_audit(problem, grown, intervals=False)
        assert seeded.ok == plain.ok == full.ok
        assert _pairs(seeded) == _pairs(plain) == _pairs(full)
        assert seeded.ok == lp_publishable(problem, grown)
        seeded_lps += seeded.insider.n_lps - verdict.insider.n_lps
        plain_lps += plain.insider.n_lps - verdict.insider.n_lps
    assert seeded_lps < plain_lps


@pytest.mark.parametrize("seed", range(6))
def test_primaries_the_moves_prove_skip_the_coalition_with_the_same_verdict(seed):
    problem, sup, moves = _heur(seed)
    seeded = insider_audit(problem, sup, moves=moves)
    plain = insider_audit(problem, sup)
    assert {(d.respondent, d.cell) for d in seeded.disclosures} == {
        (d.respondent, d.cell) for d in plain.disclosures
    }
    assert plain.figures.get("settled_by_moves", 0) == 0


def test_some_primaries_are_settled_by_the_moves_alone():
    settled = 0
    for seed in range(8):
        problem, sup, moves = _heur(seed)
        settled += insider_audit(problem, sup, moves=moves).figures.get("settled_by_moves", 0)
    assert settled > 0


@PROPERTY
@given(st.integers(0, 10**6))
def test_hints_checked_all_at_once_never_make_a_weak_pattern_pass(seed):
    """The outsider audit's hints, checked all at once (D-64): broken moves, moves through
    published cells and moves of a pattern with a secondary published again are refused;
    the verdict is the independent attacker's."""
    problem, sup, moves = _heur(seed)
    rng = np.random.default_rng(seed)
    secondaries = np.flatnonzero(sup & ~problem.primary)
    weaker = sup.copy()
    if secondaries.size:
        weaker[rng.choice(secondaries)] = False
    bent = [(c, d * (1.0 + rng.random(d.size))) for c, d in moves if c.size > 1]
    for pattern in (sup, weaker):
        got = audit(problem, pattern, intervals=False, hints=moves + bent)
        assert got.ok == lp_protected(problem, pattern)


def test_a_table_without_relations_is_audited_with_its_hints(tmp_path):
    """No relation: every suppressed cell is safe whatever the hints (the all-at-once check
    must not reduce over zero rows; the loop it replaced allowed it)."""
    from argusqt.io.jj import read_jj
    from argusqt.protection.run import run_method

    jj = tmp_path / "zero.jj"
    jj.write_text("0\n2\n0 10 10 u 0 100 2 2 0\n1 20 20 s 0 100 0 0 0\n0\n", encoding="utf-8")
    problem = read_jj(jj)
    assert problem.relations.shape[0] == 0
    for method in ("HEUR", "OPT"):
        result = run_method(problem, method)
        sup = is_suppressed(result.status)
        assert sup[0] and not sup[1]
        assert lp_protected(problem, sup)
    broken = [(np.array([0]), np.array([1.0]))]
    assert audit(problem, np.array([True, False]), hints=broken).ok
