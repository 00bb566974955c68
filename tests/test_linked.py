"""Linked tables (argusqt/docs/methods.md §1.5, §6.3): cover table, common cells, pattern copied
back."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import (
    flat_codelist,
    hier_codelist,
    lp_protected,
    problem_from_table,
    table_from_leaves,
)

from argusqt.errors import InputError, MethodError
from argusqt.model.codelist import CodeList
from argusqt.protection.audit.outsider import audit
from argusqt.protection.suppress.linked import (
    build_linked_problem,
    cover_problem_for,
    protect_linked,
)


def _sup(status) -> np.ndarray:
    s = np.asarray(status)
    return ((s >= 3) & (s <= 9)) | (s == 11) | (s == 12)


def _two_tables(seed: int = 0):
    """region × size and region × sector from one set of records (leaves region×size×sector)."""
    rng = np.random.default_rng(seed)
    leaves = np.round(rng.lognormal(3, 1, size=(3, 3, 2))) + 1
    region = flat_codelist("region", 3)
    t1 = table_from_leaves([region, flat_codelist("size", 3)], leaves.sum(axis=2))
    t2 = table_from_leaves([flat_codelist("region", 3), flat_codelist("sector", 2)], leaves.sum(1))
    # primaries on interior cells only (shared cells are the region margins and totals)
    p1 = problem_from_table(t1, np.array([t1.cell_index((1, 2)), t1.cell_index((3, 1))]), 3.0)
    p2 = problem_from_table(t2, np.array([t2.cell_index((2, 1))]), 4.0)
    for p in (p1, p2):
        p.cost = np.abs(p.values)
    return p1, p2


def test_joint_problem_shares_the_region_margin():
    p1, p2 = _two_tables()
    joint, local, cover = build_linked_problem([p1, p2])
    assert [c.name for c in cover] == ["region", "size", "sector"]
    # 16 + 12 cells, of which the 4 region margins (incl. the grand total) are common
    assert joint.n_cells == 16 + 12 - 4
    for r in range(len(p1.dims[0])):
        assert local[0][r * 4] == local[1][r * 3]
    assert joint.dims is None  # cells of size × sector are in no table


def test_protect_linked_opt_consistent_and_safe():
    p1, p2 = _two_tables()
    res = protect_linked([p1, p2], "OPT", {"max_time": 60})
    assert len(res) == 2
    s1, s2 = res[0].status, res[1].status
    # common cells: same status in both tables
    for r in range(4):
        assert s1[r * 4] == s2[r * 3]
    # each table passes its own audit and the joint attacker is defeated too
    assert audit(p1, _sup(s1)).ok and audit(p2, _sup(s2)).ok
    joint, local, _ = build_linked_problem([p1, p2])
    mask = np.zeros(joint.n_cells, dtype=bool)
    mask[local[0][_sup(s1)]] = True
    mask[local[1][_sup(s2)]] = True
    assert lp_protected(joint, mask)
    assert res[0].figures["joint_cost"] == pytest.approx(
        float(joint.cost[mask & ~joint.primary].sum())
    )


def test_inconsistent_common_cells_are_reported():
    p1, p2 = _two_tables()
    p2.values = p2.values.copy()
    p2.values[3] += 5  # (region 1, total) differs from table 1
    with pytest.raises(InputError, match="disagree on common cells"):
        build_linked_problem([p1, p2])


def test_same_variables_different_detail_modular():
    rng = np.random.default_rng(3)
    hier = hier_codelist("region", [2, 2])  # Total, 01, 0101, 0102, 02, 0201, 0202
    size = flat_codelist("size", 3)
    leaves = np.round(rng.lognormal(3, 1, size=(4, 3))) + 1
    fine = table_from_leaves([hier, size], leaves)
    coarse_leaves = np.array([leaves[:2].sum(0), leaves[2:].sum(0)])
    coarse = table_from_leaves(
        [CodeList.flat("region", ["01", "02"]), flat_codelist("size", 3)], coarse_leaves
    )
    pf = problem_from_table(fine, np.array([fine.cell_index((2, 1)), fine.cell_index((6, 3))]), 2.0)
    pc = problem_from_table(coarse, np.array([], dtype=np.int64), 1.0)
    for p in (pf, pc):
        p.cost = np.abs(p.values)
    joint, local, cover = build_linked_problem([pc, pf])
    assert joint.dims is not None and joint.n_cells == pf.n_cells  # the fine table is the cover
    res = protect_linked([pc, pf], "MOD", {"max_time_per_subtable": 20})
    sc, sf = res[0].status, res[1].status
    # coarse cells are the level-1 rows of the fine table: same statuses
    assert np.array_equal(sc, sf[local[0]])
    assert lp_protected(joint, _sup(sf)) and audit(pf, _sup(sf)).ok
    opt = protect_linked([pc, pf], "OPT", {"max_time": 30})
    assert res[1].figures["joint_cost"] >= opt[1].figures["joint_cost"] - 1e-6


def _cover_of_two_tables(seed: int = 0):
    """The region × size × sector cover of _two_tables, as built from the same records."""
    rng = np.random.default_rng(seed)
    leaves = np.round(rng.lognormal(3, 1, size=(3, 3, 2))) + 1
    dims = [flat_codelist("region", 3), flat_codelist("size", 3), flat_codelist("sector", 2)]
    cover = table_from_leaves(dims, leaves)
    # the rules of the cover may flag cells of no table: they must not become primaries
    hidden = cover.cell_index((1, 1, 1))
    p = problem_from_table(cover, np.array([hidden]), 50.0)
    p.cost = np.abs(p.values)
    return p, hidden


def test_modular_on_cover_from_microdata():
    p1, p2 = _two_tables()
    cover, hidden = _cover_of_two_tables()
    with pytest.raises(MethodError, match="needs the cover table"):
        protect_linked([p1, p2], "MOD")
    work, ids = cover_problem_for([p1, p2], cover)
    assert work.n_cells == cover.n_cells
    # primaries come from the tables only; cells of no table enter suppressed at no cost
    used = np.unique(np.concatenate(ids))
    assert set(np.flatnonzero(work.primary)) == set(ids[0][p1.primary]) | set(ids[1][p2.primary])
    in_no_table = np.setdiff1d(np.arange(work.n_cells), used)
    assert hidden in in_no_table
    assert np.all(work.status[in_no_table] == 11) and np.all(work.cost[in_no_table] == 0)
    res = protect_linked([p1, p2], "MOD", {"max_time_per_subtable": 10}, cover=cover)
    s1, s2 = res[0].status, res[1].status
    for r in range(4):  # shared cells: the region margins
        assert s1[r * 4] == s2[r * 3]
    assert res[0].audit.ok and res[1].audit.ok
    assert audit(p1, _sup(s1)).ok and audit(p2, _sup(s2)).ok
    joint, local, _ = build_linked_problem([p1, p2])
    mask = np.zeros(joint.n_cells, dtype=bool)
    mask[local[0][_sup(s1)]] = True
    mask[local[1][_sup(s2)]] = True
    assert lp_protected(joint, mask)
    assert res[0].figures["joint_cost"] == pytest.approx(
        float(joint.cost[mask & ~joint.primary].sum())
    )


def test_cover_must_match_the_tables():
    p1, p2 = _two_tables()
    cover, _ = _cover_of_two_tables()
    cover.values = cover.values.copy()
    cover.values[0] += 1  # grand total differs from the tables'
    with pytest.raises(InputError, match="cover table disagrees"):
        cover_problem_for([p1, p2], cover)
    other, _ = _cover_of_two_tables()
    other.dims = [other.dims[1], other.dims[0], other.dims[2]]
    with pytest.raises(InputError, match="must span the variables"):
        cover_problem_for([p1, p2], other)


def test_a_cancel_at_the_methods_end_keeps_the_linked_pattern_audited(monkeypatch):
    """Review of D-51: the joint insider repair ran on the already-cancelled token and
    threw the method's pattern away; it gets the cancel's grace, as one table's audit does."""
    import dataclasses

    import argusqt.protection.suppress.linked as linked_module
    from argusqt.progress import CancelToken

    p1, p2 = _two_tables()
    token = CancelToken()
    real_get = linked_module.registry.get

    def get(name):
        desc = real_get(name)

        def solve(*args, **kwargs):
            res = desc.solve(*args, **kwargs)
            token.cancel()  # the user pressed Cancel as the method returned its pattern
            res.cancelled = True
            return res

        return dataclasses.replace(desc, solve=solve)

    monkeypatch.setattr(linked_module.registry, "get", get)
    results = protect_linked([p1, p2], "OPT", {"max_time": 60}, cancel=token)
    assert [r.cancelled for r in results] == [True, True]
    for prob, res in zip((p1, p2), results, strict=True):
        assert res.audit is not None and res.audit.ok
        assert lp_protected(prob, _sup(res.status))  # the test's own attacker
