"""The insider check of MOD's whole-table branch-and-cut (suppress/modular_insiders.py): each
audit seeded with the moves earlier ones found, its verdict the audit's own (D-58).

Judged by the independent linprog auditor of test_modular_publish (each respondent's own
cells fixed), which shares no code with the method or with the insider audit.
"""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import lp_protected, mixed_problem, random_1h2d
from test_modular_publish import independent_publishable

from argusqt.model.status import is_suppressed
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.suppress.heuristic import solve_heuristic
from argusqt.protection.suppress.modular_insiders import PolishInsiders


def _growing_patterns(p, seed: int) -> list[np.ndarray]:
    """HEUR's pattern, then supersets of it cell by cell (each outsider-safe, like the
    candidates SCIP checks one after the other)."""
    sup = is_suppressed(solve_heuristic(p).status) | p.primary
    rng = np.random.default_rng(seed)
    out = [sup.copy()]
    for c in rng.permutation(np.flatnonzero(~sup & p.candidate))[:6].tolist():
        sup = sup.copy()
        sup[c] = True
        out.append(sup)
    return out


@pytest.mark.slow
def test_seeded_check_gives_the_audits_verdict_and_the_independent_one():
    disclosed = 0
    for seed in (1, 8):  # a 2-D and a 3-D table whose HEUR pattern an insider breaks
        p = mixed_problem(seed)
        check = PolishInsiders(p)
        assert check.active
        for mask in _growing_patterns(p, seed):
            assert lp_protected(p, mask)
            found = check(mask, None)
            assert found is not None
            plain = insider_audit(p, mask)  # no seeds
            assert sorted(c for c, _ in found) == sorted(d.cell for d in plain.disclosures)
            assert (not found) == independent_publishable(p, mask)
            disclosed += bool(found)
    assert disclosed > 0  # the check did find insiders, not only clean patterns


def test_a_pattern_is_audited_once_and_its_moves_carry_on():
    p = mixed_problem(1)
    check = PolishInsiders(p)
    patterns = _growing_patterns(p, 1)
    first = check(patterns[0], None)
    assert check.audits == 1
    assert check(patterns[0], None) == first  # SCIP asks again in another callback
    assert check.audits == 1
    for mask in patterns[1:]:
        check(mask, None)
    assert check.audits == len({m.tobytes() for m in patterns})
    assert check.moves  # what the audits found, for the next audit and the publication


def test_no_respondents_means_nothing_to_check():
    p = random_1h2d(np.random.default_rng(5), [3, 3], 4)
    p.freq = None
    p.respondents = None
    assert not PolishInsiders(p).active


def test_seeds_given_at_the_start_serve_the_first_audit_and_never_change_its_verdict():
    # D-63: the polish's first insider audit starts from the modular pattern's witness
    # moves; a seed that is no attacker move of the pattern is dropped by the audit's check
    p = mixed_problem(1)
    mask = _growing_patterns(p, 1)[0]
    plain = insider_audit(p, mask)  # no seeds
    assert plain.moves
    rng = np.random.default_rng(0)
    bogus = [(np.flatnonzero(mask)[:3], rng.normal(size=3)), (np.array([0]), np.array([1.0]))]
    check = PolishInsiders(p, moves=bogus + list(plain.moves))
    found = check(mask, None)
    assert found is not None
    assert sorted(c for c, _ in found) == sorted(d.cell for d in plain.disclosures)
    assert (not found) == independent_publishable(p, mask)
    (seeded,) = check.outcomes.values()
    assert seeded.n_lps <= plain.n_lps
    assert PolishInsiders(p, moves=None).moves == []


def test_mod_hands_its_witness_moves_to_the_polish(monkeypatch):
    import argusqt.protection.suppress.modular as modular
    from argusqt.protection.run import run_method

    p = mixed_problem(1)
    given: list[list] = []

    class Spy(PolishInsiders):
        def __init__(self, problem, moves=None):
            given.append(list(moves or []))
            super().__init__(problem, moves)

    real_polish = modular._polish
    seen: list[np.ndarray] = []

    def polish(problem, sup, *args, **kw):
        seen.append(sup.copy())
        return real_polish(problem, sup, *args, **kw)

    monkeypatch.setattr(modular, "PolishInsiders", Spy)
    monkeypatch.setattr(modular, "_polish", polish)
    r = run_method(p, "MOD", {"polish": True})
    assert r.verdict is not None and r.verdict.ok
    assert independent_publishable(p, is_suppressed(r.status))
    ((moves,), (sup,)) = given, seen
    assert moves
    rel = p.relations.tocsr()
    for cells, d in moves:  # each an attacker move through the modular pattern
        assert sup[cells].all()
        x = np.zeros(p.n_cells)
        x[cells] = d
        assert np.abs(rel @ x).max() <= 1e-7 * np.abs(d).max()
