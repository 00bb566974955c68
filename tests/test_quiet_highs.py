"""HiGHS's banner ("Running HiGHS … Copyright") never reaches stdout: one helper builds every
instance (tests/test_quiet_highs.py checks the source and a real run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_highs_instance_comes_from_the_helper():
    makers = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "argusqt").rglob("*.py")
        if "highspy.Highs(" in p.read_text(encoding="utf-8")
    ]
    assert makers == ["argusqt/protection/lp/quiet_highs.py"]


def test_no_banner_on_stdout_from_a_protection_run(shared_data, tmp_path):
    """A fresh process (the banner comes once per process) that protects with the methods
    using HiGHS prints only what it prints itself, with stdout a pipe (C stdio buffered)."""
    code = (
        "import os, sys; sys.path.insert(0, os.environ['AQT_TESTS'])\n"
        "from session_helpers import ex2_session\n"
        "from pathlib import Path\n"
        "s = ex2_session(Path(os.environ['AQT_EX2']))\n"
        "print('before')\n"
        "s.protect(1, 'MOD', {})\n"
        "s.protect(1, 'IP', {})\n"
        "print('after')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("QT_")}
    env |= {"AQT_TESTS": str(ROOT / "tests"), "AQT_EX2": str(shared_data / "batch_ex2")}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "before\nafter\n"
    assert "HiGHS" not in proc.stderr
