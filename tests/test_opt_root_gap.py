"""D-75: OPT solves again from the root with the rule-aware bridgeless cuts only when the
root gap (its incumbent against its bound, both bound by counts) reaches ROOT_GAP_BRIDGELESS.
Below it the run is the one without the switch; above it the pattern still passes the test's
own attacker (protect_helpers.lp_protected) and the run repeats exactly."""

from __future__ import annotations

import re

import numpy as np
from protect_helpers import lp_protected, sized_problem

from argusqt.protection.suppress.branch_and_cut import solve_pattern
from argusqt.protection.suppress.optimal import ROOT_GAP_BRIDGELESS, OptOptions


def _never(mask: np.ndarray) -> list:
    """A rule on combined cells that rejects nothing: the rule-aware cuts apply, and the
    audit is the outsider's alone."""
    return []


def _run(seed: int, threshold: float | None, nodes: int):
    problem = sized_problem("1H2D", 200, seed)
    out = solve_pattern(
        problem,
        combined=_never,
        threads_nogil=False,
        max_nodes=nodes,
        bridgeless_rule_root_gap=threshold,
    )
    return problem, out


def _root_gap(out) -> tuple[float, bool]:
    log = " ".join(out.log)
    found = re.search(r"root gap ([\d.]+) % \(rule-aware bridgeless cuts (from|off)", log)
    assert found, log
    return float(found.group(1)) / 100, found.group(2) == "from"


def test_opt_passes_the_threshold_by_default():
    assert OptOptions().bridgeless_rule_root_gap == ROOT_GAP_BRIDGELESS
    assert 0.2741 < ROOT_GAP_BRIDGELESS < 0.3343  # opt_bound_805's root gap < it < the sample's


def test_a_large_root_gap_solves_again_with_the_cuts_and_the_pattern_stays_protected():
    problem, out = _run(15, ROOT_GAP_BRIDGELESS, 20)
    gap, on = _root_gap(out)
    assert gap >= ROOT_GAP_BRIDGELESS and on
    assert out.log[0].endswith("again with the rule-aware bridgeless cuts")
    assert re.search(r"bridgeless cuts [1-9]", " ".join(out.log))
    assert out.mask is not None and lp_protected(problem, out.mask)
    assert out.bound is not None and out.bound <= out.cost + 1e-6
    # the same input, the same pattern, bound and work
    _, again = _run(15, ROOT_GAP_BRIDGELESS, 20)
    assert np.array_equal(again.mask, out.mask)
    assert (again.cost, again.bound, again.nodes, again.lps) == (
        out.cost,
        out.bound,
        out.nodes,
        out.lps,
    )


def test_a_small_root_gap_leaves_the_run_as_without_the_switch():
    problem, out = _run(0, ROOT_GAP_BRIDGELESS, 30)
    gap, on = _root_gap(out)
    assert gap < ROOT_GAP_BRIDGELESS and not on
    assert not re.search(r"bridgeless cuts \d", " ".join(out.log))
    _, plain = _run(0, None, 30)
    assert np.array_equal(plain.mask, out.mask)
    assert (plain.cost, plain.bound, plain.nodes, plain.lps, plain.cuts) == (
        out.cost,
        out.bound,
        out.nodes,
        out.lps,
        out.cuts,
    )
    assert out.mask is not None and lp_protected(problem, out.mask)


def test_a_late_start_is_a_candidate_only():
    """D-110: the pattern `late_start` gives the restart joins its starts, and SCIP's full
    check still decides: an unprotected one (the primaries alone) is never the result, the
    bound stays below the pattern's cost, and the run repeats exactly."""
    problem = sized_problem("1H2D", 200, 15)
    asked: list[float] = []

    def bare(seconds: float) -> np.ndarray:
        asked.append(seconds)
        return np.asarray(problem.primary, dtype=bool).copy()

    runs = [
        solve_pattern(
            problem,
            combined=_never,
            threads_nogil=False,
            max_nodes=20,
            bridgeless_rule_root_gap=ROOT_GAP_BRIDGELESS,
            late_start=bare,
        )
        for _ in range(2)
    ]
    out = runs[0]
    assert len(asked) == 2  # once per run, at its restart
    assert not lp_protected(problem, bare(0.0))
    assert out.mask is not None and lp_protected(problem, out.mask)
    assert not np.array_equal(out.mask, problem.primary)
    assert out.bound is not None and out.bound <= out.cost + 1e-6
    assert np.array_equal(runs[1].mask, out.mask)
    assert (runs[1].cost, runs[1].bound, runs[1].nodes, runs[1].lps) == (
        out.cost,
        out.bound,
        out.nodes,
        out.lps,
    )
