"""The insider audit on patterns of the large-table work (issue 15): no crash, sound bounds."""

from __future__ import annotations

import numpy as np
from protect_helpers import hier_codelist, problem_2d, random_problem

from argusqt.protection.audit.insider import insider_audit
from argusqt.protection.audit.publication import publication_audit

# a heuristic pattern of the random table below (seed 21 of benchmarks/bench_random_set.py)
# whose neighbourhood LPs reached suppressed cells of another component of the pattern
SEED21_PATTERN = [
    17, 18, 19, 20, 22, 27, 28, 29, 30, 31, 32, 33, 35, 40, 41, 42, 43, 44, 45, 46, 48, 54,
    55, 70, 71, 73, 74, 82, 83, 84, 85, 86, 87, 89, 90, 93, 94, 95, 96, 97, 98, 100, 106,
    107, 108, 109, 111, 113, 115, 116, 121, 122, 123, 124, 125, 126, 127, 129, 132, 133, 134,
    135, 136, 137, 138, 139, 140, 142, 145, 146, 147, 148, 150, 151, 152, 158, 159, 160, 161,
    162, 163, 164, 165, 173, 174, 175, 179, 181, 183, 184, 185, 190, 191, 192, 194, 197, 198,
    200, 201, 206, 207, 209, 210, 211, 212, 213, 216, 217, 218, 219, 220,
]  # fmt: skip


def _seed21():
    rng = np.random.default_rng(21)
    dims = [hier_codelist("a", [4, 3]), hier_codelist("b", [4, 2])]
    share = float(rng.uniform(0.08, 0.25))
    p = random_problem(rng, dims, primary_share=share, zero_share=float(rng.uniform(0, 0.1)))
    p.cost = np.abs(p.values)
    return p


def test_neighbourhoods_reaching_another_component_do_not_crash():
    # regression: KeyError in the insider audit's local LP (a cell of another component)
    p = _seed21()
    sup = np.zeros(p.n_cells, dtype=bool)
    sup[SEED21_PATTERN] = True
    sup |= p.primary
    out = insider_audit(p, sup)
    assert out.available
    verdict = publication_audit(p, sup)
    assert {d.cell for d in verdict.disclosures if d.reason == "insider"} == {
        d.cell for d in out.disclosures
    }


def test_big_totals_with_float_noise_are_audited():
    # on the 7,290-cell business table (totals ~10⁸; benchmarks/bench_vs_tauargus.py b7290)
    # an insider attacker LP was "infeasible" at the true table (A y = b form) and HEUR
    # failed; the LPs now move cells from their values. That failure needs the big table:
    # this small one only checks that noisy big totals are audited at all
    p = problem_2d([[123456789.01, 98765432.19], [55555555.55, 44444444.43]], [(1, 1)], 1e6)
    p.values = p.values.copy()
    p.values[0] += 2.5e-7  # what summing in another order gives on such totals
    p.freq = np.array([9.0, 5.0, 4.0, 4.0, 1.0, 3.0, 5.0, 1.0, 4.0])
    p.respondents = None  # derived from these frequencies: two one-record cells
    sup = np.ones(p.n_cells, dtype=bool)
    out = insider_audit(p, sup)
    assert out.available and out.attackers >= 1


def test_a_warm_resolve_called_infeasible_is_solved_again_from_scratch(monkeypatch):
    # on the 7,290-cell table HiGHS called a warm re-solve infeasible although δ = 0 is
    # feasible by construction; the LP is then solved again from scratch, not given up
    from argusqt.protection.audit import insider
    from argusqt.protection.audit.insider import respondents_of

    p = _seed21()
    sup = np.zeros(p.n_cells, dtype=bool)
    sup[SEED21_PATTERN] = True
    sup |= p.primary
    # every respondent against every primary, and no move settles any: the component LPs run
    known = respondents_of(p).known.tocsr()
    attackers = np.flatnonzero(known[:, np.flatnonzero(sup)].getnnz(axis=1))
    everything = {int(r): np.flatnonzero(p.primary).tolist() for r in attackers}
    monkeypatch.setattr(insider.Cover, "run", lambda self, pairs, cancel, among=None: among)
    honest = insider_audit(p, sup, recheck=everything)
    assert honest.n_lps > 0
    real, calls = insider.solve, {"n": 0, "lied": 0}

    def flaky(h):
        calls["n"] += 1
        if calls["n"] % 3 == 0:  # every third solve: HiGHS loses its way once
            calls["lied"] += 1
            return "infeasible", None, float("nan")
        return real(h)

    monkeypatch.setattr(insider, "solve", flaky)
    out = insider_audit(p, sup, recheck=everything)
    assert calls["lied"] > 0 and out.available
    assert {d.cell for d in out.disclosures} == {d.cell for d in honest.disclosures}


def test_neighbourhoods_take_the_virtual_cells_of_their_cells():
    # the Grid finds virtual (singleton) cells by one flat lookup: same cells as asking
    # every virtual cell whether one of its members is in the neighbourhood
    from argusqt.protection.lp.components import Grid
    from argusqt.protection.suppress.singleton import add_singleton_cells

    p = _seed21()
    ext, n_virtual = add_singleton_cells(p)
    assert n_virtual > 0
    grid = Grid(ext)
    score = np.where(ext.primary, 0.0, np.abs(ext.values) + 1.0)
    for cell in range(0, p.n_cells, 5):
        got = grid.neighbourhood(cell, score, 3)
        base = got[got < grid.size]
        want = [v for v, mem in grid.members.items() if np.isin(mem, base).any()]
        assert set(got[got >= grid.size].tolist()) == set(want)


def test_grid_product_is_the_c_order_product_of_the_chosen_codes():
    # Grid.product builds flat indices by broadcasting (issue 26): with every cell suppressed
    # and no limits every code of every dimension is chosen, so the product is the whole
    # table in C order, and a cell's row of siblings only is that row in order
    from argusqt.protection.lp.components import Grid

    rng = np.random.default_rng(26)
    dims = [hier_codelist("a", [3, 2]), hier_codelist("b", [2, 3]), hier_codelist("c", [4])]
    p = random_problem(rng, dims, primary_share=0.2)
    grid = Grid(p)
    everything = np.zeros(p.n_cells)  # score 0: all suppressed
    for cell in (0, 7, p.n_cells - 1):
        got = grid.product(cell, everything, k_free=0, k_sup=1 << 30)
        np.testing.assert_array_equal(got, np.arange(grid.size))
    shape = grid.shape
    only_zero = np.full(p.n_cells, np.inf)
    only_zero[0] = 0.0
    got = grid.product(0, only_zero, k_free=0, k_sup=1 << 30)
    assert got.dtype == np.int64 and got.tolist() == [0]
    assert grid.size == int(np.prod(shape))


def test_unique_ints_is_numpy_unique():
    from argusqt.protection.lp.components import unique_ints

    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 5, 600, 5000):
        for dtype in (np.int32, np.int64):
            a = rng.integers(0, max(n // 3, 1) + 1, n).astype(dtype)
            got, want = unique_ints(a), np.unique(a)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_witness_users_are_the_pairs_whose_witness_uses_the_cell():
    # WitnessUsers (D-71) reads them from the moves indexed by cell: the same sets as the
    # definition, one add per (pair, cell) of its witness, after witnesses change too
    from collections import defaultdict

    from argusqt.protection.lp.cleanup import Witnesses, WitnessUsers

    rng = np.random.default_rng(3)
    w = Witnesses()
    assert all(not WitnessUsers(w).of_cell(c) for c in range(5))
    for _ in range(300):
        w.moves.append(rng.choice(500, int(rng.integers(1, 12)), replace=False).astype(np.int64))
    for q in range(400):
        w.of[(q, 1 if q % 2 else -1)] = int(rng.integers(0, 300))
    users = WitnessUsers(w)

    def want() -> dict[int, set]:
        out: dict[int, set] = defaultdict(set)
        for key, mid in w.of.items():
            for c in w.moves[mid].tolist():
                out[c].add(key)
        return out

    for round_ in range(4):
        expected = want()
        assert all(users.of_cell(c) == expected.get(c, set()) for c in range(501))
        for key in list(w.of)[round_::3]:  # other witnesses, old moves and new ones
            if rng.random() < 0.5:
                w.moves.append(rng.choice(500, 5, replace=False).astype(np.int64))
                new = len(w.moves) - 1
            else:
                new = int(rng.integers(0, len(w.moves)))
            users.change(key, w.of[key], new)
            w.of[key] = new
    expected = want()
    assert all(users.of_cell(c) == expected.get(c, set()) for c in range(501))
