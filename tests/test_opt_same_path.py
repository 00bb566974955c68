"""D-118's savings around the attacker LPs are exact: with each one off (`Separator.LAZY`,
`POLL_WORK`, `SCALARS`; `_CutStore.CHUNKS` = 0) OPT takes the same path — every attacker LP
with the same objective and duals, the same cuts, checks, guided runs, pattern and bound."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_insider_floors import assert_enumerated_optimum, opt_on_survey

from argusqt.protection.lp import separation
from argusqt.protection.lp.separation import Separator
from argusqt.protection.suppress import scip_plugins

#: the savings and the settings that switch them off (the path before D-118)
OFF = {"LAZY": False, "POLL_WORK": False, "SCALARS": False}


def _traced(monkeypatch, seed: int, off: bool):  # type: ignore[no-untyped-def]
    """OPT on the survey with every attacker LP traced: (result, cost, got, LPs, model loads,
    polls of the stop)."""
    if off:
        for name, value in OFF.items():
            monkeypatch.setattr(Separator, name, value)
        monkeypatch.setattr(scip_plugins._CutStore, "CHUNKS", 0)
    lps: list[tuple[int, float, float, bytes]] = []
    loads = [0]
    real_run, real_load = Separator._run, separation._load_lp

    def run(self, j, sense):  # type: ignore[no-untyped-def]
        obj, pi = real_run(self, j, sense)
        lps.append((int(self._cells[j]), sense, obj, np.round(pi, 9).tobytes()))
        return obj, pi

    def load(*args):  # type: ignore[no-untyped-def]
        loads[0] += 1
        return real_load(*args)

    monkeypatch.setattr(Separator, "_run", run)
    monkeypatch.setattr(separation, "_load_lp", load)
    p, cost, got = opt_on_survey(seed)
    monkeypatch.undo()
    return p, cost, got, lps, loads[0]


def _line(p) -> str:  # type: ignore[no-untyped-def]
    """The run's counts (LPs, cuts, checks, guided runs) without its seconds."""
    return re.sub(r"\d+\.\d+ s\b", "", next(x for x in p.result.log if "attacker LPs" in x))


@pytest.mark.parametrize(("seed", "spared"), [(5, True), (9, False), (11, True), (25, True)])
def test_the_savings_keep_the_path_count_for_count(monkeypatch, seed, spared):
    """The same attacker LPs in the same order (primary, direction, objective, duals), the
    same counts in the log, pattern and bound, with fewer models given to HiGHS."""
    fast, cost, got, lps, loads = _traced(monkeypatch, seed, off=False)
    slow, _, got_off, lps_off, loads_off = _traced(monkeypatch, seed, off=True)
    assert lps and lps == lps_off
    assert _line(fast) == _line(slow)
    assert fast.result.figures["attacker_lps"] == slow.result.figures["attacker_lps"]
    assert fast.result.figures["nodes"] == slow.result.figures["nodes"]
    assert np.array_equal(np.asarray(fast.table.status), np.asarray(slow.table.status))
    assert got == got_off
    assert fast.result.lower_bound == slow.result.lower_bound
    # blocks whose primaries were all settled without an LP loaded no model
    assert (loads < loads_off) if spared else (loads == loads_off)
    assert_enumerated_optimum(fast, cost, got)


def test_the_cut_store_in_chunks_rejects_what_one_matrix_rejects(monkeypatch):
    """Cuts added in many small batches: the chunks' verdict on 0/1 points is the stacked
    matrix's, and `mat`/`rhs` stack them in order (relaxed_search and RINS read them)."""
    rng = np.random.default_rng(7)
    n = 40
    stores = [scip_plugins._CutStore(n), scip_plugins._CutStore(n, small=True)]
    one = scip_plugins._CutStore(n)
    one.CHUNKS = 0
    cuts = []
    for k in range(120):
        cells = np.sort(rng.choice(n, size=int(rng.integers(1, 6)), replace=False))
        coef = rng.uniform(0.05, 1.0, cells.size)
        cuts.append(separation.Cut(k, "upper", cells, coef, 1.0, cells, coef, 1.0))
    for start in range(0, 120, 3):
        batch = cuts[start : start + 3]
        for s in (*stores, one):
            s.add(batch)
        x = (rng.random(n) < 0.6).astype(float)
        for s in stores:
            assert s.violated(x) == one.violated(x)
    assert len(stores[0].chunks) > 1
    for s in stores:
        mat = s.mat.to_scipy() if hasattr(s.mat, "to_scipy") else s.mat
        assert (abs(mat - one.mat) > 0).nnz == 0
        assert np.array_equal(s.rhs, one.rhs)
