"""Tabulation from fine cells: sums, top-n, holdings, weights, relations (design.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from argusqt.model.codelist import CodeList
from argusqt.model.rulespec import DominanceRule, PRule, SafetyRules
from argusqt.model.table import TableSpec, build_relations
from argusqt.model.tabulate import build_fine, expand_to_cells, table_from_fine, top_k_by_group


def _region_dim() -> CodeList:
    # Total; N (a, b); S (c)
    return CodeList.from_tree("region", [(1, "N"), (2, "a"), (2, "b"), (1, "S"), (2, "c")])


def _size_dim() -> CodeList:
    return CodeList.flat("size", ["1", "2"], missing=["9"])


def _records():
    # region codes (categories a,b,c), size codes (1,2,9), values
    reg_cats = ["a", "b", "c"]
    size_cats = ["1", "2", "9"]
    reg = np.array([0, 0, 1, 2, 2, 2, 1])
    size = np.array([0, 1, 0, 0, 0, 2, 1])
    val = np.array([10.0, 20.0, 5.0, 7.0, 3.0, 1.0, 50.0])
    return (reg, reg_cats), (size, size_cats), val


def _table(spec=None, **kw):
    r, s, val = _records()
    spec = spec or TableSpec(
        ["region", "size"], "x", rules=SafetyRules(nk_individual=[DominanceRule(2, 80)])
    )
    fine = build_fine([r, s], val, None, None, spec.rules.top_n_needed(), **kw)
    dims = [_region_dim(), _size_dim()]
    maps = [
        np.array([dims[0].leaf_index[c] for c in r[1]]),
        np.array([dims[1].leaf_index[c] for c in s[1]]),
    ]
    return table_from_fine(fine, dims, maps, spec, decimals=0), val


def test_codelist_order_and_structure():
    d = _region_dim()
    assert d.codes == ["Total", "N", "a", "b", "S", "c"]
    assert d.parents == [0, 1, 4]
    assert d.children[1] == [2, 3]
    s = _size_dim()
    assert s.codes == ["Total", "1", "2", "9"]
    assert s.is_missing.tolist() == [False, False, False, True]


def test_sums_counts_and_relations():
    t, val = _table()
    assert t.shape == (6, 4)
    grand = t.value[t.cell_index((0, 0))]
    assert grand == math.fsum(val)
    assert t.freq[t.cell_index((0, 0))] == 7
    # N × Total = a + b records: 10 + 20 + 5 + 50
    assert t.value[t.cell_index((1, 0))] == 85
    # S × missing 9 = 1 record of value 1
    assert t.value[t.cell_index((4, 3))] == 1 and t.freq[t.cell_index((5, 3))] == 1
    # every relation holds
    assert np.abs(t.relations @ t.value).max() == 0
    assert np.abs(t.relations @ t.freq).max() == 0
    # relation count: region parents 3 × 4 size codes + size parents 1 × 6 region codes
    assert t.relations.shape == (3 * 4 + 6, 24)
    # empty cell status 14: (a, 9)
    assert t.status[t.cell_index((2, 3))] == 14


def test_top_n_of_union_is_exact():
    t, _ = _table()
    # cell (N, Total): contributions 10, 20, 5, 50 → top-2 = 50, 20
    assert t.top[t.cell_index((1, 0))].tolist() == [50.0, 20.0]
    # cell (S, 1): 7, 3
    assert t.top[t.cell_index((4, 1))].tolist() == [7.0, 3.0]


def test_holdings_sum_per_holding_before_ranking():
    spec = TableSpec(["region", "size"], "x", rules=SafetyRules(p_holding=[PRule(10)]))
    r, s, val = _records()
    holding = np.array([0, 0, 1, 2, 2, 3, 1])
    t, _ = _table(spec, holding=holding)
    c = t.cell_index((0, 0))
    # holdings: 0 → 30, 1 → 55, 2 → 10, 3 → 1
    assert t.hfreq[c] == 4
    assert t.htop[c].tolist() == [55.0, 30.0, 10.0][: t.htop.shape[1]]


def test_weighted_unit_contributions_match_rules_example():
    # argusqt/docs/rules.md §3.9: records 100 (w 4) and 10 (w 7) → units 100,100,100,100,10…
    spec = TableSpec(
        ["size"], "x", rules=SafetyRules(nk_individual=[DominanceRule(3, 60)], use_weights=True)
    )
    fine = build_fine(
        [(np.array([0, 0]), ["1"])],
        np.array([100.0, 10.0]),
        None,
        None,
        3,
        weights=np.array([4.0, 7.0]),
    )
    dim = CodeList.flat("size", ["1"])
    t = table_from_fine(fine, [dim], [np.array([1])], spec, 0)
    assert t.value[0] == 470
    assert t.top[0].tolist() == [100.0, 100.0, 100.0]
    assert t.weight_sum[0] == 11


def test_top_k_by_group_pads_with_zero():
    out = top_k_by_group(np.array([0, 0, 2]), np.array([1.0, 3.0, 2.0]), 3, 2)
    assert out.tolist() == [[3.0, 1.0], [0.0, 0.0], [2.0, 0.0]]


def test_expand_to_cells_counts():
    dims = [_region_dim(), _size_dim()]
    cells, items = expand_to_cells([np.array([2]), np.array([1])], dims)
    # leaf a has chain a, N, Total (3); size 1 has 1, Total (2)
    assert sorted(cells.tolist()) == sorted([r * 4 + s for r in (2, 1, 0) for s in (1, 0)])


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_relations_rank_and_additivity(ndim):
    rng = np.random.default_rng(ndim)
    dims = [_region_dim(), _size_dim(), CodeList.flat("c", ["x", "y"]), CodeList.flat("d", ["p"])][
        :ndim
    ]
    cats = [
        (rng.integers(0, 3, 50), ["a", "b", "c"]),
        (rng.integers(0, 3, 50), ["1", "2", "9"]),
        (rng.integers(0, 2, 50), ["x", "y"]),
        (np.zeros(50, dtype=int), ["p"]),
    ][:ndim]
    val = rng.random(50) * 100
    fine = build_fine(cats, val, None, None, 2)
    maps = [np.array([d.leaf_index[c] for c in cs]) for d, (_, cs) in zip(dims, cats, strict=True)]
    t = table_from_fine(fine, dims, maps, TableSpec([d.name for d in dims], "v"), 2)
    M = build_relations(dims)
    assert np.abs(M @ t.value).max() <= 1e-9 * abs(t.value[0])
    assert math.isclose(t.value[0], math.fsum(val), rel_tol=1e-12)


def test_chunked_expansion_equals_one_pass(monkeypatch):
    """Tiny chunks (sums accumulated, top-K lists merged) give exactly the one-pass table."""
    import argusqt.model.tabulate as tab

    rng = np.random.default_rng(7)
    dims = [_region_dim(), _size_dim(), CodeList.flat("c", ["x", "y", "z"])]
    n = 400
    cats = [
        (rng.integers(0, 3, n), ["a", "b", "c"]),
        (rng.integers(0, 3, n), ["1", "2", "9"]),
        (rng.integers(0, 3, n), ["x", "y", "z"]),
    ]
    val = np.round(rng.pareto(1.2, n) * 100, 2)
    rules = SafetyRules(nk_individual=[DominanceRule(3, 80)], p_individual=[PRule(10, 100, 2)])
    spec = TableSpec(["region", "size", "c"], "v", rules=rules)
    fine = build_fine(cats, val, None, None, rules.top_n_needed())
    maps = [np.array([d.leaf_index[c] for c in cs]) for d, (_, cs) in zip(dims, cats, strict=True)]
    whole = table_from_fine(fine, dims, maps, spec, 2)
    monkeypatch.setattr(tab, "_CHUNK_PAIRS", 7)
    chunked = table_from_fine(fine, dims, maps, spec, 2)
    assert np.array_equal(whole.top, chunked.top)
    assert np.allclose(whole.value, chunked.value, rtol=0, atol=1e-9)
    assert np.array_equal(whole.freq, chunked.freq)
    # top-3 of the grand total is the 3 largest records
    assert whole.top[0].tolist() == sorted(val, reverse=True)[:3]
