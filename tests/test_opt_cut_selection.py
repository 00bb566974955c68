"""OPT's option for SCIP's cut selector (D-77; off by default): the setting reaches SCIP,
only OPT passes it, and it changes which valid rows enter the LP, never the proven optimum."""

from __future__ import annotations

import re

import numpy as np
import pytest
from protect_helpers import random_1h2d, sized_problem

from argusqt.protection.run import run_method
from argusqt.protection.suppress.branch_and_cut import _scip_model
from argusqt.protection.suppress.optimal import CUT_ORTHOGONALITY, OptOptions, solve_optimal

KEYS = ("cutselection/hybrid/minortho", "cutselection/hybrid/minorthoroot")


def test_the_filter_reaches_scip_and_none_keeps_scips_default():
    tuned = _scip_model(10.0, 0.0, "fast", None, 0.0, 0.0)
    tree = _scip_model(10.0, 0.0, "fast", None, 0.0)
    root = _scip_model(10.0, 0.0, "fast", None, None, 0.0)
    plain = _scip_model(10.0, 0.0, "fast", None)
    assert [tuned.getParam(k) for k in KEYS] == [0.0, 0.0]
    assert [tree.getParam(k) for k in KEYS] == [0.0, 0.9]
    assert [root.getParam(k) for k in KEYS] == [0.9, 0.0]
    assert [plain.getParam(k) for k in KEYS] == [0.9, 0.9]  # MOD's and HEUR's callers
    assert OptOptions().cut_orthogonality == CUT_ORTHOGONALITY == 0.9  # SCIP's default
    assert OptOptions().cut_orthogonality_root == CUT_ORTHOGONALITY
    assert OptOptions().cut_orthogonality_by_gap is None  # D-82: measured, off by default
    assert OptOptions().move_pool_by_gap == 0


@pytest.mark.parametrize("seed", [3, 11])
def test_the_same_proven_optimum_with_and_without_the_filter(seed):
    p = random_1h2d(np.random.default_rng(seed), [3, 2], 4)
    out = {
        ortho: run_method(
            p,
            "OPT",
            {"max_time": 600, "cut_orthogonality": ortho, "cut_orthogonality_root": ortho},
        )
        for ortho in (0.0, 0.9)
    }
    for r in out.values():
        assert r.optimal and r.audit.ok, r.log
    assert out[0.0].cost == pytest.approx(out[0.9].cost, rel=1e-9)


#: a root gap nothing is below: the rule never switches
NEVER = (0.0, 0.0)


def _search(log: list[str]) -> tuple[str, str]:
    """(nodes, attacker LPs) of an OPT run's SCIP status line."""
    line = next(x for x in log if x.startswith("SCIP status"))
    nodes = re.search(r"nodes (\d+)", line)
    lps = re.search(r"attacker LPs (\d+)", line)
    assert nodes is not None and lps is not None, line
    return nodes.group(1), lps.group(1)


def test_the_root_gap_rule_is_the_trees_filter_or_none_node_for_node():
    """D-82: the tree's filter set by the root gap (count-bound state) gives the search of
    that filter in the tree when the gap is below the threshold, and SCIP's default search
    (no pool of moves started) when it is not; the optimum is the same."""
    p = sized_problem("1H2D", 150, seed=2)
    p.cost = np.abs(p.values)
    runs = {
        name: solve_optimal(p, {"max_time": 600, **params})
        for name, params in (
            ("default", {}),
            ("never", {"cut_orthogonality_by_gap": NEVER, "move_pool_by_gap": 0}),
            ("tree", {"cut_orthogonality": 0.0, "cut_orthogonality_by_gap": NEVER}),
            ("below", {"cut_orthogonality_by_gap": (1.0, 0.0), "move_pool_by_gap": 0}),
            ("above, pool", {"cut_orthogonality_by_gap": NEVER, "move_pool_by_gap": 64}),
            ("below, pool", {"cut_orthogonality_by_gap": (1.0, 0.0), "move_pool_by_gap": 64}),
        )
    }
    for r in runs.values():
        assert r.optimal, r.log
        assert r.cost == runs["never"].cost
    assert _search(runs["below"].log) == _search(runs["tree"].log)
    assert _search(runs["above, pool"].log) == _search(runs["never"].log)  # no pool started
    assert any("the last 64 moves kept" in x for x in runs["below, pool"].log)
    assert _search(runs["tree"].log) != _search(runs["never"].log)  # the filter matters here
    assert any("cut filter 0 by the root gap" in x for x in runs["below"].log)
