"""Session.update_tables (recompute only what changed) and recoding a variable in every table
that uses it, on the bundled sample data; each result is replayed from the written batch file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from argusqt.actions import ComputeTables, Recode, SpecifyTable
from argusqt.errors import SpecificationError
from argusqt.model.rulespec import PRule, SafetyRules
from argusqt.model.status import Status, is_secondary
from argusqt.model.table import TableSpec
from argusqt.session import Session

RULES = SafetyRules(p_individual=[PRule(15, 100, 1)])


def spec(*names: str) -> TableSpec:
    return TableSpec(list(names), "turnover", rules=RULES)


@pytest.fixture
def session(sample: Path) -> Session:
    s = Session()
    s.open_microdata(sample / "enterprise.asc", sample / "enterprise.rda")
    s.specify_tables([spec("region", "size")])
    return s


def replays(s: Session, folder: Path) -> None:
    from argusqt.batch.render import write_batch_file
    from argusqt.batch.runner import run_batch

    arb = folder / "replay.arb"
    write_batch_file(s, arb)
    out = run_batch(arb)
    assert out.ok, out.error
    for a, b in zip(s.tables, out.session.tables, strict=True):
        assert [list(d.codes) for d in a.dims] == [list(d.codes) for d in b.dims]
        assert np.array_equal(a.status, b.status)


def test_adding_a_table_keeps_the_other_with_its_recode_and_changes(session, sample, tmp_path):
    s = session
    s.recode(1, "size", sample / "size3.grc")
    t1 = s.table(1)
    safe = int(np.flatnonzero(t1.status == Status.SAFE)[-1])
    s.set_status(1, [safe], "protected")
    before = t1.status.copy()
    assert s.work_lost_by([spec("region", "size"), spec("activity", "size")]) == []

    fresh = s.update_tables([spec("region", "size"), spec("activity", "size")])

    assert fresh == [2]
    assert s.table(1) is t1 and np.array_equal(s.table(1).status, before)
    assert len(s.table(2).dims[1]) > len(t1.dims[1])  # the new table is not recoded
    kinds = [type(a).__name__ for a in s.actions]
    assert kinds == [
        "OpenMicrodata", "SpecifyTable", "SpecifyTable", "ComputeTables", "Recode", "ChangeStatus"
    ]  # fmt: skip
    assert "Tables kept as they were" in s.log[-1].message
    replays(s, tmp_path)


def test_removing_the_first_table_renumbers_the_kept_one(session, sample, tmp_path):
    s = session
    s.update_tables([spec("region", "size"), spec("activity", "size")])
    s.recode(2, "size", sample / "size3.grc")
    t2 = s.table(2)
    assert s.work_lost_by([spec("activity", "size")]) == []
    assert s.update_tables([spec("activity", "size")]) == []
    assert s.tables == [t2]
    assert [a.table for a in s.actions if isinstance(a, Recode)] == [1]
    replays(s, tmp_path)


def test_a_changed_table_is_computed_again_and_its_work_is_named(session, sample):
    s = session
    s.recode(1, "size", sample / "size3.grc")
    other = TableSpec(["region", "size"], "turnover", rules=SafetyRules(p_individual=[PRule(20)]))
    assert s.work_lost_by([other]) == [1]
    assert s.update_tables([other]) == [1]
    assert not any(isinstance(a, Recode) for a in s.actions)
    assert [type(a) for a in s.actions[1:]] == [SpecifyTable, ComputeTables]


def test_unchanged_specifications_compute_nothing(session):
    t1 = session.table(1)
    assert session.update_tables([spec("region", "size")]) == []
    assert session.table(1) is t1


def test_a_recode_reaches_every_table_that_uses_the_variable(session, sample, tmp_path):
    s = session
    s.update_tables([spec("region", "size"), spec("activity", "size")])
    n = len(s.table(1).dims[1])
    assert s.tables_using("SIZE") == [1, 2]
    assert s.recode_tables("size", sample / "size3.grc") == [1, 2]
    for t in s.tables:
        assert [c.strip() for c in t.dims[1].codes[:4]] == ["Total", "1", "2", "3"]
        assert t.dims[1].label(1) == "small (0-9)"  # from the <CODELIST> of size3.grc
    assert s.undo_recode_tables("size", only=2) == [2]
    assert len(s.table(1).dims[1]) < n and len(s.table(2).dims[1]) == n
    replays(s, tmp_path)


@pytest.mark.slow
def test_a_recode_across_tables_is_all_or_none(session, sample):
    s = session
    s.update_tables([spec("region", "size"), spec("activity", "size")])
    s.protect(2, "HEUR")
    t1 = s.table(1)
    with pytest.raises(SpecificationError, match="table 2 has been protected") as refused:
        s.recode_tables("size", sample / "size3.grc")
    assert "nothing was recoded" in str(refused.value)
    assert "recode table 1 only" in str(refused.value)
    assert s.table(1) is t1  # table 1 was not recoded either
    assert s.recode_tables("size", sample / "size3.grc", only=1) == [1]
    with pytest.raises(SpecificationError, match="does not use"):
        s.recode_tables("activity", 1, only=1)


def test_a_recode_across_tables_is_one_undo_step(session, sample):
    s = session
    s.update_tables([spec("region", "size"), spec("activity", "size")])
    before = [len(t.dims[1]) for t in s.tables]
    s.recode_tables("size", sample / "size3.grc")
    assert s.undo_label() == "recode size in tables 1, 2"
    assert sorted(s.undo()) == [1, 2]
    assert [len(t.dims[1]) for t in s.tables] == before
    assert not any(isinstance(a, Recode) for a in s.actions)
    s.redo()
    assert all(len(t.dims[1]) < n for t, n in zip(s.tables, before, strict=True))
    s.update_tables([spec("region", "size")])  # table 2 removed: the steps named it
    assert s.undo_label() is None


def test_tables_protected_together_are_kept_only_as_a_whole_set(session):
    s = session
    s.update_tables([spec("region", "size"), spec("activity", "size")])
    s.protect_linked("GH")
    both = [spec("region", "size"), spec("activity", "size")]
    assert s.update_tables(both) == []  # nothing changed: the joint pattern stays
    assert s.linked == [1, 2]
    three = [*both, spec("region", "activity")]
    assert s.tables_kept(three) == {}  # a joint pattern of two tables is not one of three
    assert s.work_lost_by(three) == [1, 2]
    assert s.update_tables(three) == [1, 2, 3]
    assert s.linked == [] and not is_secondary(s.table(1).status).any()
