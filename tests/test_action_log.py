"""The Session's typed action log: undo removes actions, and a batch file written from the log
replays to the same tables (issue 10: bugs 1 and 2, typed recodes beside the batch file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from argusqt.actions import ChangeStatus, Protect, Recode
from argusqt.batch.arb import parse_specify_table
from argusqt.batch.render import batch_lines, write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.errors import ArgusError, SpecificationError
from argusqt.protection.core import registry
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session

RULES = "P(15,1)|FREQ(3,20)"
#: two linked tables small enough for OPT to finish well within its limit (a run stopped by
#: the time limit need not give the same pattern twice)
LINKED = ('"size""region"', '"size"')


def _session(folder: Path, *dims: str) -> Session:
    s = Session()
    s.open_microdata(folder / "enterprise.asc", folder / "enterprise.rda")
    for d in dims or ('"activity""size"',):
        s.specify_table(parse_specify_table(f'{d}|"turnover"||'))
        s.set_safety_rules(parse_safety_rule(RULES))
    s.compute_tables()
    return s


def assert_replays(s: Session, arb: Path) -> Session:
    """Write the batch file, run it, and find the same tables (codes, statuses, costs)."""
    write_batch_file(s, arb)
    out = run_batch(arb)
    assert out.ok, out.error
    again = out.session
    assert len(again.tables) == len(s.tables)
    for a, b in zip(s.tables, again.tables, strict=True):
        assert [list(d.codes) for d in a.dims] == [list(d.codes) for d in b.dims]
        np.testing.assert_array_equal(a.status, b.status)
        np.testing.assert_allclose(a.cost, b.cost)
        np.testing.assert_allclose(a.lpl, b.lpl)
    return again


# ---------------------------------------------------------------------- bug 1: undo recode
def test_undone_recode_leaves_the_log_and_the_batch_file(sample):
    s = _session(sample)
    n_size = len(s.table(1).dims[1])
    s.recode(1, "size", sample / "size3.grc")
    assert len(s.table(1).dims[1]) < n_size
    assert any(isinstance(a, Recode) for a in s.actions)
    s.undo_recode(1, "size")
    assert len(s.table(1).dims[1]) == n_size
    assert not any(isinstance(a, Recode) for a in s.actions)
    assert not any(line.startswith("<RECODE>") for line in batch_lines(s))
    assert_replays(s, sample / "undo.arb")


def test_undo_recode_keeps_other_recodes_and_later_manual_changes(sample):
    s = _session(sample)
    s.recode(1, "activity", 1)  # level 1 of the hierarchy
    s.recode(1, "size", sample / "size3.grc")
    safe = np.flatnonzero(s.table(1).status == 1)
    s.set_status(1, safe[:1], "unsafe")  # after the size recode: in the recoded codes
    s.undo_recode(1, "size")
    # the manual change named recoded size codes: gone with the recode it depended on, or
    # applied again when its cell still exists; the log and the table agree either way
    assert [a.variable for a in s.actions if isinstance(a, Recode)] == ["activity"]
    assert_replays(s, sample / "undo2.arb")


@pytest.mark.slow
def test_recode_and_undo_are_refused_after_protection(sample):
    s = _session(sample)
    s.recode(1, "size", sample / "size3.grc")
    s.protect(1, "HEUR")
    with pytest.raises(SpecificationError, match="undo the protection first"):
        s.undo_recode(1, "size")
    s.undo_protection(1)
    s.undo_recode(1, "size")
    assert not any(isinstance(a, Protect | Recode) for a in s.actions)


# ---------------------------------------------------------------------- typed recodes
def test_typed_recode_is_written_beside_the_batch_file(sample, tmp_path):
    s = _session(sample)
    text = (sample / "size3.grc").read_text()
    s.recode_text(1, "size", text, folder=sample)  # typed in the dialog: no file of its own
    out = tmp_path / "out"
    out.mkdir()
    arb = out / "typed.arb"
    files = write_batch_file(s, arb)
    side = out / "typed_recode1_size.grc"
    assert side in files and side.is_file()
    assert f'<RECODE> 1, size, "{side.name}"' in arb.read_text()
    # its <CODELIST> still finds the labels from the batch file's folder
    assert f'<CODELIST> "{sample / "size3.cdl"}"' in side.read_text()
    again = assert_replays(s, arb)
    assert again.table(1).dims[1].labels == s.table(1).dims[1].labels


def test_recode_file_named_when_unchanged_else_written_beside(sample):
    s = _session(sample)
    s.recode(1, "size", sample / "size3.grc")
    assert f'<RECODE> 1, size, "{sample / "size3.grc"}"' in batch_lines(s)
    (sample / "size3.grc").write_text('<CODELIST> "size3.cdl"\n1: 1-3\n2: 4-6\n')  # edited
    lines = batch_lines(s)
    assert '<RECODE> 1, size, "batch_recode1_size.grc"' in lines  # the text that was used


# ---------------------------------------------------------------------- bug 2: linked
def test_linked_opt_batch_file_runs(sample):
    """Linked OPT was written as `OPT(0, 1)`, which the batch reader refused."""
    s = _session(sample, *LINKED)
    s.protect_linked("OPT", {"max_minutes": 1})
    assert "<SUPPRESS> OPT(0, 1)" in batch_lines(s)
    assert_replays(s, sample / "linked.arb")


@pytest.mark.parametrize("method", registry.linked_names())
def test_every_linked_method_replays(sample, method):
    s = _session(sample, *LINKED)
    names = {f.name for f in registry.get(method).params.fields()}
    s.protect_linked(method, {"max_minutes": 1} if "max_minutes" in names else {})
    assert any(line.startswith(f"<SUPPRESS> {method}(0") for line in batch_lines(s))
    assert_replays(s, sample / "linked.arb")


def test_undo_of_a_linked_table_undoes_the_set(sample):
    s = _session(sample, *LINKED)
    s.protect_linked("OPT", {"max_minutes": 1})
    assert s.linked == [1, 2]
    s.undo_protection(2)
    assert not any(isinstance(a, Protect) for a in s.actions) and s.linked == []
    for t in s.tables:
        assert not ((t.status == 11) | (t.status == 12)).any() and t.protection is None
    assert_replays(s, sample / "unlinked.arb")


# ---------------------------------------------------------------------- manual changes
@pytest.mark.slow
def test_manual_changes_replay_in_their_place(sample):
    """A change made after a protection is replayed after it (it was replayed first)."""
    s = _session(sample)
    safe = np.flatnonzero(s.table(1).status == 1)
    s.set_status(1, safe[:1], "protected")
    s.protect(1, "HEUR")
    s.set_cost(1, safe[3:5], 55.0)
    lines = batch_lines(s)
    kinds = [ln.split()[0] + (ln.split()[1][:5] if "SUPPRESS" in ln else "") for ln in lines]
    first, second = (k for k, ln in enumerate(lines) if "_manual1_" in ln)
    sup = next(k for k, ln in enumerate(lines) if ln.startswith("<SUPPRESS> HEUR(1"))
    assert first < sup < second, kinds
    assert [type(a) for a in s.actions[-3:]] == [ChangeStatus, Protect, ChangeStatus]
    assert_replays(s, sample / "manual.arb")


@pytest.mark.slow
def test_undo_protection_removes_the_protection_only(sample):
    s = _session(sample)
    safe = np.flatnonzero(s.table(1).status == 1)
    s.protect(1, "HEUR")
    s.set_status(1, safe[:1], "protected")
    n = s.undo_protection(1)
    assert n > 0 and not any(isinstance(a, Protect) for a in s.actions)
    assert any(isinstance(a, ChangeStatus) for a in s.actions)
    assert_replays(s, sample / "undone.arb")


# ---------------------------------------------------------------------- any sequence
STEPS = st.lists(
    st.sampled_from(["unsafe", "safe", "cost", "recode", "level", "undo_recode", "heur", "undo"]),
    min_size=1,
    max_size=5,
)


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=STEPS, pick=st.integers(0, 10_000))
def test_any_sequence_of_actions_replays(sample, tmp_path_factory, steps, pick):
    s = _session(sample)
    rng = np.random.default_rng(pick)
    for step in steps:
        t = s.table(1)
        protected = ((t.status == 11) | (t.status == 12)).any()
        try:
            if step in ("unsafe", "safe"):
                cells = np.flatnonzero(t.status == (1 if step == "unsafe" else 9))
                if cells.size:
                    s.set_status(1, rng.choice(cells, 1), step)
            elif step == "cost":
                s.set_cost(1, rng.choice(t.n_cells, 2, replace=False), float(rng.integers(1, 99)))
            elif step == "recode" and not protected:
                s.recode(1, "size", sample / "size3.grc")
            elif step == "level" and not protected:
                s.recode(1, "activity", 1)
            elif step == "undo_recode" and not protected:
                s.undo_recode(1, "size")
            elif step == "heur":
                s.protect(1, "HEUR")
            elif step == "undo" and protected:
                s.undo_protection(1)
        except ArgusError:
            pass  # a change the rules refuse (e.g. a rule-unsafe cell made safe) is not logged
    assert_replays(s, tmp_path_factory.mktemp("seq") / "any.arb")
