"""Temp files of a killed run (`.NAME.aqt-XXXXXXXX.tmp`, some confidential) do not linger:
removed on SIGTERM and at exit, at the start of a batch run where it writes, and by
`argusqt tidy` (issue 23 item 14)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from argusqt.batch.runner import run_batch
from argusqt.cli import main
from argusqt.io.atomic import stale_files

ROOT = Path(__file__).resolve().parents[1]


def _left_by_a_killed_run(folder: Path, name: str = "out.txt") -> Path:
    """A temp file as a killed writer leaves it: unlocked, older than the writers' grace."""
    tmp = folder / f".{name}.aqt-k1ll3d00.tmp"
    tmp.write_text('"A","female",189.40,3\n')  # true values: confidential
    os.utime(tmp, (1_000_000_000, 1_000_000_000))
    return tmp


def _child(code: str, folder: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


WRITE_THEN = (
    "import os, signal, sys\n"
    "from pathlib import Path\n"
    "from argusqt.io.atomic import _write_temp, install_cleanup\n"
    "install_cleanup()\n"
    "fd, tmp = _write_temp(Path('out.txt').resolve(), b'secret')\n"
    "assert os.path.exists(tmp)\n"
)


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX signals")
def test_sigterm_mid_write_leaves_no_temp_file(tmp_path):
    proc = _child(WRITE_THEN + "os.kill(os.getpid(), signal.SIGTERM)\nsignal.pause()\n", tmp_path)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_exit_mid_write_leaves_no_temp_file(tmp_path):
    proc = _child(WRITE_THEN + "sys.exit(3)\n", tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_batch_run_removes_stale_temps_where_it_writes(ex2):
    (ex2 / "out").mkdir()
    stale = [_left_by_a_killed_run(ex2), _left_by_a_killed_run(ex2 / "out", "t.txt")]
    arb = ex2 / "x.arb"
    arb.write_text(
        '<OPENMICRODATA> "microdata_ex2.asc"\n<OPENMETADATA> "metadata_ex2.rda"\n'
        '<SPECIFYTABLE> "region""gender"|"num1"|""|""\n<SAFETYRULE> FREQ(5,20)|P(20,5)\n'
        '<READMICRODATA>\n<WRITETABLE> (1, 3, AS+, "out/t.txt")\n'
    )
    out = run_batch(arb)
    assert out.ok, out.error
    assert not any(p.exists() for p in stale)
    said = [e.message for e in out.session.log if "interrupted earlier run" in e.message]
    assert len(said) == 2 and all(".aqt-k1ll3d00.tmp" in m for m in said)


def test_a_live_writers_temp_is_kept(tmp_path):
    """Young (within the grace) or locked temps belong to a writer at work: not stale."""
    young = tmp_path / ".x.aqt-y0ung000.tmp"
    young.write_text("x")
    assert stale_files(tmp_path) == []
    old = _left_by_a_killed_run(tmp_path)
    assert stale_files(tmp_path) == [old]


def test_tidy_command_lists_and_removes(tmp_path, capsys):
    old = _left_by_a_killed_run(tmp_path)
    mine = tmp_path / ".notes.txt"  # hidden, but not ours
    mine.write_text("keep")
    assert main(["tidy", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"removed: {old}" in out and "1 stale temporary file(s)" in out
    assert not old.exists() and mine.exists()
