"""OPT's repair heuristic for the rule on combined cells (D-54): a candidate only the rule
rejects gets the cells the rule needs. Checked with the test's own outsider LP
(protect_helpers.lp_protected) and its own reading of the (n,k) rule on sums of a 2-D table
built from records here, never with argusqt's audit or rules."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protect_helpers import lp_protected

import argusqt
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.lp.separation import Cut
from argusqt.protection.suppress.branch_and_cut import solve_pattern
from argusqt.protection.suppress.combined import _unsafe_relations_of
from argusqt.protection.suppress.combined_repair_heur import (
    RuleAwareStore,
    RuleRecorder,
    repair_pattern,
)

SECTIONS = {"B": ["B05", "B06", "B07"], "C": ["C10", "C11", "C12"]}
REGIONS = ["R1", "R2", "R3"]
N, K = 2, 80.0


def _records(seed: int) -> pd.DataFrame:
    """Two to five enterprises per division × region, some dominated by one."""
    rng = np.random.default_rng(seed)
    rows = []
    for divs in SECTIONS.values():
        for d in divs:
            for r in REGIONS:
                v = np.round(rng.lognormal(4, 1.0, size=int(rng.integers(2, 6)))) + 1
                if rng.random() < 0.5:
                    v[0] *= 8
                rows += [(d, r, float(x)) for x in v]
    return pd.DataFrame(rows, columns=["nace", "region", "x"])


def _case(seed: int):
    """The table (statuses after the primary rules), its problem and the rule as OPT gets it."""
    frame = _records(seed)
    sections = {d: s for s, divs in SECTIONS.items() for d in divs}
    p = argusqt.protect(
        frame,
        explanatory=["nace", "region"],
        response="x",
        rules="NK(2,80)",
        hierarchies={"nace": sections},
        method="HEUR",
        progress=False,
    )[0]
    t = p.table
    problem = CSPProblem.from_table(t, status=np.where(np.asarray(t.status) >= 11, 1, t.status))
    return frame, t, problem, partial(_unsafe_relations_of, t)


def _own_unsafe(frame: pd.DataFrame, t, sup: np.ndarray) -> list[tuple]:
    """The test's own reading of the rule: every total published with two or more suppressed
    parts (nace hierarchy within a region, regions within a nace code) whose merged records
    fail (2,80)."""
    codes = [tuple(c.strip() for c in t.cell_codes(i)) for i in range(t.n_cells)]
    cell = {c: i for i, c in enumerate(codes)}
    # the grand total is the cell whose codes are both totals: the one with the largest value
    grand = codes[int(np.argmax(np.asarray(t.value, dtype=float)))]
    nace_tot, reg_tot = grand
    leaves = {d: [d] for divs in SECTIONS.values() for d in divs}
    leaves |= {s: divs for s, divs in SECTIONS.items()}
    leaves[nace_tot] = [d for divs in SECTIONS.values() for d in divs]
    regions = {r: [r] for r in REGIONS} | {reg_tot: REGIONS}
    children = {nace_tot: list(SECTIONS)} | dict(SECTIONS)

    def records(cells):
        out = []
        for n_code, r_code in (codes[c] for c in cells):
            sel = frame.nace.isin(leaves[n_code]) & frame.region.isin(regions[r_code])
            out += frame.x[sel].tolist()
        return sorted(out, reverse=True)

    relations = []
    for r_code in regions:
        for parent, kids in children.items():
            relations.append((cell[(parent, r_code)], [cell[(k, r_code)] for k in kids]))
    for n_code in leaves:
        relations.append((cell[(n_code, reg_tot)], [cell[(n_code, r)] for r in REGIONS]))
    bad = []
    for total, parts in relations:
        hidden = [c for c in parts if sup[c]]
        if sup[total] or len(hidden) < 2:
            continue
        v = records(hidden)
        if 100 * sum(v[:N]) > K * sum(v):
            bad.append((total, tuple(hidden)))
    return bad


@pytest.fixture(scope="module")
def case():
    return _case(7)


def _free(problem: CSPProblem) -> np.ndarray:
    return np.asarray(problem.candidate, dtype=bool) & ~np.asarray(problem.primary, dtype=bool)


def _rule_only_fails(frame, t, problem) -> np.ndarray:
    """A pattern the test's attacker passes and only the rule rejects: every cell suppressed
    but one total and the parts of its relation outside a dominated pair (found by scanning
    the relations in cell order)."""
    free = _free(problem)
    everything = np.asarray(problem.primary, dtype=bool) | free
    rel = problem.relations.tocsr()
    for r in range(rel.shape[0]):
        cols = rel.indices[rel.indptr[r] : rel.indptr[r + 1]]
        coef = rel.data[rel.indptr[r] : rel.indptr[r + 1]]
        total, parts = cols[coef < 0], cols[coef > 0]
        if total.size != 1 or not free[total[0]]:
            continue
        for i in parts:
            for j in parts[parts > i]:
                mask = everything.copy()
                mask[total[0]] = False
                mask[parts[free[parts]]] = False
                mask[[i, j]] = True
                if _own_unsafe(frame, t, mask) and lp_protected(problem, mask):
                    return mask
    raise AssertionError("no pattern that only the rule rejects")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.floats(0.3, 0.8))
def test_repaired_pattern_keeps_the_rule_and_stays_protected(case, seed, share):
    frame, t, problem, rule = case
    rng = np.random.default_rng(seed)
    free = _free(problem)
    mask = np.asarray(problem.primary, dtype=bool) | (free & (rng.random(free.size) < share))
    cost = np.asarray(problem.cost, dtype=float)
    weight = np.abs(np.asarray(problem.values, dtype=float))
    fixed, checks = repair_pattern(mask, rule, cost, free, weight)
    if not _own_unsafe(frame, t, mask):
        assert fixed is not None and np.array_equal(fixed, mask) and checks == 1
        return
    assert fixed is not None  # the total of every relation is free here: always repairable
    assert np.all(fixed >= mask) and np.all(free[fixed & ~mask])  # only free cells added
    assert _own_unsafe(frame, t, fixed) == []
    if lp_protected(problem, mask):  # more suppressions never let the outsider narrow
        assert lp_protected(problem, fixed)
    again, checks2 = repair_pattern(mask, rule, cost, free, weight)
    assert again is not None and np.array_equal(again, fixed) and checks2 == checks


def test_repair_is_bounded_by_counts(case):
    frame, t, problem, rule = case
    free = _free(problem)
    cost = np.asarray(problem.cost, dtype=float)
    weight = np.abs(np.asarray(problem.values, dtype=float))
    mask = _rule_only_fails(frame, t, problem)
    calls = []

    def counted(m):
        calls.append(1)
        return rule(m)

    fixed, checks = repair_pattern(mask, counted, cost, free, weight)
    assert fixed is not None and _own_unsafe(frame, t, fixed) == []
    assert checks == len(calls)
    calls.clear()
    none, checks = repair_pattern(mask, counted, cost, free, weight, max_checks=1)
    assert none is None and checks == len(calls) == 1
    none, _ = repair_pattern(mask, rule, cost, free, weight, max_added=0)
    assert none is None
    # no free cell in the relation: nothing to add, so no repaired pattern
    assert repair_pattern(mask, rule, cost, np.zeros_like(free), weight)[0] is None


def _branch_and_cut(problem, rule, start, max_nodes):
    return solve_pattern(
        problem, start=start, combined=rule, max_nodes=max_nodes, threads_nogil=False
    )


@pytest.mark.parametrize("seed", [7, 11])
def test_branch_and_cut_takes_the_repaired_start_and_repeats(seed):
    frame, t, problem, rule = _case(seed)
    start = _rule_only_fails(frame, t, problem)  # a protected start only the rule rejects
    out = _branch_and_cut(problem, rule, start, max_nodes=1)
    assert out.repair_runs >= 1
    assert any(line.startswith("rule repair heuristic") for line in out.log)
    assert out.mask is not None
    assert _own_unsafe(frame, t, out.mask) == [] and lp_protected(problem, out.mask)
    again = _branch_and_cut(problem, rule, start, max_nodes=1)
    assert np.array_equal(again.mask, out.mask)
    assert (again.repair_runs, again.repair_found, again.lps) == (
        out.repair_runs,
        out.repair_found,
        out.lps,
    )
    # the whole search still ends at a pattern the rule and the attacker accept
    full = _branch_and_cut(problem, rule, start, max_nodes=None)
    assert full.mask is not None and _own_unsafe(frame, t, full.mask) == []
    assert lp_protected(problem, full.mask)
    assert full.cost <= out.cost + 1e-6


def test_store_queues_candidates_only_the_rules_no_goods_reject():
    n = 4
    recorder = RuleRecorder(lambda m: [], np.array([1.0, 2.0, 3.0, 4.0]))
    store = RuleAwareStore(n, recorder, lambda x: np.asarray(x, dtype=float))
    one = np.ones(2)
    # a capacity cut x0 + x1 ≥ 1 and a rule no-good x2 − x3 ≥ 0 (publish 2 or suppress 3)
    store.add([Cut(0, "upper", np.array([0, 1]), one, 1.0, np.array([0, 1]), one, 1.0)])
    nogood = Cut(-1, "combined", np.array([2, 3]), np.array([1.0, -1.0]), 0.0,
                 np.array([2, 3]), np.array([1.0, -1.0]), 0.0)  # fmt: skip
    store.add([nogood])
    assert store.violated(np.array([0.0, 0.0, 1.0, 0.0]))  # the capacity cut: not queued
    assert not recorder.pending and store.queued == 0
    assert not store.violated(np.array([1.0, 0.0, 1.0, 1.0]))
    assert store.violated(np.array([1.0, 0.0, 0.0, 1.0]))  # only the rule's no-good
    assert store.queued == 1 and len(recorder.pending) == 1
    cost, mask = recorder.take()
    assert cost == 5.0 and mask.tolist() == [True, False, False, True]
    assert store.mat.shape[0] == 1  # the no-good stays out of the capacity cuts' matrix
