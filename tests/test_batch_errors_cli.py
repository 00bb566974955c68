"""`argusqt batch` on broken inputs exits non-zero naming the file, the line and the problem.

One case per acceptance item of the core issue: a bad `.rda` line, a missing file, an unknown
variable, a non-numeric value in a numeric field, a malformed SAFETYRULE.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from confidential_helpers import body_lines

ARB = """\
<OPENMICRODATA> "microdata_ex2.asc"
<OPENMETADATA> "metadata_ex2.rda"
<SPECIFYTABLE> "region""gender"|"num1"|""|""
<SAFETYRULE> FREQ(5,20)|P(20,5)|
<READMICRODATA>
<WRITETABLE> (1, 3, AS+FL+, "out.txt")
"""


@pytest.fixture
def ex2(shared_data, tmp_path) -> Path:
    folder = tmp_path / "ex2"
    shutil.copytree(shared_data / "batch_ex2", folder)
    return folder


def _batch(folder: Path, arb_text: str) -> subprocess.CompletedProcess:
    arb = folder / "job.arb"
    arb.write_text(arb_text)
    # this checkout's argusqt, not whichever the venv finds from `folder`
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    return subprocess.run(
        [sys.executable, "-m", "argusqt", "batch", str(arb)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
        env=env,
    )


def _assert_fails(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    for frag in fragments:
        assert frag in proc.stderr, f"{frag!r} not in: {proc.stderr}"
    assert not (Path(proc.args[-1]).parent / "out.txt").exists()


def test_reference_run_succeeds(ex2):
    proc = _batch(ex2, ARB)
    assert proc.returncode == 0, proc.stderr
    _header, total = body_lines(ex2 / "out.txt")[:2]  # AS+: marked by its sidecar
    assert total == '"Total","Total",10484.95,1'


def test_bad_rda_line(ex2):
    rda = ex2 / "metadata_ex2.rda"
    lines = rda.read_text().splitlines()
    lines[1] = "region one"  # width must be a number
    rda.write_text("\n".join(lines) + "\n")
    _assert_fails(_batch(ex2, ARB), "job.arb, line 2", "metadata_ex2.rda", "line 2", "one")


def test_missing_file(ex2):
    _assert_fails(
        _batch(ex2, ARB.replace("microdata_ex2.asc", "absent.asc")), "job.arb, line 1", "absent.asc"
    )


def test_unknown_variable(ex2):
    _assert_fails(_batch(ex2, ARB.replace('"gender"', '"sex"')), "job.arb, line 3", "sex")


def test_non_numeric_value(ex2):
    data = ex2 / "microdata_ex2.asc"
    lines = data.read_text().splitlines()
    lines[4] = lines[4].rsplit(",", 2)[0] + ",12x.5," + lines[4].rsplit(",", 1)[1]
    data.write_text("\n".join(lines) + "\n")
    _assert_fails(_batch(ex2, ARB), "job.arb, line", "microdata_ex2.asc", "line 5", "12x.5")


def test_malformed_safetyrule(ex2):
    _assert_fails(
        _batch(ex2, ARB.replace("FREQ(5,20)|P(20,5)|", "FREQ(5,20|P(20,5)")),
        "job.arb, line 4",
        "FREQ",
    )
