"""Who alone makes up which cells (the insider's knowledge), from frequencies and holdings."""

from __future__ import annotations

import numpy as np
from protect_helpers import flat_codelist, hier_codelist, problem_from_table, table_from_leaves

from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.model.table import TableSpec
from argusqt.model.tabulate import build_fine, table_from_fine
from argusqt.protection.audit.publication import publication_audit
from argusqt.protection.core.problem import CSPProblem
from argusqt.protection.core.respondents import from_frequencies


def _known(resp, table) -> list[set[tuple[str, ...]]]:
    k = resp.known.tocsr()
    return sorted(
        ({table.cell_codes(int(c)) for c in k.indices[k.indptr[r] : k.indptr[r + 1]]})
        for r in range(k.shape[0])
    )


def test_a_record_knows_its_chain_of_one_record_cells():
    # 1H2D: leaf (0101, 01) has the only record of 01 under 01 → it also makes up (01, 01)
    dims = [hier_codelist("h", [2, 2]), flat_codelist("c", 2)]
    leaves = np.array([[5.0, 7.0], [3.0, 4.0], [6.0, 2.0], [8.0, 9.0]])
    freq = np.array([[1.0, 3.0], [0.0, 2.0], [4.0, 1.0], [2.0, 2.0]])
    t = table_from_leaves(dims, leaves * (freq > 0), freq)
    resp = from_frequencies(t.relations, t.freq)
    codes = _known(resp, t)
    h = dims[0].codes
    first = {(h[2], "1"), (h[1], "1")}  # the leaf and its parent: one record each
    assert first in codes
    assert {(h[5], "2")} in codes  # a lone leaf: its parent has more records
    assert len(codes) == 2
    # rows are disjoint and every one-record cell belongs to exactly one respondent
    assert resp.known.sum(axis=0).max() == 1
    assert int(resp.known.sum()) == int((t.freq == 1).sum())


def test_frequencies_that_do_not_add_up_mean_no_insider():
    dims = [flat_codelist("r", 2), flat_codelist("c", 2)]
    t = table_from_leaves(dims, np.array([[5.0, 7.0], [3.0, 4.0]]))
    t.freq = np.ones(t.n_cells)  # a table file without frequencies: 1 everywhere
    p = problem_from_table(t, np.array([t.cell_index((1, 1))]), 1.0)
    assert p.freq is None and p.respondents is None
    sup = np.zeros(p.n_cells, dtype=bool)
    sup[
        [t.cell_index((1, 1)), t.cell_index((1, 2)), t.cell_index((2, 1)), t.cell_index((2, 2))]
    ] = True
    v = publication_audit(p, sup)
    assert v.ok and "Insiders not checked" in v.summary()


def _holding_table():
    """Holding 7 alone in (01, 01) and (02, 02): two cells in unrelated rows and columns."""
    codes_r = np.array(["01", "01", "01", "02", "02", "02"])
    codes_c = np.array(["01", "02", "02", "01", "02", "01"])
    holding = np.array([7, 3, 4, 5, 7, 6])
    value = np.array([50.0, 10.0, 12.0, 9.0, 40.0, 11.0])
    cats = []
    for col in (codes_r, codes_c):
        uniq, inv = np.unique(col, return_inverse=True)
        cats.append((inv, list(uniq)))
    fine = build_fine(cats, value, None, None, 2, holding=holding)
    dims = [flat_codelist("r", 2), flat_codelist("c", 2)]
    rules = SafetyRules(p_holding=[PRule(10, 100, 1)])
    spec = TableSpec(["r", "c"], "value", rules=rules)
    maps = [np.array([1, 2]), np.array([1, 2])]
    return table_from_fine(fine, dims, maps, spec, 0)


def test_a_holding_knows_every_cell_it_alone_makes_up():
    t = _holding_table()
    assert t.hfreq is not None
    p = CSPProblem.from_table(t)
    assert p.respondents.unit == "holding"
    codes = _known(p.respondents, t)
    assert {("1", "1"), ("2", "2")} in codes  # one holding, both cells at once
    assert np.array_equal(p.freq, t.hfreq)  # singleton options count holdings


def test_a_weighted_record_is_the_largest_only_by_its_own_value():
    """A record of weight 3 and value 10 alone in cell b: its cell sums 30, yet in the
    total (its 10 beside another record's 20) it is not the largest contributor, and the
    total is not its own (exempt) cell; the record of 20 alone in cell a is (D-90)."""
    import scipy.sparse as sp

    rel = sp.csr_matrix(np.array([[-1.0, 1.0, 1.0]]))  # total = a + b
    freq = np.array([2.0, 1.0, 1.0])
    shadow = np.array([50.0, 20.0, 30.0])  # weighted sums: b is 3 × 10
    top = np.array([[20.0, 10.0], [20.0, 0.0], [10.0, 0.0]])  # unit contributions
    resp = from_frequencies(rel, freq, "record", shadow=shadow, top=top)
    exempt = {int(r): set(resp.exempt.tocsr()[r].indices.tolist()) for r in range(resp.count)}
    known = {int(r): set(resp.known.tocsr()[r].indices.tolist()) for r in range(resp.count)}
    by_cell = {min(k): r for r, k in known.items()}
    assert exempt[by_cell[1]] == {0, 1}  # the 20: the largest in the total
    assert exempt[by_cell[2]] == {2}  # the 10 (weight 3): only the cell it alone makes up
