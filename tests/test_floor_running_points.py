"""The floor audit's shortcuts (D-100: the coalition's running points, neighbourhood LPs,
the respondents' point pool) settle only what an LP would: on random tables and patterns
they find the same disclosures as the plain path, and the independent attacker agrees."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from lower_bound_attacker import attack

import argusqt
from argusqt.model.status import Status, is_suppressed
from argusqt.protection.audit import insider_floor
from argusqt.protection.audit.insider_floor import floor_audit
from argusqt.protection.audit.outsider import audit
from argusqt.protection.core.problem import CSPProblem


def _table(seed: int):
    """A skewed 3-D survey with few records per cell: many shared cells, big blocks."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(120, 220))
    data = pd.DataFrame(
        {
            "act": rng.choice([f"a{i}" for i in range(5)], n),
            "reg": rng.choice([f"r{i}" for i in range(4)], n),
            "size": rng.choice(["s0", "s1", "s2"], n),
            "turnover": np.round(rng.lognormal(3.0, 1.5, n), 1),
        }
    )
    p = argusqt.protect(
        data, explanatory=["act", "reg", "size"], response="turnover",
        rules="P(15,1)|FREQ(3,20)", method="HEUR", progress=False,
    )[0]  # fmt: skip
    return p.table


def _key(out) -> list[tuple[int, int, int, float]]:
    return [(d.cell, d.direction, d.row, round(d.reach, 6)) for d in out.disclosures]


@pytest.mark.parametrize("seed", range(3))
def test_the_shortcuts_find_every_disclosure_the_plain_audit_finds(seed, monkeypatch):
    table = _table(seed)
    problem = CSPProblem.from_table(table)
    rng = np.random.default_rng(100 + seed)
    # neighbourhood LPs on every block, a pool that wraps around: every shortcut is used
    monkeypatch.setattr(insider_floor, "LOCAL_MIN_CELLS", 1)
    monkeypatch.setattr(insider_floor, "POOL_SIZE", 3)
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)  # group LPs from the coalition's
    nonempty = ~np.isin(np.asarray(table.status), [Status.EMPTY, Status.EMPTY_NONSTRUCTURAL])
    checked = 0
    heur = is_suppressed(np.asarray(table.status))
    found_any = 0
    for share in (0.2, 0.5, 0.0, 0.1):
        base = heur if share in (0.0, 0.1) else problem.primary
        sup = base | (nonempty & (rng.random(problem.n_cells) < share))
        plain = floor_audit(problem, sup, problem.floors, shortcuts=False)
        fast = floor_audit(problem, sup, problem.floors)
        assert _key(fast) == _key(plain)
        found_any += len(plain.disclosures)
        assert fast.pairs_left == plain.pairs_left
        if not audit(problem, sup, intervals=False).ok:
            continue  # the independent attacker's verdict mixes in the outsider's
        st = np.asarray(table.status)
        status = np.where(
            problem.primary, st, np.where(sup, Status.SECONDARY, np.where(nonempty, 1, st))
        ).astype(st.dtype)
        found = {(f.cell, 1 if f.side == "up" else -1) for f in attack(table, status)}
        assert set(fast.failed) == found
        checked += 1
    assert checked and found_any  # both comparisons were made


def test_an_anchor_point_that_breaks_a_relation_settles_nothing(monkeypatch):
    """The respondents' anchor point (D-103) is checked before it stands for an LP: a
    fake one (only the primary moved, to its bound: every floor holds, a relation does not)
    fits every member; unchecked it would hide the disclosures the plain path finds."""
    table = _table(0)
    problem = CSPProblem.from_table(table)
    rng = np.random.default_rng(100)
    nonempty = ~np.isin(np.asarray(table.status), [Status.EMPTY, Status.EMPTY_NONSTRUCTURAL])
    sup = problem.primary | (nonempty & (rng.random(problem.n_cells) < 0.2))
    plain = floor_audit(problem, sup, problem.floors, shortcuts=False)
    assert plain.disclosures
    monkeypatch.setattr(insider_floor, "ANCHOR_MIN_CELLS", 1)
    monkeypatch.setattr(insider_floor, "DECIDE", False)  # the anchor's turn (D-109)
    real = insider_floor._Lp.anchor
    faked = []

    def anchor(self, cell, direction):
        real(self, cell, direction)  # its basis marked for the group LPs
        fake = self.values.copy()  # the primary at its bound: every floor holds
        j = self.pos[cell]
        fake[cell] = self.hi[j] if direction > 0 else self.lo[j]
        faked.append(cell)
        return float(fake[cell]), fake

    monkeypatch.setattr(insider_floor._Lp, "anchor", anchor)
    fast = floor_audit(problem, sup, problem.floors)
    assert faked
    assert _key(fast) == _key(plain)
