"""Atomic outputs: our stale temp files are cleaned at the next write, only ours and only when no
live writer holds them; the intermediate set (.tab/.rda/.hrc) is all old or all new after a crash."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import argusqt.io.atomic as atomic
from argusqt.export.intermediate import write_intermediate
from argusqt.io.atomic import atomic_write_text, settle_sets, tidy_folder
from argusqt.model.codelist import CodeList
from argusqt.model.table import Table, TableSpec
from argusqt.session import Session

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def make_table(version: int, n_leaves: int = 6) -> Table:
    """A hierarchical × flat table whose codes, values and hierarchy depend on `version`."""
    groups = [(1, f"V{version}G{g}") for g in range(2)]
    entries = []
    for _, g in groups:
        entries += [(1, g)] + [(2, f"{g}L{k}") for k in range(n_leaves)]
    rows = CodeList.from_tree("reg", entries)
    cols = CodeList.flat("act", [f"A{j}" for j in range(5)])
    n = len(rows) * len(cols)
    v = np.full(n, float(version + 1))
    t = Table(
        spec=TableSpec(["reg", "act"], "turnover"),
        dims=[rows, cols],
        value=v,
        freq=np.ones(n),
        shadow=v.copy(),
        cost_raw=v.copy(),
        top=np.zeros((n, 1)),
        decimals=2,
    )
    t.status = np.ones(n, dtype=np.int8)
    return t


def set_bytes(folder: Path) -> dict[str, bytes]:
    """The visible files of a folder (hidden temp files aside)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.startswith(".")}


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def expected_set(tmp_path: Path, version: int, n_leaves: int = 6) -> dict[str, bytes]:
    ref = tmp_path / f"ref{version}_{n_leaves}"
    ref.mkdir()
    write_intermediate(make_table(version, n_leaves), ref / "set.tab")
    return set_bytes(ref)


# ------------------------------------------------------------------------- stale temp files
def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_next_write_cleans_only_our_stale_temps(tmp_path):
    stale = tmp_path / ".big.csv.aqt-abcd1234.tmp"
    young = tmp_path / ".big.csv.aqt-young123.tmp"
    held = tmp_path / ".big2.xlsx.aqt-held1234.tmp"
    foreign = [tmp_path / ".notes.tmp", tmp_path / ".big.csv.abcd1234.tmp", tmp_path / "x.tmp"]
    for p in (stale, young, held, *foreign):
        p.write_text("partial")
    for p in (stale, held, *foreign):
        _age(p, 3600 * 24)
    # another live writer holds its temp (flock by a second process)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); "
            "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(120)",
            str(held),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        atomic_write_text(tmp_path / "other.csv", "a,b\n")
        assert not stale.exists(), "an abandoned temp of ours is removed"
        assert young.exists(), "a young temp may belong to a writer about to lock it"
        assert held.exists(), "a temp a live process holds is never removed"
        assert all(p.exists() for p in foreign), "files that are not ours stay"
    finally:
        holder.kill()
        holder.wait()
    atomic_write_text(tmp_path / "other.csv", "a,b\n")
    assert not held.exists(), "once its writer is gone, the temp is stale"


_SLOW_WRITER = """
import sys, time
sys.path[:0] = [{root!r}, {tests!r}]
import argusqt.io.atomic as atomic
real_fsync = atomic.os.fsync
def stuck(fd):
    print("writing", flush=True)
    time.sleep(300)
atomic.os.fsync = stuck
atomic.atomic_write_text(sys.argv[1], "new content\\n" * 1000)
"""


def test_killed_writer_leaves_target_intact_and_its_temp_is_cleaned(tmp_path, monkeypatch):
    target = tmp_path / "big.csv"
    target.write_text("old content\n")
    child = subprocess.Popen(
        [sys.executable, "-c", _SLOW_WRITER.format(root=str(ROOT), tests=str(TESTS)), str(target)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "writing"
        temps = [p for p in hidden(tmp_path) if p.startswith(".big.csv.aqt-")]
        assert len(temps) == 1
        monkeypatch.setattr(atomic, "GRACE_SECONDS", -1.0)  # no grace: only the lock protects
        atomic_write_text(tmp_path / "other.csv", "x\n")  # a second writer in the same folder
        assert (tmp_path / temps[0]).exists(), "the live writer's temp survives"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert target.read_text() == "old content\n"
    atomic_write_text(tmp_path / "other.csv", "y\n")
    assert hidden(tmp_path) == [], "the killed writer's temp is gone after the next write"


# ------------------------------------------------------------------ the intermediate file set
def test_failure_while_writing_the_temps_leaves_the_old_set(tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    write_intermediate(make_table(1), folder / "set.tab")
    old = set_bytes(folder)
    assert sorted(old) == ["set.rda", "set.tab", "set_reg.hrc"]
    real = atomic._write_temp
    calls = []

    def failing(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full (injected)")
        return real(path, data)

    monkeypatch.setattr(atomic, "_write_temp", failing)
    with pytest.raises(OSError, match="injected"):
        write_intermediate(make_table(2), folder / "set.tab")
    assert set_bytes(folder) == old and hidden(folder) == []


def test_failure_between_the_renames_puts_the_old_set_back(tmp_path, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    write_intermediate(make_table(1), folder / "set.tab")
    old = set_bytes(folder)
    real = os.replace
    calls = []

    def failing(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # one member renamed, the next one fails
            raise PermissionError("injected")
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", failing)
    with pytest.raises(PermissionError, match="injected"):
        write_intermediate(make_table(2), folder / "set.tab")
    monkeypatch.setattr(atomic.os, "replace", real)
    assert set_bytes(folder) == old and hidden(folder) == []
    write_intermediate(make_table(2), folder / "set.tab")
    assert set_bytes(folder) == expected_set(tmp_path, 2)


_DIE_IN_RENAMES = """
import os, sys
sys.path[:0] = [{root!r}, {tests!r}]
import argusqt.io.atomic as atomic
from argusqt.export.intermediate import write_intermediate
from test_atomic_files import make_table
real = os.replace
calls = []
def dying(src, dst):
    calls.append(dst)
    if str(dst).endswith(".tab") or len(calls) == 2:  # after the commit, between two renames
        os._exit(9)
    return real(src, dst)
atomic.os.replace = dying
write_intermediate(make_table(2), sys.argv[1])
"""


def test_process_dying_between_the_renames_is_settled_to_the_new_set(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    write_intermediate(make_table(1), folder / "set.tab")
    old = set_bytes(folder)
    code = _DIE_IN_RENAMES.format(root=str(ROOT), tests=str(TESTS))
    run = subprocess.run([sys.executable, "-c", code, str(folder / "set.tab")], check=False)
    assert run.returncode == 9
    assert set_bytes(folder) != old  # mixed on disk ...
    assert any(".aqt-set-" in n for n in hidden(folder))  # ... with the journal of the commit
    ses = Session()  # opening the table settles the journal first: the reader sees the new set
    ses.open_table_data(folder / "set.tab", folder / "set.rda")
    assert set_bytes(folder) == expected_set(tmp_path, 2)
    assert hidden(folder) == []


_LOOP_WRITER = """
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from argusqt.export.intermediate import write_intermediate
from test_atomic_files import make_table
tables = [make_table(v, {n}) for v in (1, 2)]
print("ready", flush=True)
k = 0
while True:
    write_intermediate(tables[k % 2], sys.argv[1])
    k += 1
"""


@pytest.mark.slow
def test_writer_killed_at_random_moments_leaves_old_or_new_set(tmp_path, monkeypatch):
    """A real process writing sets A and B in turn, killed 12 times at random moments."""
    n = 400  # ~16k cells: a set takes some tens of milliseconds to write
    sets = [expected_set(tmp_path, v, n) for v in (1, 2)]
    folder = tmp_path / "out"
    folder.mkdir()
    code = _LOOP_WRITER.format(root=str(ROOT), tests=str(TESTS), n=n)
    rng = random.Random(16)
    monkeypatch.setattr(atomic, "GRACE_SECONDS", -1.0)
    seen = set()
    for _ in range(12):
        child = subprocess.Popen(
            [sys.executable, "-c", code, str(folder / "set.tab")], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait()
        settle_sets(folder)
        now = set_bytes(folder)
        if now:  # nothing yet when the first kill came before the first commit
            assert now in sets, "a mixed set after a kill"
            seen.add(sets.index(now))
        tidy_folder(folder)
        assert hidden(folder) == []
    assert seen, "the writer never completed a set"


def test_journal_written_in_part_means_no_commit(tmp_path):
    """A writer killed while writing its journal renamed nothing: the journal is dropped."""
    folder = tmp_path / "out"
    folder.mkdir()
    write_intermediate(make_table(1), folder / "set.tab")
    old = set_bytes(folder)
    temp = folder / ".set.tab.aqt-abcd1234.tmp"
    temp.write_text("new, complete")
    journal = folder / ".set_reg.hrc.aqt-set-abcd1234.json"
    journal.write_text('{"renames": [[".set.tab.aqt-abcd1234.tmp", "set.t')
    settle_sets(folder)
    assert not journal.exists() and set_bytes(folder) == old


def test_temp_files_are_made_as_tempfile_makes_them(tmp_path, monkeypatch):
    """The temp file without tempfile's import (D-114): its open flags and mode, a name our
    tidying recognises, and another name when the first is taken."""
    import stat
    import tempfile

    assert atomic._TEMP_FLAGS == tempfile._bin_openflags
    fd, name = atomic._mkstemp(tmp_path, ".out.txt.aqt-", ".tmp")
    os.close(fd)
    assert Path(name).parent == tmp_path.resolve() and os.path.isabs(name)
    assert atomic._OURS.match(Path(name).name)
    assert stat.S_IMODE(os.stat(name).st_mode) == 0o600
    draws = iter([bytes(8), bytes(8), bytes([1] * 8)])  # the first name twice: taken
    monkeypatch.setattr(atomic.os, "urandom", lambda k: next(draws))
    first = atomic._mkstemp(tmp_path, ".a.aqt-", ".tmp")
    second = atomic._mkstemp(tmp_path, ".a.aqt-", ".tmp")
    for fd, _ in (first, second):
        os.close(fd)
    assert Path(first[1]).name == ".a.aqt-aaaaaaaa.tmp"
    assert Path(second[1]).name == ".a.aqt-bbbbbbbb.tmp"
    monkeypatch.setattr(atomic, "_TEMP_TRIES", 2)
    monkeypatch.setattr(atomic.os, "urandom", lambda k: bytes(8))
    with pytest.raises(FileExistsError):
        atomic._mkstemp(tmp_path, ".a.aqt-", ".tmp")
