"""The user guide's examples run as written: its Python code (notebook style, executed here
block by block in one namespace, from the checkout folder that holds sample_data) and the
figures its worked example quotes (argusqt/docs/user_guide.md §2, §11)."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import numpy as np

from argusqt.batch.runner import run_batch
from argusqt.docs import USER_GUIDE
from argusqt.model.status import is_primary

ROOT = Path(__file__).resolve().parents[1]
GUIDE = USER_GUIDE.read_text(encoding="utf-8")


def _section(number: str) -> str:
    start = re.search(rf"(?m)^## {re.escape(number)}\. .*$", GUIDE)
    assert start, f"user guide has no section {number}"
    end = re.search(r"(?m)^## \d+\. ", GUIDE[start.end() :])
    return GUIDE[start.end() : start.end() + end.start() if end else len(GUIDE)]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def test_python_section_runs_as_written(monkeypatch):
    section = _section("11")
    blocks = _blocks(section, "python")
    assert blocks, "the Python section has no example"
    monkeypatch.chdir(ROOT)  # "run from the folder that holds sample_data"
    namespace: dict = {"__name__": "__guide__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for code in blocks:
            exec(compile(code, str(USER_GUIDE), "exec"), namespace)
    printed = out.getvalue()
    # what the guide says it prints is what it prints
    claim = re.search(r"it prints (\d+) primary and (\d+) secondary cells", section)
    assert claim, "the section should say what the example prints"
    assert f"{claim[1]} primary and {claim[2]} secondary cells suppressed" in printed, printed
    assert "Audit passed" in printed


def test_worked_example_figures(tmp_path):
    """The batch job of argusqt/docs/user_guide.md §2: the table and its unsafe cells are those
    the guide names."""
    section = _section("2")
    (job,) = [b for b in _blocks(section, "") if "<OPENMICRODATA>" in b]
    folder = tmp_path / "sample"
    shutil.copytree(ROOT / "sample_data", folder)
    # the tabulation and the rules only: protection times are benchmarks, not tests
    lines = [ln for ln in job.splitlines() if not ln.strip().startswith(("<SUPPRESS>", "<WRITE"))]
    (folder / "job.arb").write_text("\n".join(ln.strip() for ln in lines) + "\n")
    outcome = run_batch(folder / "job.arb")
    assert outcome.ok, outcome.error
    table = outcome.session.tables[0]
    status = np.asarray(table.status)
    cells, primaries, empty = (
        int(status.size),
        int(is_primary(status).sum()),
        int((status == 14).sum()),
    )
    assert f"has {cells} cells: {primaries} are red" in " ".join(section.split())
    assert f"{empty} are empty" in section
    assert (cells, primaries, empty) == (738, 63, 26)
