"""OPT keeps the rule on combined cells (US#160) inside its branch-and-cut (D-53): a 0/1
pattern with an unsafe determined sum is cut off by a no-good of its relation, so "proven
optimal" and the bound hold for the problem posed, the rule included. Checked here against
an exhaustive search with the test's own attacker and its own reading of the rule."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from protect_helpers import lp_protected

import argusqt
from argusqt.model.status import is_suppressed
from argusqt.protection.core.problem import CSPProblem

DIVISIONS = {"B": ["B05", "B06", "B07", "B08", "B09"], "C": ["C10", "C11"]}


def _enterprises(seed: int) -> dict[str, list[float]]:
    """Two to five enterprises per division (no respondent alone in a cell: no insider),
    skewed so that some divisions and some sums are dominated."""
    rng = np.random.default_rng(seed)
    out = {}
    for divs in DIVISIONS.values():
        for d in divs:
            k = int(rng.integers(2, 6))
            v = np.round(rng.lognormal(4, 1.0, size=k)) + 1
            if rng.random() < 0.5:  # a dominant enterprise
                v[0] *= 8
            out[d] = sorted(v.tolist(), reverse=True)
    return out


def _own_unsafe_sums(codes, sup, ent, n=2, k=80.0) -> list[set[str]]:
    """The test's own reading of the rule: per published total, the (n,k) rule on the union
    of its suppressed parts (two or more)."""
    groups = {**DIVISIONS, "Total": list(DIVISIONS)}
    contrib = dict(ent)
    for total, parts in DIVISIONS.items():
        contrib[total] = [v for p in parts for v in ent[p]]
    hidden_of = {c for c, s in zip(codes, sup, strict=True) if s}
    bad = []
    for total, parts in groups.items():
        hidden = [p for p in parts if p in hidden_of]
        if total in hidden_of or len(hidden) < 2:
            continue
        values = sorted((v for p in hidden for v in contrib[p]), reverse=True)
        if 100 * sum(values[:n]) > k * sum(values):
            bad.append(set(hidden))
    return bad


def _protect(seed: int):
    ent = _enterprises(seed)
    frame = pd.DataFrame([(d, v) for d, vs in ent.items() for v in vs], columns=["nace", "x"])
    sections = {d: s for s, divs in DIVISIONS.items() for d in divs}
    p = argusqt.protect(
        frame,
        explanatory=["nace"],
        response="x",
        rules="NK(2,80)",
        hierarchies={"nace": sections},
        method="OPT",
        progress=False,
    )[0]
    return p, ent


#: seeds whose first OPT pattern has an unsafe determined sum (found by scanning 0–59)
RULE_SEEDS = (0, 3, 6, 46, 50)


@pytest.mark.parametrize("seed", (*RULE_SEEDS, 1, 2))
def test_opt_proves_the_optimum_with_the_rule_as_an_exhaustive_search_finds_it(seed):
    p, ent = _protect(seed)
    t, res = p.table, p.result
    scip = next(line for line in res.log if line.startswith("SCIP status"))
    if seed in RULE_SEEDS:  # the rule worked inside the search here, not by a rerun
        assert "no-goods of sums" in scip
        assert not any(line.startswith("Rule on combined cells") for line in res.log)
    codes = [t.cell_codes(c)[0].strip() for c in range(t.n_cells)]
    problem = CSPProblem.from_table(t, status=np.where(np.asarray(t.status) >= 11, 1, t.status))
    primary = problem.primary
    cost = np.asarray(problem.cost, dtype=float)
    free = [c for c in range(t.n_cells) if not primary[c]]
    best = None
    for r in range(len(free) + 1):
        for extra in itertools.combinations(free, r):
            mask = primary.copy()
            mask[list(extra)] = True
            c = float(cost[list(extra)].sum())
            if best is not None and c >= best:
                continue
            if _own_unsafe_sums(codes, mask, ent) or not lp_protected(problem, mask):
                continue
            best = c
    assert best is not None
    sup = is_suppressed(np.asarray(t.status))
    assert _own_unsafe_sums(codes, sup, ent) == []  # OPT's pattern keeps the rule
    assert lp_protected(problem, sup)
    assert res.cost >= best - 1e-6  # nothing cheaper than the true optimum
    if res.optimal:  # a printed "proven optimal" is the optimum of the problem posed
        assert res.cost == pytest.approx(best)
        assert res.lower_bound is not None and res.lower_bound <= best + 1e-6
