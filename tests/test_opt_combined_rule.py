"""OPT keeps the rule on combined cells (US#160) inside its branch-and-cut (D-53): a 0/1
pattern with an unsafe determined sum is cut off by a no-good of its relation, so "proven
optimal" and the bound hold for the problem posed, the rule included. Checked here against
an exhaustive search with the test's own attacker and its own reading of the rule."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from lower_bound_attacker import attack
from protect_helpers import lp_protected

import argusqt
from argusqt.model.status import Status, is_suppressed
from argusqt.protection.core.problem import CSPProblem
from argusqt.rules.combined import (
    forced_capacities,
    forced_nogoods,
    lifted_nogood,
    unsafe_relations,
)

DIVISIONS = {"B": ["B05", "B06", "B07", "B08", "B09"], "C": ["C10", "C11"]}


def _enterprises(seed: int, tiny: bool = False) -> dict[str, list[float]]:
    """Two to five enterprises per division (no respondent alone in a cell: no insider),
    skewed so that some divisions and some sums are dominated; `tiny`: B09 and C11 fifty
    times smaller (parts too small to make a dominated sum safe: the lifting drops them)."""
    rng = np.random.default_rng(seed)
    out = {}
    for divs in DIVISIONS.values():
        for d in divs:
            k = int(rng.integers(2, 6))
            v = np.round(rng.lognormal(4, 1.0, size=k)) + 1
            if rng.random() < 0.5:  # a dominant enterprise
                v[0] *= 8
            if tiny and d in ("B09", "C11"):
                v = np.round(v / 50.0) + 1
            out[d] = sorted(v.tolist(), reverse=True)
    return out


def _own_unsafe_totals(codes, sup, ent, rule=("nk", 2, 80.0)) -> dict[str, set[str]]:
    """The test's own reading of the rule: per published total, the (n,k) rule — or the p%
    rule with one intruder, ("p", p) — on the union of its suppressed parts (two or more)."""
    groups = {**DIVISIONS, "Total": list(DIVISIONS)}
    contrib = dict(ent)
    for total, parts in DIVISIONS.items():
        contrib[total] = [v for p in parts for v in ent[p]]
    hidden_of = {c for c, s in zip(codes, sup, strict=True) if s}
    bad = {}
    for total, parts in groups.items():
        hidden = [p for p in parts if p in hidden_of]
        if total in hidden_of or len(hidden) < 2:
            continue
        values = sorted((v for p in hidden for v in contrib[p]), reverse=True) + [0.0, 0.0]
        if rule[0] == "nk":
            unsafe = 100 * sum(values[: rule[1]]) > rule[2] * sum(values)
        else:  # p%: the second largest estimates the largest to within p %
            unsafe = rule[1] * values[0] > 100 * (sum(values) - values[0] - values[1])
        if unsafe:
            bad[total] = set(hidden)
    return bad


def _protect(seed: int, rules: str = "NK(2,80)", tiny: bool = False, params=None):
    ent = _enterprises(seed, tiny)
    frame = pd.DataFrame([(d, v) for d, vs in ent.items() for v in vs], columns=["nace", "x"])
    sections = {d: s for s, divs in DIVISIONS.items() for d in divs}
    p = argusqt.protect(
        frame,
        explanatory=["nace"],
        response="x",
        rules=rules,
        hierarchies={"nace": sections},
        method="OPT",
        progress=False,
        params=params,
    )[0]
    return p, ent


def _is_the_exhaustive_optimum(p, ent, rule) -> None:
    """OPT's pattern keeps the rule (the test's own reading) and its attacker, costs no less
    than the cheapest pattern an exhaustive search finds, and a printed "proven optimal" is
    that optimum."""
    t, res = p.table, p.result
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
            if _own_unsafe_totals(codes, mask, ent, rule) or not lp_protected(problem, mask):
                continue
            status = np.where(primary, t.status, np.where(mask, Status.SECONDARY, Status.SAFE))
            if attack(t, status):  # a respondent sharing a cell (D-91, OPT searches with it)
                continue
            best = c
    assert best is not None
    sup = is_suppressed(np.asarray(t.status))
    assert _own_unsafe_totals(codes, sup, ent, rule) == {}  # OPT's pattern keeps the rule
    assert lp_protected(problem, sup)
    assert res.cost >= best - 1e-6  # nothing cheaper than the true optimum
    if res.optimal:  # a printed "proven optimal" is the optimum of the problem posed
        assert res.cost == pytest.approx(best)
        assert res.lower_bound is not None and res.lower_bound <= best + 1e-6


#: seeds whose first OPT pattern has an unsafe determined sum (found by scanning 0–59)
RULE_SEEDS = (0, 3, 6, 46, 50)


@pytest.mark.parametrize("seed", (*RULE_SEEDS, 1, 2))
def test_opt_proves_the_optimum_with_the_rule_as_an_exhaustive_search_finds_it(seed):
    p, ent = _protect(seed)
    res = p.result
    scip = next(line for line in res.log if line.startswith("SCIP status"))
    if seed in RULE_SEEDS:  # the rule worked inside the search here, not by a rerun
        assert "no-goods of sums" in scip
        assert not any(line.startswith("Rule on combined cells") for line in res.log)
    _is_the_exhaustive_optimum(p, ent, RULES["NK(2,80)"])


RULES = {"NK(2,80)": ("nk", 2, 80.0), "P(15,1)": ("p", 15.0)}


def _every_pattern(t) -> tuple[CSPProblem, np.ndarray, np.ndarray]:
    """The table's problem with its secondaries free again, every pattern over the free cells
    (the primaries suppressed) and each one's cost: this file's exhaustive searches."""
    problem = CSPProblem.from_table(t, status=np.where(np.asarray(t.status) >= 11, 1, t.status))
    cols = np.flatnonzero(~problem.primary)
    grid = np.array(list(itertools.product((False, True), repeat=cols.size)), dtype=bool)
    masks = np.tile(problem.primary, (grid.shape[0], 1))
    masks[:, cols] = grid
    return problem, masks, grid.astype(float) @ np.asarray(problem.cost, dtype=float)[cols]


def _eight_tables(rules: str):
    """The eight small tables the exhaustive tests search (four seeds, tiny or not), each as
    (seed, tiny, table, entries, cell codes, _every_pattern's problem, masks and costs)."""
    for seed, tiny in itertools.product(range(4), (False, True)):
        p, ent = _protect(seed, rules, tiny)
        t = p.table
        codes = [t.cell_codes(c)[0].strip() for c in range(t.n_cells)]
        yield seed, tiny, t, ent, codes, _every_pattern(t)


def _least_optima(masks: np.ndarray, costs: np.ndarray, accepts) -> np.ndarray:
    """The rows of the cheapest patterns `accepts` takes (in order of cost, up to the
    optimum's) that have the fewest suppressions."""
    optima: list[int] = []
    for k in np.argsort(costs, kind="stable"):
        if optima and costs[k] > costs[optima[0]] + 1e-9:
            break
        if accepts(masks[k]):
            optima.append(int(k))
    assert optima
    size = masks[optima].sum(axis=1)
    return np.asarray(optima)[size == size.min()]


def _unsafe_by_total(codes, masks, ent, rule) -> dict[str, np.ndarray]:
    """Per total's code, the patterns whose sum under it the test's own reading finds unsafe."""
    unsafe = {c: np.zeros(len(masks), dtype=bool) for c in codes}
    for i, m in enumerate(masks):
        for total in _own_unsafe_totals(codes, m, ent, rule):
            unsafe[total][i] = True
    return unsafe


@pytest.mark.parametrize("rules", sorted(RULES))
def test_lifted_nogoods_forbid_only_configurations_the_rule_rejects(rules):
    """D-55: every pattern a lifted no-good cuts off (its relation's total published, its core
    suppressed, the parts that can cure published, any other cell anything) has that
    relation's sum unsafe by the test's own reading, over every pattern of eight tables; so
    does every pattern a no-good forced from the start, or its capacity row, cuts off."""
    lifted = forced = 0
    for _seed, _tiny, t, ent, codes, (problem, masks, _) in _eight_tables(rules):
        free = ~problem.primary
        unsafe = _unsafe_by_total(codes, masks, ent, RULES[rules])
        for i, m in enumerate(masks):
            found = unsafe_relations(t, m)
            assert {codes[total] for total, _, _ in found} == {
                c for c in codes if unsafe[c][i]
            }  # the library reads the rule as the test does
            for total, group, others in found:
                core, cure = lifted_nogood(t, group, others, free)
                assert set(core) <= set(group) and set(cure) <= set(others) and core.size >= 2
                lifted += core.size < group.size or cure.size < np.count_nonzero(free[others])
                cut_off = (
                    ~masks[:, total] & masks[:, core].all(axis=1) & ~masks[:, cure].any(axis=1)
                )
                assert cut_off[i]  # the pattern found is cut off
                assert unsafe[codes[total]][cut_off].all()  # and only patterns the rule rejects
        for total, core, cure in forced_nogoods(t, problem.primary, free):
            cut_off = ~masks[:, total] & ~masks[:, cure].any(axis=1)
            assert masks[:, core].all() and unsafe[codes[total]][cut_off].all()
            forced += 1
        for total, parts, w in forced_capacities(t, problem.primary, free):
            short = ~masks[:, total] & (masks[:, parts].astype(float) @ w < 1.0 - 1e-9)
            assert unsafe[codes[total]][short].all()  # its row cuts off only unsafe patterns
            forced += 1
    assert lifted > 0 and forced > 0, (
        lifted,
        forced,
    )  # the lifting acted (fewer terms than the configuration's no-good)


@pytest.mark.parametrize("seed", range(4))
def test_opt_with_a_p_rule_is_the_exhaustive_optimum(seed):
    """The lifted no-goods under the p% rule: OPT's pattern keeps the rule and a printed
    "proven optimal" is the exhaustive search's optimum (the test's own attacker)."""
    p, ent = _protect(seed, "P(15,1)")
    _is_the_exhaustive_optimum(p, ent, RULES["P(15,1)"])


@pytest.mark.parametrize("rules", sorted(RULES))
def test_rule_aware_bridgeless_cuts_keep_a_least_cardinality_optimum(rules):
    """D-60: the bridgeless cuts with the rule on combined cells (x_i ≤ Σ_{r ∖ i} x +
    ½·Σ over the other relations r' through i of Σ_{r' ∖ i} x) hold at every least-cardinality
    optimum of the problem posed (the test's own attacker and reading of the rule), found by
    enumerating the patterns of eight tables in order of cost; so the bound OPT prints with
    them stays a proof."""
    from argusqt.protection.lp.separation import Separator, default_fixed
    from argusqt.protection.suppress.scip_plugins import _Bridgeless

    checked = halves = 0
    for seed, tiny, _t, ent, codes, (problem, masks, costs) in _eight_tables(rules):

        def accepts(m, codes=codes, ent=ent, problem=problem):
            return not _own_unsafe_totals(codes, m, ent, RULES[rules]) and lp_protected(problem, m)

        least = _least_optima(masks, costs, accepts)
        bridge = _Bridgeless(Separator(problem, default_fixed(problem)), rule_aware=True)
        cuts = [bridge._cut(int(r), int(i)) for r, i in zip(bridge.row, bridge.col, strict=True)]
        halves += sum(bool(np.any(np.abs(c.coef - np.round(c.coef)) > 0)) for c in cuts)
        for k in least:
            x = masks[k].astype(float)
            assert all(c.lhs(x) >= c.rhs - 1e-9 for c in cuts), (seed, tiny, masks[k])
            assert not bridge.cuts(x)  # the separation reports none violated there
            checked += len(cuts)
    assert checked > 0 and halves > 0  # cuts were checked, some with the rule's ½ terms


@pytest.mark.parametrize("seed", RULE_SEEDS[:3])
def test_opt_with_rule_aware_bridgeless_cuts_is_the_exhaustive_optimum(seed, monkeypatch):
    """D-60, OPT's option `bridgeless_rule`: with the rule-aware bridgeless separation on,
    OPT's pattern keeps the rule and a printed "proven optimal" and bound are the exhaustive
    search's (the test's own attacker and reading of the rule). These small tables' LP points
    violate none of the cuts; their validity is checked above, cut by cut."""
    from argusqt.protection.suppress import optimal

    solve = optimal.solve_pattern

    def with_rule_aware_cuts(*args, **kwargs):
        return solve(*args, **{**kwargs, "bridgeless_rule": True})

    monkeypatch.setattr(optimal, "solve_pattern", with_rule_aware_cuts)
    p, ent = _protect(seed)
    scip = next(line for line in p.result.log if line.startswith("SCIP status"))
    assert "bridgeless cuts" in scip  # the family was on with the rule
    _is_the_exhaustive_optimum(p, ent, RULES["NK(2,80)"])


@pytest.mark.parametrize("rules", sorted(RULES))
def test_fractional_nogoods_forbid_only_configurations_the_rule_rejects(rules):
    """D-60: the lifted no-goods separated at fractional master points (the parts at 1 in the
    LP as the group) cut off only patterns whose relation's sum the test's own reading of the
    rule finds unsafe, over every pattern of eight tables and 40 random points each."""
    from argusqt.rules.combined import fractional_nogoods

    found_any = 0
    for seed, _tiny, t, ent, codes, (problem, masks, _) in _eight_tables(rules):
        free = ~problem.primary
        unsafe = _unsafe_by_total(codes, masks, ent, RULES[rules])
        rng = np.random.default_rng(seed)
        for _ in range(40):
            x = np.where(free, rng.choice([0.0, 0.3, 0.7, 1.0], size=free.size), 1.0)
            for total, core, cure in fractional_nogoods(t, x, free):
                assert x[total] < 1 and (x[core] == 1).all() and core.size >= 2
                cut_off = (
                    ~masks[:, total] & masks[:, core].all(axis=1) & ~masks[:, cure].any(axis=1)
                )
                assert unsafe[codes[total]][cut_off].all()
                found_any += 1
    assert found_any > 0


@pytest.mark.parametrize("rules", sorted(RULES))
def test_rule_capacity_rows_cut_off_only_patterns_the_rule_rejects(rules):
    """D-66: the rule's capacity rows at fractional points (the parts at x ≥ ½ as the group,
    weights of the other parts by the group's margin) and their covers, as OPT adds them,
    cut off only patterns with some relation's sum unsafe by the test's own reading, over
    every pattern of eight tables and 40 random points each."""
    from argusqt.protection.lp.separation import Separator
    from argusqt.protection.suppress.combined import _RelationRule
    from argusqt.protection.suppress.scip_plugins import rule_capacity_cuts

    rows = covers = 0
    for seed, _tiny, t, ent, codes, (problem, masks, _) in _eight_tables(rules):
        free = ~problem.primary
        unsafe = _unsafe_by_total(codes, masks, ent, RULES[rules])
        rejected = np.logical_or.reduce(list(unsafe.values()))
        sep = Separator(problem, np.where(free, np.nan, 1.0))
        rule = _RelationRule(t)
        rng = np.random.default_rng(seed)
        for _ in range(40):
            x = np.where(free, rng.choice([0.0, 0.3, 0.6, 1.0], size=free.size), 1.0)
            for cut in rule_capacity_cuts(rule.fractional_capacities, sep, x):
                assert cut.lhs(x) < cut.rhs - 1e-6  # violated where it was separated
                cut_off = masks[:, cut.cells].astype(float) @ cut.coef < cut.rhs - 1e-9
                assert rejected[cut_off].all()
                rows += cut.rhs < 1.0 or (cut.coef < 1.0).any()
                covers += cut.rhs == 1.0 and (cut.coef == 1.0).all()
    assert rows > 0 and covers > 0, (rows, covers)


def _two_way(seed: int):
    """A 3 × 3 table with margins from skewed records (two-way: cells in two relations, where
    the rule-aware bridgeless cut's ½ terms matter)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(3):
        for j in range(3):
            v = np.round(rng.lognormal(4, 1.0, size=int(rng.integers(2, 5)))) + 1
            if rng.random() < 0.45:
                v[0] *= 8
            rows += [(f"r{i}", f"c{j}", float(x)) for x in v]
    return pd.DataFrame(rows, columns=["a", "b", "x"])


def test_rule_aware_bridgeless_cuts_where_the_plain_ones_would_cut_off_the_optimum():
    """D-60 on a two-way table (found by review): the plain bridgeless cuts cut off the only
    optimum that keeps the rule there, the rule-aware ones keep it. Optima by enumeration in
    order of cost with the test's linprog attacker; the rule read by the library
    (`unsafe_relations`): what is tested is the cuts, not the rule."""
    from argusqt.protection.lp.separation import Separator, default_fixed
    from argusqt.protection.suppress.scip_plugins import _Bridgeless

    t = argusqt.protect(
        _two_way(15),
        explanatory=["a", "b"],
        response="x",
        rules="P(15,1)",
        method="OPT",
        progress=False,
    )[0].table
    problem, masks, costs = _every_pattern(t)
    optima = _least_optima(
        masks, costs, lambda m: not unsafe_relations(t, m) and lp_protected(problem, m)
    )
    least = [masks[k].astype(float) for k in optima]
    sep = Separator(problem, default_fixed(problem))

    def cuts(rule_aware: bool):
        b = _Bridgeless(sep, rule_aware=rule_aware)
        return [b._cut(int(r), int(i)) for r, i in zip(b.row, b.col, strict=True)]

    aware, plain = cuts(True), cuts(False)
    assert all(c.lhs(x) >= c.rhs - 1e-9 for c in aware for x in least)
    # the plain form would have made the printed bound a lie here
    assert all(any(c.lhs(x) < c.rhs - 1e-9 for c in plain) for x in least)


@pytest.mark.parametrize(
    "option", ["bridgeless_rule", "fractional_sums", "rule_capacities", "rule_capacities_stalled"]
)
def test_opt_with_d60_options_on_a_two_way_table_keeps_its_bound_below_the_optimum(
    option, monkeypatch
):
    """D-60's options where they act (a two-way table: the log counts their cuts): the bound
    OPT prints is at most the optimum found by enumeration (the test's linprog attacker) and
    "proven optimal" only at that cost."""
    import re

    from argusqt.protection.suppress import optimal

    # seeds where the family cuts (by the log); the stalled form cuts on fewer tables (15
    # before D-91: with the floors inside OPT its search takes another path there; 31 now)
    frame = _two_way(31 if option == "rule_capacities_stalled" else 13)
    solve = optimal.solve_pattern
    on = {
        "rule_capacities": option.startswith("rule_capacities"),  # D-66's family: on in OPT
        "rule_capacities_stalled": option == "rule_capacities_stalled",
        option: True,
    }
    monkeypatch.setattr(optimal, "solve_pattern", lambda *a, **k: solve(*a, **{**k, **on}))
    p = argusqt.protect(
        frame, explanatory=["a", "b"], response="x", rules="P(15,1)", method="OPT", progress=False
    )[0]
    scip = next(line for line in p.result.log if line.startswith("SCIP status"))
    pattern = {
        "bridgeless_rule": r"bridgeless cuts (\d+)",
        "fractional_sums": r"(\d+) at fractional",
        "rule_capacities": r"(\d+) capacity rows",
        "rule_capacities_stalled": r"(\d+) capacity rows",
    }[option]
    found = re.search(pattern, scip)
    assert found and int(found.group(1)) > 0, scip
    t = p.table
    problem, masks, costs = _every_pattern(t)
    optima = _least_optima(
        masks, costs, lambda m: not unsafe_relations(t, m) and lp_protected(problem, m)
    )
    best = costs[optima[0]]
    assert p.result.lower_bound <= best + 1e-6
    if p.result.optimal:
        assert p.result.cost == pytest.approx(best)
