"""The insider check of MOD's whole-table branch-and-cut (suppress/modular_insiders.py): each
audit seeded with the moves earlier ones found, its verdict the audit's own; the subtable
patterns a rerun takes from memory (suppress/modular_cache.py) as a fresh run has them (D-58).

Judged by the independent linprog auditor of test_modular_publish (each respondent's own
cells fixed), which shares no code with the method or with the insider audit.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
from protect_helpers import lp_protected, mixed_problem, random_1h2d
from test_modular_publish import independent_publishable

from argusqt.model.status import is_suppressed, secondary_status_for
from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.suppress.heuristic import solve_heuristic
from argusqt.protection.suppress.modular import solve_modular, subtables
from argusqt.protection.suppress.modular_cache import SubtableCache
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
            assert check.outcome(mask) is not None
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


def _kept(p, cells):
    """The problem as protect_combined's rerun has it: a shallow copy, `cells` secondary."""
    q = copy.copy(p)
    q.status = np.asarray(p.status).copy()
    q.status[cells] = secondary_status_for(q.status[cells])
    return q


def _fresh(p):
    """The same problem as a new object (no memory of earlier runs)."""
    return dataclasses.replace(p)


@pytest.mark.parametrize("seed", [0, 3])
def test_a_rerun_takes_unchanged_subtables_from_memory_and_gives_a_fresh_runs_pattern(seed):
    p = random_1h2d(np.random.default_rng(seed), [3, 3], 4)
    p.cost = np.abs(p.values)
    first = solve_modular(p)
    cache = SubtableCache.of(p)
    assert cache.hits == 0 and cache.entries
    # a rerun with a leaf cell of the last subtable kept secondary: the earlier ones are
    # unchanged inputs, the last one is solved again
    leaf = int(subtables(p.dims)[-1].cells[-1])
    if is_suppressed(np.asarray(first.status))[leaf] or p.primary[leaf]:
        leaf = int(np.flatnonzero(~p.primary & p.candidate)[-1])
    again = _kept(p, [leaf])
    rerun = solve_modular(again)
    assert SubtableCache.of(again) is cache and cache.hits > 0
    fresh = solve_modular(_fresh(again))
    assert np.array_equal(rerun.status, fresh.status)
    assert rerun.figures["scip_lps"] == fresh.figures["scip_lps"]  # the same work charged
    sup = is_suppressed(np.asarray(rerun.status))
    assert sup[leaf] and lp_protected(again, sup)
