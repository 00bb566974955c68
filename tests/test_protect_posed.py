"""Protect solves the problem the user posed (issue 22, item 2): the primaries and the manual
and a-priori statuses, never the secondaries of the method run before; after a cancel, one
true sentence says what the table holds.

The table: a 231-cell 1H2D table (tests/protect_helpers generators) on which GH and NET
suppress more than HEUR, MOD and OPT, so a leaked pattern would show. Every comparison is
against a fresh Session given the same table, method and parameters.
"""

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

from argusqt.errors import Cancelled
from argusqt.model.status import Status, is_secondary, is_suppressed
from argusqt.model.table import Table
from argusqt.progress import CancelToken
from argusqt.protection.core.problem import CSPProblem
from argusqt.session import Session

#: GH over-suppresses this table (27 secondaries; HEUR, MOD and OPT find 22, cost 335)
SEED = 1


def _table(seed: int = SEED) -> Table:
    """Random leaves over a 4×4 hierarchy × 10 columns; ~10 % primaries with p%-like levels."""
    rng = np.random.default_rng(seed)
    dims = [hier_codelist("h", [4, 4]), flat_codelist("c", 10)]
    leaf_shape = tuple(int(d.is_leaf.sum()) for d in dims)
    leaves = np.round(rng.lognormal(3.0, 1.0, size=leaf_shape)) + 1
    freq = rng.integers(1, 20, size=leaf_shape).astype(float)
    t = table_from_leaves(dims, leaves, freq)
    nonempty = np.flatnonzero(t.freq > 0)
    k = max(1, int(round(0.1 * nonempty.size)))
    w = 1.0 / (1.0 + t.value[nonempty])
    prim = rng.choice(nonempty, size=k, replace=False, p=w / w.sum())
    pl = np.maximum(1.0, np.round(rng.uniform(0.1, 0.3, size=k) * t.value[prim]))
    problem_from_table(t, prim, pl)
    return t


def _session(manual: bool = False) -> Session:
    s = Session()
    s.tables = [_table()]
    if manual:  # the user's own statuses, which every Protect must keep
        safe = np.flatnonzero(s.table(1).status == Status.SAFE)
        s.set_status(1, [int(safe[3])], "protected")
        s.set_status(1, [int(safe[-5])], "unsafe")
    return s


def _fresh(method: str, manual: bool = False) -> np.ndarray:
    s = _session(manual)
    s.protect(1, method)
    return s.table(1).status.copy()


def _protected_by_outsider(s: Session) -> bool:
    t = s.table(1)
    return lp_protected(CSPProblem.from_table(t), is_suppressed(t.status))


@pytest.mark.slow
@pytest.mark.parametrize("first", ["GH", "NET"])
def test_opt_heur_mod_after_another_method_give_the_fresh_pattern(first):
    s = _session()
    s.protect(1, first)
    dear = s.table(1).status.copy()
    for method in ("OPT", "HEUR", "MOD"):
        r = s.protect(1, method)
        fresh = _fresh(method)
        assert not np.array_equal(fresh, dear), f"{first} found {method}'s pattern: no test"
        np.testing.assert_array_equal(s.table(1).status, fresh, err_msg=f"{method} after …")
        assert _protected_by_outsider(s)
        if method == "OPT":  # its proof is about the full problem: no cheaper pattern exists
            assert r.optimal and r.lower_bound is not None
            first_cost = float(np.asarray(s.table(1).cost)[is_secondary(dear)].sum())
            assert r.lower_bound <= first_cost + 1e-6


def test_a_second_run_of_the_same_method_gives_the_same_pattern():
    s = _session()
    s.protect(1, "HEUR")
    once = s.table(1).status.copy()
    s.protect(1, "HEUR")
    np.testing.assert_array_equal(s.table(1).status, once)
    np.testing.assert_array_equal(once, _fresh("HEUR"))


def test_manual_statuses_stay_and_the_previous_secondaries_go():
    s = _session(manual=True)
    posed = s.table(1).status.copy()
    s.protect(1, "GH")
    s.protect(1, "OPT")
    status = s.table(1).status
    np.testing.assert_array_equal(status, _fresh("OPT", manual=True))
    kept = ~is_secondary(status)
    np.testing.assert_array_equal(status[kept], posed[kept])  # protected, unsafe as set
    assert (status == Status.PROTECTED).sum() == (posed == Status.PROTECTED).sum() == 1


def test_apriori_secondaries_are_the_users_and_stay(tmp_path):
    s = _session()
    t = s.table(1)
    safe = np.flatnonzero(t.status == Status.SAFE)
    cell = int(safe[len(safe) // 2])
    hst = tmp_path / "given.hst"
    hst.write_text(",".join(t.cell_codes(cell)) + ",ML\n")
    s.apply_apriori(1, hst)
    assert s.table(1).status[cell] == Status.SECONDARY
    s.protect(1, "GH")
    s.protect(1, "HEUR")
    assert s.table(1).status[cell] == Status.SECONDARY  # still suppressed, as the user said
    fresh = _session()
    fresh.apply_apriori(1, hst)
    fresh.protect(1, "HEUR")
    np.testing.assert_array_equal(s.table(1).status, fresh.table(1).status)
    # Undo suppression takes back what the method added (and, as before, every secondary)
    s.undo_protection(1)
    assert not is_secondary(s.table(1).status).any()


def test_undo_and_redo_restore_which_secondaries_the_method_added():
    s = _session()
    s.protect(1, "GH")
    gh = s.table(1).status.copy()
    s.protect(1, "HEUR")
    s.undo()
    np.testing.assert_array_equal(s.table(1).status, gh)
    s.protect(1, "OPT")  # from the primaries again, not from GH's pattern
    np.testing.assert_array_equal(s.table(1).status, _fresh("OPT"))


@pytest.mark.slow
def test_a_restored_table_protects_again_from_the_posed_problem():
    """The session file keeps which secondaries the method added (its per-table arrays)."""
    from argusqt.sessionfile import SessionFileError, _restore, encode_array

    s = _session()
    s.protect(1, "GH")
    t = s.table(1)
    saved = {
        "status": encode_array(t.status, "int8"),
        "lpl": encode_array(t.lpl, "float64"),
        "upl": encode_array(t.upl, "float64"),
        "cost": encode_array(t.cost, "float64"),
        "suppressed_from": encode_array(t.suppressed_from, "int8"),
        "method": "GH",
    }
    again = Session()
    again.tables = [_table()]
    _restore(again.table(1), saved, "work.aqs", "table 1")
    np.testing.assert_array_equal(again.table(1).suppressed_from, t.suppressed_from)
    again.protect(1, "HEUR")
    np.testing.assert_array_equal(again.table(1).status, _fresh("HEUR"))
    # an older file without the array: a method's secondaries are all put back
    del saved["suppressed_from"]
    old = Session()
    old.tables = [_table()]
    _restore(old.table(1), saved, "work.aqs", "table 1")
    assert old.table(1).suppressed_from is None
    old.protect(1, "HEUR")
    np.testing.assert_array_equal(old.table(1).status, _fresh("HEUR"))
    saved["suppressed_from"] = encode_array(np.full(t.n_cells, 5), "int8")
    with pytest.raises(SessionFileError, match="suppressed_from"):
        _restore(_table(), saved, "work.aqs", "table 1")


def test_rounded_values_do_not_stay_under_a_suppression():
    s = _session()
    s.protect(1, "RND", {"base": s.table_facts(1).min_rounding_base})
    assert s.table(1).published is not None
    s.protect(1, "HEUR")
    assert s.table(1).published is None
    np.testing.assert_array_equal(s.table(1).status, _fresh("HEUR"))


def test_the_posed_problem_gives_the_table_facts_of_the_table():
    """Protect reads the methods' table facts off the problem it solves (built once,
    docs/design.md D-57): after GH's secondaries and manual statuses they are the facts
    of the table's own statuses."""
    from argusqt.protection.core import registry
    from argusqt.rules.changes import posed_status

    s = _session(manual=True)
    s.protect(1, "GH")
    table = s.table(1)
    assert is_secondary(table.status).any()  # the posed statuses differ from the table's
    posed = CSPProblem.from_table(table, status=posed_status(table))
    assert not np.array_equal(posed.status, table.status)
    assert registry.table_facts(table, 1, posed) == registry.table_facts(table, 1)
    assert s.table_facts(1) == registry.table_facts(table, 1)


# ---------------------------------------------------------------- cancel: one true sentence
def _no_time(monkeypatch) -> CancelToken:
    """A token cancelled before the run, with no grace: no pattern can be kept."""
    from protect_helpers import patch_cancel_grace

    patch_cancel_grace(monkeypatch, 0.0)
    token = CancelToken()
    token.cancel()
    return token


def test_cancel_with_nothing_kept_says_the_table_stays_unprotected(monkeypatch):
    s = _session()
    before = s.table(1).status.copy()
    with pytest.raises(Cancelled) as err:
        s.protect(1, "OPT", cancel=_no_time(monkeypatch))
    text = str(err.value)
    assert text.startswith("Table 1: OPT cancelled")
    assert text.endswith("Nothing changed: table 1 stays unprotected.")
    assert "kept" not in text
    assert s.log[-1].message == text  # the log says the very same sentence
    np.testing.assert_array_equal(s.table(1).status, before)
    assert s.table(1).protection is None


def test_cancel_with_nothing_kept_keeps_and_names_the_previous_pattern(monkeypatch):
    s = _session()
    s.protect(1, "HEUR")
    before = s.table(1).status.copy()
    with pytest.raises(Cancelled) as err:
        s.protect(1, "OPT", cancel=_no_time(monkeypatch))
    text = str(err.value)
    assert text.endswith("Nothing changed: table 1 keeps its HEUR pattern, which passed the audit.")
    assert "unprotected" not in text
    assert s.log[-1].message == text
    np.testing.assert_array_equal(s.table(1).status, before)
    assert s.table(1).protection.method == "HEUR" and s.protection_state(1) == "cleared"
    assert _protected_by_outsider(s)


def test_cancel_that_keeps_a_pattern_says_which_and_its_audit(generous_cancel_grace):
    """A token cancelled at the first progress event: HEUR ends with its best audited
    pattern (the cancel's grace is generous) and the note says so, as the log does."""
    s = _session()
    token = CancelToken()
    r = s.protect(1, "HEUR", progress=lambda ev: token.cancel(), cancel=token)
    assert r.cancelled
    assert r.cancel_note.startswith("Table 1: HEUR cancelled: the best pattern found before")
    assert "Audit passed" in r.cancel_note or "passed" in r.cancel_note
    assert s.log[-1].message == r.cancel_note
    np.testing.assert_array_equal(s.table(1).status, r.status)
    assert _protected_by_outsider(s)
