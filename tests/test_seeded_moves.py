"""MOD's witness moves as the polish's remembered attacker moves (lp/seeded_moves.py, D-67;
off by default, `POLISH_SEED_MOVES`): each checked, never trusted; the polish's
branch-and-cut from the modular pattern gives the same pattern, bound and proof with them,
with fewer attacker LPs.

Judged by the test's own linprog attackers (protect_helpers: lp_protected, and the
publication check of test_modular_publish), which share no code with the separation."""

from __future__ import annotations

import numpy as np
import pytest
from protect_helpers import lp_protected, mixed_problem
from test_modular_publish import independent_publishable

import argusqt.protection.suppress.modular as modular
from argusqt.model.status import is_suppressed
from argusqt.protection.lp.seeded_moves import seed_certificates
from argusqt.protection.lp.separation import Separator, default_fixed
from argusqt.protection.run import run_method
from argusqt.protection.suppress.branch_and_cut import solve_pattern


def _polish_inputs(monkeypatch, seed: int):
    """MOD on a generated table: the polish's problem (with its virtual cells), its start
    (the modular pattern) and the witness moves it is seeded with, and MOD's result."""
    got: list = []
    real = modular.solve_pattern

    def spy(work, *args, **kw):
        if kw.get("moves"):
            got.append((work, np.asarray(kw["start"]) > 0.5, list(kw["moves"])))
        return real(work, *args, **kw)

    monkeypatch.setattr(modular, "solve_pattern", spy)
    monkeypatch.setattr(modular, "POLISH_SEED_MOVES", True)  # off by default (D-67)
    p = mixed_problem(seed)
    result = run_method(p, "MOD", {"polish": True})
    ((work, start, moves),) = got
    return p, work, start, moves, result


def _broken(moves):
    """Copies that are no attacker moves: one shift changed (a relation breaks), a cell out
    of the table, a cell twice, a non-finite shift."""
    out = []
    for cells, d in moves[:5]:
        if cells.size > 1:
            bad = d.copy()
            bad[0] *= 3.0
            out.append((cells, bad))
            out.append((np.r_[cells[:-1], cells[0]], d))
        out.append((np.r_[cells, 10**9], np.r_[d, 1.0]))
        out.append((cells, np.where(np.arange(d.size) == 0, np.nan, d)))
    return out


@pytest.mark.parametrize("seed", [1, 3])
def test_witness_moves_are_attacker_moves_and_broken_ones_are_dropped(seed, monkeypatch):
    table, problem, sup, moves, result = _polish_inputs(monkeypatch, seed)
    assert moves
    assert result.verdict is not None and result.verdict.ok
    assert independent_publishable(table, is_suppressed(result.status))
    sep = Separator(problem)
    sep.reuse = True
    broken = _broken(moves)
    assert broken
    assert seed_certificates(sep, broken) == 0
    assert seed_certificates(sep, moves) == len(moves)
    rel = problem.relations.tocsr()
    for cells, d in moves:  # the test's own check of each kept move
        x = np.zeros(problem.n_cells)
        x[cells] = d
        assert np.abs(rel @ x).max() <= 1e-7 * np.abs(d).max()
        assert sup[cells].all()
    off = Separator(problem)  # without reuse nothing is remembered
    assert seed_certificates(off, moves) == 0 and not off.certs.moves


@pytest.mark.parametrize("seed", [1, 3])
def test_seeded_branch_and_cut_gives_the_same_pattern_with_fewer_lps(seed, monkeypatch):
    table, problem, sup, moves, _ = _polish_inputs(monkeypatch, seed)

    def search(seeds):
        return solve_pattern(
            problem,
            default_fixed(problem),
            gap=0.0,
            start=sup,
            max_lps=2_000,
            heuristics="default",
            reuse_moves=True,
            moves=seeds,
        )

    plain, seeded, bogus = search(None), search(moves), search(_broken(moves))
    assert seeded.optimal == plain.optimal
    assert seeded.mask is not None and plain.mask is not None
    np.testing.assert_array_equal(seeded.mask, plain.mask)
    assert seeded.bound == pytest.approx(plain.bound)
    assert seeded.lps < plain.lps  # the start's check spared LPs
    np.testing.assert_array_equal(bogus.mask, plain.mask)  # dropped: the plain search
    assert bogus.lps == plain.lps
    assert lp_protected(table, seeded.mask[: table.n_cells])
