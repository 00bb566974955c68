"""OPT's incumbent side (D-61): the clean-up of the incumbent (1-opt, incumbent_polish.py) and
the guided heuristic's patterns repaired for the rule on combined cells before SCIP sees them.
Checked with the test's own outsider LP (protect_helpers.lp_protected) and its own reading of
the (n,k) rule on sums (test_combined_repair_heur._own_unsafe), never argusqt's audit."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import lp_protected
from test_combined_repair_heur import _case, _free, _own_unsafe

from argusqt.protection.suppress.branch_and_cut import solve_pattern
from argusqt.protection.suppress.optimal import _guide


def _run(problem, rule, start, polish: bool, max_nodes: int | None = 1):
    """The branch-and-cut alone (SCIP's own heuristics off): what the clean-up adds shows."""
    return solve_pattern(
        problem,
        start=start,
        combined=rule,
        max_nodes=max_nodes,
        threads_nogil=False,
        heuristics="off",
        polish=polish,
    )


def _wasteful_start(frame, t, problem, rule) -> np.ndarray:
    """A protected pattern that keeps the rule and suppresses every free cell: most of its
    secondaries are not needed."""
    mask = np.asarray(problem.primary, dtype=bool) | _free(problem)
    assert lp_protected(problem, mask) and _own_unsafe(frame, t, mask) == []
    return mask


@pytest.mark.parametrize("seed", [7, 11])
def test_cleanup_publishes_unneeded_secondaries_again_and_repeats(seed):
    frame, t, problem, rule = _case(seed)
    start = _wasteful_start(frame, t, problem, rule)
    cost = np.asarray(problem.cost, dtype=float)
    start_cost = float(cost[start & _free(problem)].sum())
    out = _run(problem, rule, start, polish=True)
    assert out.polish_found >= 1
    assert any(line.startswith("incumbent clean-up") for line in out.log)
    assert out.mask is not None and out.cost < start_cost
    # only free cells were published again, and the test's attacker and rule accept it
    assert np.all(start[out.mask]) and not np.any(out.mask & ~start)
    assert lp_protected(problem, out.mask) and _own_unsafe(frame, t, out.mask) == []
    # the same input gives the same pattern and the same work
    again = _run(problem, rule, start, polish=True)
    assert np.array_equal(again.mask, out.mask)
    assert (again.polish_found, again.lps) == (out.polish_found, out.lps)
    # without it the same node limit keeps a dearer (or the same) pattern
    plain = _run(problem, rule, start, polish=False)
    assert plain.polish_found == 0 and plain.cost >= out.cost - 1e-6


def test_cleanup_keeps_the_optimum():
    frame, t, problem, rule = _case(7)
    start = _wasteful_start(frame, t, problem, rule)
    with_it = _run(problem, rule, start, polish=True, max_nodes=None)
    without = _run(problem, rule, start, polish=False, max_nodes=None)
    assert with_it.optimal and without.optimal
    assert with_it.cost == pytest.approx(without.cost)
    assert lp_protected(problem, with_it.mask) and _own_unsafe(frame, t, with_it.mask) == []


@pytest.mark.usefixtures("older_insiders")
@pytest.mark.parametrize("seed", [7, 11])
def test_guided_patterns_keep_the_rule(seed):
    """HEUR on LP-scaled costs ignores the rule: its pattern gets the rule's cells before it
    is offered (SCIP's forced rows would reject it unseen). `plain` is the same heuristic
    without them (what relaxed_search uses): there the rule fails."""
    frame, t, problem, rule = _case(seed)
    problem.pattern_rule = rule
    guide = _guide(problem, problem, publish=True, rule_cells=True)
    rng = np.random.default_rng(seed)
    repaired = 0
    for _ in range(6):
        x = np.where(_free(problem), rng.random(problem.n_cells), 1.0)
        raw = guide.plain(x, np.inf, _token(), None)
        mask = guide(x, np.inf, _token(), None)
        assert raw is not None and mask is not None
        assert _own_unsafe(frame, t, mask) == [] and lp_protected(problem, mask)
        assert np.all(mask[np.asarray(problem.primary, dtype=bool)])
        assert np.all(mask[raw])  # cells only added, none taken away
        if _own_unsafe(frame, t, raw):
            repaired += 1
            # offered only when cheaper than the incumbent: the repaired cost is the bar
            cost = float(np.asarray(problem.cost)[mask & _free(problem)].sum())
            assert guide(x, cost, _token(), None) is None
    assert repaired >= 1
    # by default (OPT option guided_rule off) the heuristic is the plain one
    off = _guide(problem, problem, publish=True)
    x = np.where(_free(problem), rng.random(problem.n_cells), 1.0)
    a, b = off(x, np.inf, _token(), None), guide.plain(x, np.inf, _token(), None)
    assert a is not None and b is not None and np.array_equal(a, b)


def _token():
    from argusqt.progress import CancelToken

    return CancelToken()


def _relaxed_run(problem, rule, start):
    return solve_pattern(
        problem,
        start=start,
        combined=rule,
        max_nodes=1,
        threads_nogil=False,
        heuristics="off",
        relaxed=True,
    )


@pytest.mark.parametrize("seed", [7, 11])
def test_search_without_the_rule_offers_a_repaired_pattern_and_repeats(seed, monkeypatch):
    """The old path inside the run (relaxed_search.py): a search without the rule, its best
    pattern with the rule's cells, offered; what SCIP keeps passes the test's attacker and
    its rule, and the same input gives the same pattern and work."""
    from argusqt.protection.suppress import relaxed_search

    # a small table: the search starts at once and whatever the gap
    monkeypatch.setattr(relaxed_search, "RELAXED_DELAY", 0)
    monkeypatch.setattr(relaxed_search, "RELAXED_GAP", -1.0)
    frame, t, problem, rule = _case(seed)
    start = _wasteful_start(frame, t, problem, rule)
    out = _relaxed_run(problem, rule, start)
    line = next(x for x in out.log if x.startswith("search without the rule"))
    assert " in 1 runs" in line and out.relaxed_found == 1
    assert out.mask is not None
    assert lp_protected(problem, out.mask) and _own_unsafe(frame, t, out.mask) == []
    again = _relaxed_run(problem, rule, start)
    assert np.array_equal(again.mask, out.mask)
    assert (again.relaxed_found, again.lps, again.cost) == (out.relaxed_found, out.lps, out.cost)


def test_search_without_the_rule_waits_for_its_counts():
    """By default it waits for RELAXED_DELAY attacker LPs: a small table never starts it."""
    frame, t, problem, rule = _case(7)
    out = _relaxed_run(problem, rule, _wasteful_start(frame, t, problem, rule))
    line = next(x for x in out.log if x.startswith("search without the rule"))
    assert " in 0 runs" in line and out.relaxed_found == 0
