"""Undo and redo over the Session's actions (argusqt/history.py, issue 13): every action on a
table comes back exactly (every cell of every per-cell array), the action log follows (a
batch file or session file written after an undo gives the current tables, not the undone
ones), and an undo never leaves a table claiming an audit its current statuses did not pass.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_action_log import LINKED, _session, assert_replays

from argusqt.actions import ApplyApriori, ChangeStatus, Protect, Recode, WriteTable
from argusqt.errors import PublicationError, SpecificationError
from argusqt.export import gate
from argusqt.history import History
from argusqt.model.status import is_secondary
from argusqt.model.table import Table
from argusqt.session import Session
from argusqt.sessionfile import load_session, save_session

ARRAYS = ("status", "lpl", "upl", "cost", "published", "interval_lower", "interval_upper")


def face(t: Table) -> dict[str, np.ndarray | None]:
    """Copies of every per-cell array an action may change."""
    return {a: None if getattr(t, a) is None else np.array(getattr(t, a)) for a in ARRAYS}


def assert_face(t: Table, expected: dict[str, np.ndarray | None]) -> None:
    for name, arr in expected.items():
        got = getattr(t, name)
        if arr is None:
            assert got is None, name
        else:
            assert np.array_equal(got, arr, equal_nan=arr.dtype.kind == "f"), name


def safe_cells(t: Table, n: int) -> np.ndarray:
    return np.flatnonzero(t.status == 1)[:n]


# ---------------------------------------------------------------------- each kind of action
def test_nothing_to_undo_at_first(sample):
    s = _session(sample)
    assert s.undo_label() is None and s.redo_label() is None
    with pytest.raises(SpecificationError, match="nothing to undo"):
        s.undo()


CHANGES = {
    "unsafe": lambda s, c: s.set_status(1, c, "unsafe"),
    "protected": lambda s, c: s.set_status(1, c, "protected"),
    "safe": lambda s, c: s.set_status(1, c, "safe"),
    "cost": lambda s, c: s.set_cost(1, c, 7.5),
    "levels": lambda s, c: s.set_protection_levels(1, c, 3.0, 4.0),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_status_change_undone_and_redone_exactly(sample, change):
    s = _session(sample)
    t = s.table(1)
    cells = safe_cells(t, 3)
    if change in ("levels", "safe"):
        s.set_status(1, cells, "unsafe")  # levels are for unsafe cells; safe undoes unsafe
    before, actions = face(t), list(s.actions)
    CHANGES[change](s, cells)
    after = face(t)
    assert any(not np.array_equal(before[a], after[a]) for a in ("status", "cost", "lpl"))
    assert s.undo() == [1]
    assert s.table(1) is t
    assert_face(t, before)
    assert s.actions == actions
    assert s.redo() == [1]
    assert_face(t, after)
    assert isinstance(s.actions[-1], ChangeStatus)


def test_undo_label_names_the_action(sample):
    s = _session(sample)
    s.set_status(1, safe_cells(s.table(1), 2), "unsafe")
    assert s.undo_label() == "set unsafe (2 cells) in table 1"
    s.recode(1, "size", sample / "size3.grc")
    assert s.undo_label() == "recode size in table 1"
    s.protect(1, "HEUR")
    assert s.undo_label() == "protection HEUR of table 1"
    s.undo()
    assert s.redo_label() == "protection HEUR of table 1"
    assert s.undo_label() == "recode size in table 1"


def test_recode_undone_and_redone_exactly(sample):
    s = _session(sample)
    s.set_status(1, safe_cells(s.table(1), 1), "unsafe")  # lost by the recode, back on undo
    t0, face0, codes0 = s.table(1), face(s.table(1)), list(s.table(1).dims[1].codes)
    s.recode(1, "size", sample / "size3.grc")
    t1, face1 = s.table(1), face(s.table(1))
    assert list(t1.dims[1].codes) != codes0
    s.undo()
    assert s.table(1) is t0 and list(s.table(1).dims[1].codes) == codes0
    assert_face(s.table(1), face0)
    assert not any(isinstance(a, Recode) for a in s.actions)
    assert_replays(s, sample / "undo_recode.arb")
    s.redo()
    assert s.table(1) is t1
    assert_face(s.table(1), face1)
    assert isinstance(s.actions[-1], Recode)
    assert_replays(s, sample / "redo_recode.arb")


@pytest.mark.slow
def test_undo_of_undo_recode_and_of_undo_protection(sample):
    s = _session(sample)
    s.recode(1, "size", sample / "size3.grc")
    recoded = face(s.table(1))
    s.undo_recode(1, "size")
    assert s.undo_label() == "removal of the recode of size in table 1"
    s.undo()
    assert_face(s.table(1), recoded)
    assert isinstance(s.actions[-1], Recode)
    s.protect(1, "HEUR")
    protected = face(s.table(1))
    s.undo_protection(1)
    assert not is_secondary(s.table(1).status).any()
    s.undo()
    assert_face(s.table(1), protected)
    assert s.protection_state(1) in ("cleared", "protected")
    assert isinstance(s.actions[-1], Protect)
    assert_replays(s, sample / "undo_undo.arb")


def test_apriori_undone_and_redone_exactly(sample):
    s = _session(sample)
    t = s.table(1)
    hst = sample / "apriori.hst"
    s.set_status(1, safe_cells(t, 4), "unsafe")
    s.write_apriori(1, hst)  # an a-priori file with those 4 unsafe cells
    s.undo()
    before = face(t)
    s.apply_apriori(1, hst)
    after = face(t)
    assert not np.array_equal(before["status"], after["status"])
    assert s.undo_label() == "a-priori file apriori.hst on table 1"
    s.undo()
    assert_face(t, before)
    assert not any(isinstance(a, ApplyApriori) for a in s.actions)
    s.redo()
    assert_face(t, after)
    assert isinstance(s.actions[-1], ApplyApriori)
    assert_replays(s, sample / "apriori.arb")


# ---------------------------------------------------------------------- protection
@pytest.mark.slow
def test_protection_redo_restores_the_stored_result_without_solving(sample, monkeypatch):
    s = _session(sample)
    before = face(s.table(1))
    # any method: redo must not run it. HEUR, not OPT: the same check without OPT's 20 CPU-s
    # on this table (docs/design.md, D-59)
    result = s.protect(1, "HEUR")
    after = face(s.table(1))
    audit = s.table(1).audit
    s.undo()
    assert_face(s.table(1), before)
    assert s.table(1).protection is None and s.table(1).audit is None
    assert 1 not in s.results

    import argusqt.protection.run as methods

    def no_solver(*a, **k):
        raise AssertionError("redo must not run the method again")

    monkeypatch.setattr(methods, "run_method", no_solver)
    s.redo()
    assert_face(s.table(1), after)
    assert s.results[1] is result and s.table(1).audit is audit
    assert s.table(1).protection is not None and s.table(1).protection.method == "HEUR"


@pytest.mark.slow
def test_after_undo_of_protection_publication_is_refused(sample):
    s = _session(sample)
    s.protect(1, "HEUR")
    out = sample / "out"
    out.mkdir()
    s.write_table(1, 2, "AS-", out / "protected.csv")  # passes the gate: table cleared
    assert s.protection_state(1) == "cleared"
    s.undo()  # the protection, not the write: writing a file is not undone
    assert s.protection_state(1) == "unprotected"
    assert gate.fingerprint(s.table(1)) != s.table(1).cleared_print
    with pytest.raises(PublicationError):
        s.write_table(1, 2, "AS-", out / "stale.csv")
    assert not (out / "stale.csv").exists()
    # the log no longer writes the table the undone protection had cleared
    assert not any(isinstance(a, WriteTable) for a in s.actions)
    assert_replays(s, sample / "after_undo.arb")
    s.redo()
    assert s.protection_state(1) in ("cleared", "protected")
    s.write_table(1, 2, "AS-", out / "again.csv")
    assert (out / "again.csv").is_file()


@pytest.mark.slow
def test_undo_never_claims_an_audit_its_statuses_did_not_pass(sample):
    """Protected, then a primary cell set safe by hand (the pattern changes), undone: the table
    claims a passing audit again, and a fresh audit of the current statuses agrees."""
    s = _session(sample)
    s.protect(1, "HEUR")
    t = s.table(1)
    assert s.protection_state(1) == "cleared"
    primary = np.flatnonzero((t.status >= 3) & (t.status <= 9))
    s.set_status(1, primary[:1], "safe")
    assert s.protection_state(1) == "changed"
    s.undo()
    assert s.protection_state(1) == "cleared"
    t.cleared_print = None  # forget the claim: the gate audits the restored statuses again
    s.audit_publication(1)
    assert s.protection_state(1) == "cleared"


def test_linked_protection_undone_and_redone(sample):
    s = _session(sample, *LINKED)
    faces = [face(t) for t in s.tables]
    s.protect_linked("GH")
    after = [face(t) for t in s.tables]
    assert s.linked == [1, 2]
    assert s.undo_label() == "protection GH of all tables (linked)"
    assert sorted(s.undo()) == [1, 2]
    for t, f in zip(s.tables, faces, strict=True):
        assert_face(t, f)
    assert s.linked == []
    s.redo()
    for t, f in zip(s.tables, after, strict=True):
        assert_face(t, f)
    assert s.linked == [1, 2]
    assert_replays(s, sample / "linked_redo.arb")


# ---------------------------------------------------------------------- the log and files
@pytest.mark.slow
def test_session_file_after_undo_holds_the_current_state(sample):
    s = _session(sample)
    s.recode(1, "size", sample / "size3.grc")
    s.set_status(1, safe_cells(s.table(1), 2), "unsafe")
    kept = face(s.table(1))
    s.protect(1, "HEUR")
    s.undo()
    path = save_session(s, sample / "undone.aqs")
    again = load_session(path)
    assert [list(d.codes) for d in again.table(1).dims] == [list(d.codes) for d in s.table(1).dims]
    assert_face(again.table(1), kept)
    assert not any(isinstance(a, Protect) for a in again.actions)
    assert again.undo_label() is None  # the history is of one run, not saved


def test_failed_action_changes_nothing_and_is_no_step(sample):
    s = _session(sample)
    t = s.table(1)
    before = face(t)
    with pytest.raises(SpecificationError):
        s.set_status(1, [0], "bogus")  # type: ignore[arg-type]
    empty = np.flatnonzero(t.status == 14)
    if empty.size:
        with pytest.raises(Exception, match="cannot set unsafe"):
            s.set_status(1, np.r_[safe_cells(t, 1), empty[:1]], "unsafe")
    assert_face(t, before)
    assert s.undo_label() is None


def test_recompute_forgets_the_history(sample):
    s = _session(sample)
    s.set_status(1, safe_cells(s.table(1), 1), "unsafe")
    assert s.undo_label() is not None
    s.compute_tables()
    assert s.undo_label() is None and s.redo_label() is None


def test_a_new_action_forgets_the_redos(sample):
    s = _session(sample)
    cells = safe_cells(s.table(1), 2)
    s.set_status(1, cells[:1], "unsafe")
    s.undo()
    assert s.redo_label() is not None
    s.set_status(1, cells[1:], "protected")
    assert s.redo_label() is None


def test_history_is_bounded_and_small(sample):
    s = _session(sample)
    s.history = History(max_steps=5)
    cells = safe_cells(s.table(1), 8)
    for c in cells:
        s.set_status(1, [c], "unsafe")
    assert len(s.history.undo_steps) == 5
    # a one-cell change keeps a few numpy values, not copies of the table
    n_cells = s.table(1).n_cells
    assert all(step.nbytes < n_cells for step in s.history.undo_steps)
    for _ in range(5):
        s.undo()
    assert s.undo_label() is None
    assert int((s.table(1).status == 9).sum()) == 3  # the 3 oldest changes stay


# ---------------------------------------------------------------------- property
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.sampled_from(["do", "undo", "redo"]), st.integers(0, 10**6)), max_size=14)
)
def test_any_sequence_of_undo_and_redo_walks_the_same_states(sample_session, steps):
    """Against a model that keeps a copy of every state: undo and redo land on exactly the
    state the model says, every cell, whatever the order."""
    s = sample_session()
    t = s.table(1)
    done = [face(t)]  # states reached by doing, newest last
    undone: list[dict] = []
    for what, k in steps:
        if what == "do":
            ok = np.flatnonzero((t.status >= 1) & (t.status <= 9))
            cell = int(ok[k % ok.size])
            change = ["safe", "unsafe", "protected"][k % 3]
            if change == "protected" and t.status[cell] > 2:
                change = "safe"  # only safe cells can be protected
            s.set_status(1, [cell], change)
            done.append(face(t))
            undone.clear()
        elif what == "undo" and len(done) > 1:
            s.undo()
            undone.append(done.pop())
        elif what == "redo" and undone:
            s.redo()
            done.append(undone.pop())
        assert_face(t, done[-1])
        assert (s.undo_label() is not None) == (len(done) > 1)
        assert (s.redo_label() is not None) == bool(undone)


def _same(a: tuple, b: tuple) -> bool:
    faces = a[1].keys()
    return (
        a[0] == b[0]
        and a[2] == b[2]
        and all(
            (a[1][k] is None and b[1][k] is None)
            or (
                a[1][k] is not None
                and b[1][k] is not None
                and a[1][k].shape == b[1][k].shape
                and np.array_equal(a[1][k], b[1][k])
            )
            for k in faces
        )
    )


def _codes(s: Session) -> list[list[str]]:
    return [list(d.codes) for d in s.table(1).dims]


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["status", "recode", "unrecode", "protect", "unprotect", "undo", "redo"]
            ),
            st.integers(0, 10**6),
        ),
        max_size=10,
    )
)
def test_mixed_actions_undo_and_redo_exactly(sample_session, sample, steps):
    """Status changes, recodes and their undo, protection and its undo, in any order (some
    refused: a recode after protection): undo and redo land on the model's states, codes and
    every cell; a refused action changes nothing and keeps the redos."""
    s = sample_session()
    done = [(_codes(s), face(s.table(1)), list(s.actions))]
    undone: list = []
    for what, k in steps:
        t = s.table(1)
        try:
            if what == "status":
                ok = np.flatnonzero((t.status >= 1) & (t.status <= 9))
                s.set_status(
                    1,
                    [int(ok[k % ok.size])],
                    "unsafe" if t.status[ok[k % ok.size]] <= 2 else "safe",
                )
            elif what == "recode":
                s.recode(1, "size", sample / "size3.grc")
            elif what == "unrecode":
                s.undo_recode(1, "size")
            elif what == "protect":
                s.protect(1, "HEUR")
            elif what == "unprotect":
                s.undo_protection(1)
            elif what == "undo":
                if len(done) > 1:
                    s.undo()
                    undone.append(done.pop())
            elif what == "redo":
                if undone:
                    s.redo()
                    done.append(undone.pop())
        except SpecificationError:
            pass  # refused (recoding a protected table): nothing changed
        else:
            now = (_codes(s), face(s.table(1)), list(s.actions))
            if what not in ("undo", "redo") and not _same(now, done[-1]):
                done.append(now)  # an action that changed nothing is no step
                undone.clear()
        codes, expected, actions = done[-1]
        assert _codes(s) == codes
        assert_face(s.table(1), expected)
        assert s.actions == actions
        assert (s.redo_label() is not None) == bool(undone)


@pytest.fixture
def sample_session(sample):
    cache: dict[str, Session] = {}

    def make() -> Session:
        if "s" not in cache:
            cache["s"] = _session(sample)
            cache["face"] = face(cache["s"].table(1))  # type: ignore[assignment]
            cache["actions"] = list(cache["s"].actions)  # type: ignore[assignment]
        s = cache["s"]
        while s.undo_label() is not None:  # back to the computed table for each example
            s.undo()
        s.history.clear()
        assert_face(s.table(1), cache["face"])  # type: ignore[arg-type]
        return s

    return make


@pytest.mark.slow
def test_keyword_calls_are_named_too(sample):
    s = _session(sample)
    s.protect(table_no=1, method="HEUR")
    s.undo_protection(table_no=1)
    assert s.undo_label() == "removal of the secondary suppressions of table 1"
    s.undo()
    assert s.undo_label() == "protection HEUR of table 1"


def test_a_failure_to_keep_the_step_loses_the_undo_not_the_action(sample, monkeypatch):
    s = _session(sample)
    cells = safe_cells(s.table(1), 2)
    s.set_status(1, cells[:1], "unsafe")

    def broken(*a, **k):
        raise RuntimeError("no room for the step")

    monkeypatch.setattr(History, "record", broken)
    assert s.set_status(1, cells[1:], "unsafe") == 1  # the action stands
    assert (s.table(1).status[cells] == 9).all()
    assert s.undo_label() is None  # no undo that would skip it
    assert "undo is not possible" in s.log[-1].message
