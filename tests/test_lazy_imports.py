"""A batch run imports only what its job needs: no Qt, pandas, openpyxl, scipy.optimize or
scipy.linalg, nor unused method modules, for a table file protected by OPT and written as
text (issue 15, goal 4: process start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from shared_paths import copy_case

ROOT = Path(__file__).resolve().parents[1]
HEAVY = (
    "PySide6",
    "pandas",
    "openpyxl",
    "scipy.optimize",
    "pyarrow",
    # scipy.sparse.csgraph imports scipy.sparse.linalg and scipy.linalg (0.3 s at load 7)
    "scipy.sparse.csgraph",
    "scipy.linalg",
    # methods the batch does not use (the registry imports a method's module on first use)
    "argusqt.protection.cta",
    "argusqt.protection.interval",
    "argusqt.protection.network",
)

PROBE = """
import json, sys
from argusqt.cli import main
code = main(["batch", "batch_ex1.arb", "log.txt"])
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}))
"""


def test_batch_of_a_table_file_imports_no_gui_pandas_or_excel(tmp_path):
    case = copy_case("batch_ex1", tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,)],
        cwd=case,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] == 0
    assert (case / "tabout_ex1.txt").is_file()
    assert result["loaded"] == [], f"imported without need: {result['loaded']}"
