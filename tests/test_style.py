"""The repository is ruff clean (lint and format), as the brief asks: a lint slip in a benchmark
otherwise stays on main until someone runs ruff by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args", [("check", "."), ("format", "--check", ".")])
def test_ruff_clean(args):
    exe = Path(sys.executable).with_name("ruff")
    proc = subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
