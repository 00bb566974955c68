"""Session files (.aqs): round trip of the user's work, tamper and missing-data errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from argusqt.batch.arb import parse_specify_table
from argusqt.batch.render import batch_lines, write_batch_file
from argusqt.batch.runner import run_batch
from argusqt.errors import ArgusError, AuditError
from argusqt.model.table import ProtectionInfo
from argusqt.rules import changes
from argusqt.rules.parse import parse_safety_rule
from argusqt.session import Session
from argusqt.sessionfile import (
    SessionFileError,
    decode_array,
    encode_array,
    load_session,
    read_session_file,
    save_session,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture
def sample(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    for f in SAMPLE.iterdir():
        if f.is_file():
            shutil.copy(f, folder / f.name)
    return folder


def _worked_session(folder: Path) -> Session:
    """Two tables, table 2 recoded with size3.grc, a manual status change, HEUR on both."""
    s = Session()
    s.open_microdata(folder / "enterprise.asc", folder / "enterprise.rda")
    s.specify_table(parse_specify_table('"activity""region"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(3,20)|MAN(20)"))
    s.specify_table(parse_specify_table('"activity""size"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("NK(3,75)|FREQ(3,20)"))
    s.compute_tables()
    s.recode(2, "size", str(folder / "size3.grc"))
    t1 = s.table(1)
    safe = np.flatnonzero(t1.status == 1)
    changes.set_unsafe(t1, safe[-1:])  # a manual primary (status 9)
    changes.set_cost(t1, safe[-3:-2], 12345.0)
    s.protect(1, "HEUR")
    s.protect(2, "HEUR")
    return s


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A worked session saved once (HEUR on the sample data takes a few seconds)."""
    root = tmp_path_factory.mktemp("aqs")
    folder = root / "data"
    folder.mkdir()
    for f in SAMPLE.iterdir():
        if f.is_file():
            shutil.copy(f, folder / f.name)
    s = _worked_session(folder)
    path = root / "work.aqs"
    save_session(s, path)
    return s, path


def test_arrays_round_trip():
    a = np.array([1.5, -2.0, np.nan, 1e300])
    b = decode_array(encode_array(a, "float64"), "x", "a")
    assert np.array_equal(a, b, equal_nan=True)
    s = np.array([1, 14, 11], dtype=np.int8)
    assert np.array_equal(decode_array(encode_array(s, "int8"), "x", "s"), s)
    assert encode_array(None, "float64") is None


@pytest.mark.slow
def test_round_trip_restores_every_cell_and_audits(saved):
    s, path = saved
    doc = json.loads(path.read_text())
    assert doc["format"] == "argusqt-session" and doc["version"] == 2
    assert doc["data"]["path"] == "data/enterprise.asc"  # relative to the session file
    assert [r["variable"] for r in doc["tables"][1]["recodes"]] == ["size"]
    assert doc["tables"][1]["recodes"][0]["grc"].startswith("<CODELIST>")
    events = []
    loaded = load_session(path, progress=events.append)
    assert events
    assert len(loaded.tables) == 2
    assert [sp.rules for sp in loaded.specs] == [sp.rules for sp in s.specs]
    assert [sp.cost for sp in loaded.specs] == [sp.cost for sp in s.specs]
    for a, b in zip(s.tables, loaded.tables, strict=True):
        assert [d.codes for d in a.dims] == [d.codes for d in b.dims]
        assert np.array_equal(a.status, b.status)
        assert np.array_equal(a.lpl, b.lpl) and np.array_equal(a.upl, b.upl)
        assert np.array_equal(a.cost, b.cost)
        assert a.published is None and b.published is None
        assert b.protection.method == "HEUR"
        assert b.audit is not None and b.audit.ok
    assert (loaded.table(1).status == 9).sum() == (s.table(1).status == 9).sum() >= 1
    assert (loaded.table(1).cost == 12345.0).any()
    assert len(loaded.table(2).dims[1].codes) == len(s.table(2).dims[1].codes)
    assert loaded.table(2).recode_state.recodes == {"size": "size3.grc"}
    r = loaded.results[1]
    assert r.method == "HEUR" and r.n_secondary == s.results[1].n_secondary
    assert r.cost == pytest.approx(s.results[1].cost)
    assert loaded.actions == s.actions
    assert any("loaded" in str(e) for e in loaded.log)


def test_rounded_table_keeps_published_values(sample, tmp_path):
    s = Session()
    s.open_microdata(sample / "enterprise.asc", sample / "enterprise.rda")
    s.specify_table(parse_specify_table('"size"|<freq>|""|""'))
    s.set_safety_rules(parse_safety_rule("FREQ(3,20)"))
    s.compute_tables()
    t = s.table(1)
    t.published = np.round(t.value / 5) * 5  # as rounding leaves it
    t.protection = ProtectionInfo("RND", "round")
    save_session(s, tmp_path / "r.aqs")
    loaded = load_session(tmp_path / "r.aqs")
    assert np.array_equal(loaded.table(1).published, t.published)


def test_tampered_file_fails_the_audit(saved, tmp_path):
    _s, path = saved
    doc = json.loads(path.read_text())
    tab = doc["tables"][0]
    status = decode_array(tab["status"], "x", "status")
    sec = np.flatnonzero((status == 11) | (status == 12))
    assert sec.size
    status[sec] = 1  # publish every secondary suppression
    tab["status"] = encode_array(status, "int8")
    bad = tmp_path / "tampered.aqs"
    bad.write_text(json.dumps(doc))
    shutil.copytree(path.parent / "data", tmp_path / "data")
    with pytest.raises(AuditError, match="table 1 was saved as protected by HEUR") as err:
        load_session(bad)
    assert err.value.file == str(bad)


def test_missing_data_file_is_named(saved, tmp_path):
    _s, path = saved
    copy = tmp_path / "moved.aqs"
    shutil.copy(path, copy)
    doc = json.loads(copy.read_text())
    doc["data"]["absolute"] = str(tmp_path / "gone" / "enterprise.asc")
    copy.write_text(json.dumps(doc))
    with pytest.raises(SessionFileError, match="data file 'data/enterprise.asc' was not found"):
        load_session(copy)


def test_changed_data_is_refused(saved, tmp_path):
    _s, path = saved
    data = tmp_path / "data"
    shutil.copytree(path.parent / "data", data)
    lines = (data / "enterprise.asc").read_text().splitlines(keepends=True)
    (data / "enterprise.asc").write_text("".join(lines[:-50]))  # fewer records
    copy = tmp_path / "work.aqs"
    doc = json.loads(path.read_text())
    doc["data"]["absolute"] = doc["metadata"]["absolute"] = None
    copy.write_text(json.dumps(doc))
    with pytest.raises(SessionFileError, match="changed since the session was saved") as err:
        load_session(copy)
    assert err.value.file == str(copy)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "expected JSON"),
        ('{"format": "other"}', "not an argusqt session file"),
        ('{"format": "argusqt-session", "version": 99}', "version 99"),
    ],
)
def test_bad_files(tmp_path, text, expected):
    p = tmp_path / "bad.aqs"
    p.write_text(text)
    with pytest.raises(ArgusError, match=expected):
        read_session_file(p)
    with pytest.raises(SessionFileError):
        load_session(tmp_path / "none.aqs")


def test_nothing_to_save(tmp_path):
    with pytest.raises(ArgusError, match="nothing to save"):
        save_session(Session(), tmp_path / "x.aqs")


def test_tabular_session_with_cta(shared_data, tmp_path):
    """Tabular input (READTABLE mode kept) adjusted by CTA: published values come back."""
    folder = tmp_path / "ex1"
    shutil.copytree(shared_data / "batch_ex1", folder)
    s = Session()
    s.open_table_data(folder / "tabdata_ex1.tab", folder / "metadata_ex1.rda")
    s.specify_table(parse_specify_table('"region""gender"|"freq"|""|""'))
    s.set_safety_rules(parse_safety_rule("MAN(20)"))
    s.compute_tables()
    s.protect(1, "CTA")
    assert s.table(1).published is not None
    save_session(s, tmp_path / "tab.aqs")
    doc = json.loads((tmp_path / "tab.aqs").read_text())
    assert doc["kind"] == "tabular" and doc["sources"][0]["table"] == 1
    loaded = load_session(tmp_path / "tab.aqs")
    assert loaded.kind == "tabular" and loaded.read_mode == s.read_mode
    a, b = s.table(1), loaded.table(1)
    assert np.array_equal(a.status, b.status)
    assert np.array_equal(a.published, b.published)
    assert b.protection.method == "CTA" and loaded.results[1].method == "CTA"
    assert batch_lines(loaded) == batch_lines(s)


@pytest.mark.slow
def test_changed_after_protection_is_not_claimed_protected(sample, tmp_path):
    """Undo secondaries after HEUR: saved without the method; loads without an audit error."""
    s = Session()
    s.open_microdata(sample / "enterprise.asc", sample / "enterprise.rda")
    s.specify_table(parse_specify_table('"activity""region"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(3,20)"))
    s.compute_tables()
    s.protect(1, "HEUR")
    t = s.table(1)
    changes.undo_secondary(t)
    safe = np.flatnonzero(t.status == 1)
    changes.set_secondary(t, safe[:2], manual=True)  # a-priori-like secondaries, unprotected
    save_session(s, tmp_path / "u.aqs")
    doc = json.loads((tmp_path / "u.aqs").read_text())
    assert doc["tables"][0]["method"] is None and doc["tables"][0]["changed_after_protection"]
    loaded = load_session(tmp_path / "u.aqs")
    b = loaded.table(1)
    assert np.array_equal(b.status, t.status)
    assert b.protection is None and b.audit is None and 1 not in loaded.results
    assert any("not a verified protection" in str(e) for e in loaded.log)


def test_published_primary_is_refused(saved, tmp_path):
    """A primary cell edited to 'safe' in the file is caught before any audit."""
    _s, path = saved
    doc = json.loads(path.read_text())
    tab = doc["tables"][1]
    status = decode_array(tab["status"], "x", "status")
    prim = np.flatnonzero((status >= 3) & (status <= 6))
    status[prim[0]] = 1
    tab["status"] = encode_array(status, "int8")
    bad = tmp_path / "tampered.aqs"
    bad.write_text(json.dumps(doc))
    shutil.copytree(path.parent / "data", tmp_path / "data")
    with pytest.raises(SessionFileError, match="table 2: cell .* is unsafe by the safety rules"):
        load_session(bad)


@pytest.mark.slow
def test_manual_changes_survive_save_and_load(sample, tmp_path):
    """Bug: manual status changes were not saved, so a batch file written after loading
    replayed the session without them."""
    s = Session()
    s.open_microdata(sample / "enterprise.asc", sample / "enterprise.rda")
    s.specify_table(parse_specify_table('"activity""region"|"turnover"||'))
    s.set_safety_rules(parse_safety_rule("P(15,1)|FREQ(3,20)"))
    s.compute_tables()
    safe = np.flatnonzero(s.table(1).status == 1)
    s.set_status(1, safe[-1:], "unsafe")
    s.set_status(1, safe[:2], "protected")
    s.set_cost(1, safe[5:7], 777.0)
    s.protect(1, "HEUR")
    save_session(s, tmp_path / "w.aqs")
    doc = json.loads((tmp_path / "w.aqs").read_text())
    assert [a["action"] for a in doc["actions"]] == ["change_status"] * 3 + ["protect"]
    assert doc["actions"][-1]["params"]["max_minutes"] == 10
    loaded = load_session(tmp_path / "w.aqs")
    assert loaded.actions == s.actions
    arb = tmp_path / "again.arb"
    write_batch_file(loaded, arb)
    text = arb.read_text()
    assert '<APRIORI> "again_manual1_1.hst", 1, ",", 0, 0' in text
    assert text.index("again_manual1_1.hst") < text.index("<SUPPRESS> HEUR(1")
    out = run_batch(arb)
    assert out.ok, out.error
    np.testing.assert_array_equal(out.session.table(1).status, s.table(1).status)
    np.testing.assert_allclose(out.session.table(1).cost, s.table(1).cost)


def test_version_1_files_are_read(saved, tmp_path):
    """Version 1 kept batch lines ("history") and not the manual changes: read, said so."""
    s, path = saved
    doc = json.loads(path.read_text())
    lines = batch_lines(s)
    doc["version"] = 1
    doc["history"] = [ln for ln in lines if ln.startswith(("<RECODE>", "<SUPPRESS>"))]
    doc["history"].insert(1, "<APRIORI> @manual:1")
    del doc["actions"]
    old = tmp_path / "v1.aqs"
    old.write_text(json.dumps(doc))
    loaded = load_session(old)
    assert [type(a).__name__ for a in loaded.actions[-3:]] == ["Recode", "Protect", "Protect"]
    assert loaded.actions[-1].params.max_minutes == 10
    assert any("version-1 session file" in e.message for e in loaded.log)
    assert batch_lines(loaded)[-3:] == lines[-3:]


def test_a_newer_or_renamed_parameter_is_a_clear_error(saved, tmp_path):
    s, path = saved
    doc = json.loads(path.read_text())
    doc["actions"][-1]["params"]["maxtime"] = 3
    bad = tmp_path / "bad.aqs"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SessionFileError, match="action .*: HEUR: unknown parameter 'maxtime'"):
        load_session(bad)
