"""A reloaded session gives each protected table the publication gate's verdict
(docs/design.md, D-51): a table saved NOT PUBLISHABLE (an unsafe sum of suppressed cells,
alone or in a linked set) comes back NOT PUBLISHABLE and writing it is refused; a publishable
one comes back "protected (publication audit passed)". Never "protected" after the outsider
audit alone (rule 1: a printed verdict is true)."""

from __future__ import annotations

import pytest
from test_issue27_linked_verdict import linked_session, own_unsafe_sums

import argusqt
from argusqt.errors import PublicationError
from argusqt.export.gate import STATE_TEXT
from argusqt.sessionfile import load_session, save_session
from argusqt.workflow.output import table_protection


def _reload(s, tmp_path):
    path = tmp_path / "work.aqs"
    save_session(s, path)
    return load_session(path)


def _refused_everywhere(s, no: int, tmp_path) -> None:
    """Every door of the reloaded session says NOT PUBLISHABLE and writing is refused."""
    assert s.protection_state(no) == "refused"
    res = s.results[no]
    assert res.verdict is not None and not res.verdict.ok
    assert any(str(e).find(f"Table {no}: NOT PUBLISHABLE") >= 0 for e in s.log)
    out = tmp_path / f"t{no}.csv"
    with pytest.raises(PublicationError):
        s.write_table(no, 3, "", out)
    assert not out.exists()


@pytest.mark.usefixtures("older_insiders")
def test_single_table_saved_not_publishable_reloads_not_publishable(tmp_path):
    s = linked_session()  # B08 and B09 protected by hand: the sum B05+B06+B07 stays
    # HEUR: MOD's polish keeps the rule inside since D-58 and, as OPT, suppresses the total
    # B instead (that sum then follows only from two relations together:
    # argusqt/docs/rules.md §3.11)
    s.protect(1, "HEUR")
    assert s.protection_state(1) == "refused"
    assert own_unsafe_sums(s.table(1)) == [{"B05", "B06", "B07"}]  # the test's own attacker
    again = _reload(s, tmp_path)
    assert own_unsafe_sums(again.table(1)) == [{"B05", "B06", "B07"}]
    _refused_everywhere(again, 1, tmp_path)
    api = argusqt.open_session(tmp_path / "work.aqs", progress=False)  # the API's door
    assert not api.tables[0].audit().ok


@pytest.mark.usefixtures("older_insiders")
@pytest.mark.parametrize("method", ["MOD", "GH"])
def test_linked_tables_saved_not_publishable_reload_not_publishable(method, tmp_path):
    s = linked_session()
    s.protect_linked(method)
    assert [s.protection_state(n) for n in (1, 2)] == ["refused", "refused"]
    again = _reload(s, tmp_path)
    assert again.linked == [1, 2]
    for no in (1, 2):
        assert own_unsafe_sums(again.table(no)) == [{"B05", "B06", "B07"}]
        _refused_everywhere(again, no, tmp_path)


def test_publishable_tables_reload_cleared_and_write(tmp_path):
    s = linked_session(pinned=False)  # HEUR alone on each table, nothing pinned
    assert [s.protection_state(n) for n in (1, 2)] == ["cleared", "cleared"]
    again = _reload(s, tmp_path)
    for no in (1, 2):
        assert again.protection_state(no) == "cleared"
        assert table_protection(again.table(no)) == ("cleared", STATE_TEXT["cleared"])
        assert again.results[no].verdict is not None and again.results[no].verdict.ok
        assert own_unsafe_sums(again.table(no)) == []
        out = tmp_path / f"t{no}.csv"
        again.write_table(no, 3, "", out)
        assert out.exists()


def test_linked_publishable_set_reloads_cleared(tmp_path):
    s = linked_session(pinned=False)
    for no in (1, 2):
        s.undo_protection(no)
    s.protect_linked("GH")
    states = [s.protection_state(n) for n in (1, 2)]
    if states != ["cleared", "cleared"]:
        pytest.fail(f"GH on the unpinned linked set should be publishable, got {states}")
    again = _reload(s, tmp_path)
    assert again.linked == [1, 2]
    assert [again.protection_state(n) for n in (1, 2)] == ["cleared", "cleared"]
    assert again.linked_cleared is not None
