"""OPT's root options of D-108 (docs/design.md): insider probes of the root's fractional
points choose which respondents are separated, never which cuts hold, and the guided
heuristic's cap at the root chooses which candidates SCIP sees, never how they are judged:
"proven optimal" stays the floor model's enumerated optimum, the bound stays below it."""

from __future__ import annotations

import numpy as np
import pytest
from test_insider_floors import assert_enumerated_optimum, opt_on_survey

from argusqt.protection.suppress import scip_plugins


@pytest.mark.parametrize(
    ("probes", "level", "guided"), [(0, 0.5, False), (4, 0.5, False), (4, 1e-6, False), (0, 0.5, 0)]
)
@pytest.mark.parametrize("seed", [5, 9, 11])
def test_opt_proves_the_enumerated_optimum_with_probes(monkeypatch, seed, probes, level, guided):
    """With or without probes OPT proves the cost enumeration finds, its bound is not above
    it, and its pattern passes the independent attacker."""
    made: list[int] = []
    real_probe = scip_plugins._CapacityHandler._probe

    def probe(self, x):  # type: ignore[no-untyped-def]
        made.append(1)
        return real_probe(self, x)

    monkeypatch.setattr(scip_plugins._CapacityHandler, "_probe", probe)
    # False: no guided heuristic; a number: its runs at the root at most
    extra = {"guided": False} if guided is False else {"guided_root_runs": guided}
    p, cost, got = opt_on_survey(
        seed, monkeypatch, insider_probes=probes, probe_level=level, **extra
    )
    assert_enumerated_optimum(p, cost, got)
    assert len(made) <= probes


def test_a_probe_adds_the_respondents_the_audit_finds_to_the_known():
    """A probe audits the point rounded at its level and keeps each finding's respondent,
    with the primary it broke, in the pool the fractional rounds separate; one probe less."""
    hdlr = scip_plugins._CapacityHandler.__new__(scip_plugins._CapacityHandler)
    seen: list[np.ndarray] = []

    def insiders(mask, stop):  # type: ignore[no-untyped-def]
        seen.append(mask)
        return [(3, np.array([1, 2]))]

    class _Sep:
        def full_point(self, x):  # type: ignore[no-untyped-def]
            return x

    class _Run:
        stop = None

    pool: dict = {}

    def insider_sep(known, floor):  # type: ignore[no-untyped-def]
        return pool.setdefault(known.tobytes(), (None, set()))

    hdlr.insiders, hdlr.sep, hdlr.run = insiders, _Sep(), _Run()
    hdlr.insider_probes, hdlr.probe_level, hdlr.n_probes = 2, 0.5, 0
    hdlr._insider_sep = insider_sep  # type: ignore[method-assign]
    hdlr._probe(np.array([0.2, 0.6, 1.0, 0.5]))
    assert seen[0].tolist() == [False, True, True, False]
    assert [cells for _, cells in pool.values()] == [{3}]
    assert (hdlr.insider_probes, hdlr.n_probes) == (1, 1)


def test_the_guided_heuristic_does_not_run_at_the_root_past_its_cap():
    """Past its root cap the guided heuristic leaves the root's LP points alone (a count)."""

    class _Model:
        depth = 0

        def getLPSolstat(self):  # type: ignore[no-untyped-def]
            return 1

        def getDepth(self):  # type: ignore[no-untyped-def]
            return self.depth

    class _Hdlr:
        class run:  # noqa: N801
            class stop:  # noqa: N801
                cancelled = False

        def attacker_lps(self):  # type: ignore[no-untyped-def]
            return 10**6

    class _Heur(scip_plugins._GuidedHeur):
        model = _Model()  # type: ignore[assignment]

    heur = _Heur.__new__(_Heur)
    heur.hdlr, heur.next_at, heur.spent, heur.calls, heur.root_runs = _Hdlr(), 0, 0, 1, 1
    heur.root_counted = 1
    out = heur.heurexec(None, False)
    assert out == {"result": scip_plugins.SCIP_RESULT.DIDNOTRUN}


def _guided_heur(pool: bool, guide, **kwargs):  # type: ignore[no-untyped-def]
    """A guided heuristic at the root over stand-ins for SCIP's model and the capacity
    handler (an LP point of three cells, the pool of known insiders empty or not)."""

    class _Model:
        def getLPSolstat(self):  # type: ignore[no-untyped-def]
            return 1

        def getDepth(self):  # type: ignore[no-untyped-def]
            return 0

        def getPrimalbound(self):  # type: ignore[no-untyped-def]
            return 1e20

        def getDualbound(self):  # type: ignore[no-untyped-def]
            return -1e20

    class _Hdlr:
        insider_pool = {b"k": None} if pool else {}

        class run:  # noqa: N801
            bound = None
            offset = 0.0

            class stop:  # noqa: N801
                cancelled = False

            class watch:  # noqa: N801
                elapsed = 0.0

        class sep:  # noqa: N801
            @staticmethod
            def full_point(x):  # type: ignore[no-untyped-def]
                return x

        def _x(self):  # type: ignore[no-untyped-def]
            return np.zeros(3)

        def attacker_lps(self):  # type: ignore[no-untyped-def]
            return 10**6

    class _Heur(scip_plugins._GuidedHeur):
        model = _Model()  # type: ignore[assignment]

    return _Heur(_Hdlr(), guide, 0.0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("wait", "pool", "counted"), [(True, 0, 0), (True, 1, 1), (False, 0, 1)])
def test_the_root_cap_waits_for_a_known_respondent(wait, pool, counted):
    """With `root_wait` a root run counts against the cap only once the pool of known
    insiders is not empty (D-110); without it every root run counts."""

    def guide(x, incumbent, stop, seconds):  # type: ignore[no-untyped-def]
        return None  # nothing found: the run is made and counted all the same

    heur = _guided_heur(bool(pool), guide, root_runs=1, root_wait=wait)
    out = heur.heurexec(None, False)
    assert out == {"result": scip_plugins.SCIP_RESULT.DIDNOTFIND}
    assert (heur.calls, heur.root_counted) == (1, counted)
    heur.last_x, heur.next_at = None, 0  # a new point, due again
    again = heur.heurexec(None, False)["result"]
    assert (again == scip_plugins.SCIP_RESULT.DIDNOTRUN) == bool(counted)


@pytest.mark.parametrize(("alone", "pool", "spent"), [(True, 0, 107), (True, 1, 7), (False, 0, 7)])
def test_the_repair_counts_while_no_respondent_is_known(alone, pool, spent):
    """With `repair_alone` a guided run's insider repair LPs join its own in the throttle
    (its share and its next run) while the pool of known insiders is empty (D-116)."""

    def guide(x, incumbent, stop, seconds):  # type: ignore[no-untyped-def]
        guide.last_lps, guide.last_repair_lps = 7, 100  # type: ignore[attr-defined]
        return None

    heur = _guided_heur(bool(pool), guide)
    heur.repair_alone = alone
    heur.heurexec(None, False)
    assert heur.spent == spent
    assert heur.next_at == 10**6 + spent


@pytest.mark.parametrize("seed", [5, 9, 11])
def test_opt_proves_the_enumerated_optimum_with_the_repair_counted(monkeypatch, seed):
    """The throttle chooses when the guided heuristic runs, never how a pattern is judged."""
    p, cost, got = opt_on_survey(seed, monkeypatch, guided_repair_alone=True, guided_delay=0)
    assert_enumerated_optimum(p, cost, got)


def _forced_restart(monkeypatch, seed: int):  # type: ignore[no-untyped-def]
    """OPT with mod_restart on a survey whose root's gap is made to start the run again at
    the first root separation: (restarts, MOD's pattern sizes asked, the OPT call's out)."""
    from argusqt.protection.suppress import optimal

    restarts: list[int] = []
    mods: list[int] = []
    real_sepa = scip_plugins._CapacityHandler.conssepalp
    real_mod = optimal._mod_pattern

    def sepa(self, constraints, nusefulconss):  # type: ignore[no-untyped-def]
        if self.late_bridgeless is not None:  # the root's gap "reached" the threshold
            self.late_bridgeless = None
            self.run.late_bridgeless = True
            restarts.append(1)
            self.model.interruptSolve()
            return {"result": scip_plugins.SCIP_RESULT.DIDNOTRUN}
        return real_sepa(self, constraints, nusefulconss)

    def mod(*args, **kwargs):  # type: ignore[no-untyped-def]
        out, capped = real_mod(*args, **kwargs)
        mods.append(-1 if out is None or capped else int(out.sum()))
        return out, capped

    monkeypatch.setattr(scip_plugins._CapacityHandler, "conssepalp", sepa)
    monkeypatch.setattr(optimal, "_mod_pattern", mod)
    return restarts, mods, opt_on_survey(seed, monkeypatch, mod_restart=True)


@pytest.mark.parametrize("seed", [5, 9, 11])
def test_mod_s_pattern_as_the_restart_s_start_keeps_the_proof(monkeypatch, seed):
    """MOD's published pattern joins the starts when the root's gap starts the run again
    (forced here at the first root separation): a start only, so OPT still proves the
    enumerated optimum, its bound not above it, and the attacker finds nothing (D-110)."""
    from argusqt.protection.suppress import optimal

    monkeypatch.setattr(optimal, "MOD_RESTART_MIN_CELLS", 0)  # the surveys are small
    restarts, mods, (p, cost, got) = _forced_restart(monkeypatch, seed)
    assert restarts and mods and mods[0] > 0  # the restart happened, with MOD's pattern
    assert_enumerated_optimum(p, cost, got)


def test_a_small_table_s_restart_runs_no_mod(monkeypatch):
    """Below MOD_RESTART_MIN_CELLS the restart goes without MOD's pattern (p78: MOD cost
    0.3 CPU-s and found the pattern the restart proves anyway): main's path (D-110)."""
    from argusqt.protection.suppress import optimal

    assert optimal.MOD_RESTART_MIN_CELLS == 300
    restarts, mods, (p, _, _) = _forced_restart(monkeypatch, 5)
    assert p.table.n_cells < optimal.MOD_RESTART_MIN_CELLS
    assert restarts and not mods
    assert p.result.optimal
