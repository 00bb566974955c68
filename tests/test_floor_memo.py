"""The floor audit's components met again are replayed (floor_memo, D-101): a run of audits
sharing one memo finds every disclosure the audits without it find, on seeded patterns that
respondents narrow, with seeds and `only`, and with published intervals (whose bounds differ
on the same cells: never replayed across)."""

from __future__ import annotations

import numpy as np
import pytest
from test_floor_gather import _patterns

from argusqt.protection.audit.floor_memo import FloorMemo
from argusqt.protection.audit.insider_floor import floor_audit


def _found(outcome) -> list:
    return [(d.cell, d.direction, d.row, d.known, d.floors) for d in outcome.disclosures] + [
        outcome.pairs_left
    ]


def _around(problem, patterns, seed, most=2):
    """The patterns and others one to `most` cells away (a search's neighbours)."""
    rng = np.random.default_rng(seed)
    out = list(patterns)
    for sup in patterns:
        for _ in range(3):
            other = sup.copy()
            flip = rng.integers(0, problem.n_cells, int(rng.integers(1, most + 1)))
            other[flip] = ~other[flip]
            out.append(other | problem.primary)
    return out + list(patterns)  # the same patterns again at the end


@pytest.mark.parametrize("seed", [2, 5, 6, 9])
def test_a_shared_memo_finds_what_each_audit_finds(monkeypatch, seed):
    problem, patterns = _patterns(monkeypatch, seed, "MOD")
    memo = FloorMemo(problem, problem.floors)
    found = 0
    last = None
    for sup in _around(problem, patterns, seed):
        plain = floor_audit(problem, sup, problem.floors)
        # first with an earlier audit's points as seeds and every other pair failing here
        # (components then met with fewer targets), then the whole audit
        if last is not None and len(plain.failed) > 1:
            kw = {"seeds": last.points, "only": plain.failed[::2]}
            assert _found(floor_audit(problem, sup, problem.floors, memo=memo, **kw)) == _found(
                floor_audit(problem, sup, problem.floors, **kw)
            )
        remembered = floor_audit(problem, sup, problem.floors, memo=memo)
        assert _found(remembered) == _found(plain)
        assert remembered.failed == plain.failed
        last = plain
        found += len(plain.disclosures)
    assert found > 0
    assert memo.hits > 0


def test_published_intervals_on_the_same_cells_are_attacked_afresh(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    memo = FloorMemo(problem, problem.floors)
    values = np.asarray(problem.values, dtype=float)
    sup = patterns[1]
    seen = set()
    for width in (1.0, 0.2, 0.05, 1.0):
        lower = np.where(sup, values - width * (values - problem.lower), values)
        upper = np.where(sup, values + width * (problem.upper - values), values)
        kw = {"lower": lower, "upper": upper}
        got = floor_audit(problem, sup, problem.floors, memo=memo, **kw)
        assert _found(got) == _found(floor_audit(problem, sup, problem.floors, **kw))
        seen.add(len(got.disclosures))
    assert len(seen) > 1  # the narrower intervals disclose what the wider ones do not


def test_a_memo_serves_its_own_problem_and_floors_only(monkeypatch):
    problem, patterns = _patterns(monkeypatch, 2, "MOD")
    twin, _ = _patterns(monkeypatch, 2, "MOD")
    memo = FloorMemo(problem, problem.floors)
    floor_audit(problem, patterns[1], problem.floors, memo=memo)
    floor_audit(twin, patterns[1], twin.floors, memo=memo)
    floor_audit(problem, patterns[1], twin.floors, memo=memo)
    assert memo.hits == 0
    floor_audit(problem, patterns[1], problem.floors, memo=memo)
    assert memo.hits > 0
