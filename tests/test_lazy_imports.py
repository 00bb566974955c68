"""A batch run imports only what its job needs (issue 15, goal 4: process start): no Qt,
pandas, openpyxl, scipy.optimize or scipy.linalg, nor unused method modules, for a table file
protected by OPT and written as text; and for a fixed-format microdata file only read,
tabulated and written, none of scipy, the solvers or the protection methods either."""

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

#: what reading, tabulating and writing a fixed-format microdata table needs none of
TABULATION_ONLY = (
    *HEAVY,
    "scipy",
    "highspy",
    "pyscipopt",
    "argusqt.protection.registry",
    "argusqt.protection.methods",
    "argusqt.protection.audit",
)

PROBE = """
import json, sys
from argusqt.cli import main
code = main(["batch", %r, "log.txt"])
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules]}))
"""


def _run_probe(folder: Path, arb: str, modules: tuple[str, ...]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE % (arb, modules)],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_batch_of_a_table_file_imports_no_gui_pandas_or_excel(tmp_path):
    case = copy_case("batch_ex1", tmp_path)
    result = _run_probe(case, "batch_ex1.arb", HEAVY)
    assert result["code"] == 0
    assert (case / "tabout_ex1.txt").is_file()
    assert result["loaded"] == [], f"imported without need: {result['loaded']}"


def test_tabulating_fixed_format_microdata_imports_no_scipy_pandas_or_solver(tmp_path):
    """The path from process start to the first table: read tau_testW.asc, tabulate, write."""
    case = copy_case("tau_testW", tmp_path)
    (case / "tab.arb").write_text(
        '<OPENMICRODATA> "tau_testW.asc"\n<OPENMETADATA> "tau_testW.rda"\n'
        '<SPECIFYTABLE> "Size""Region"|"Var2"||\n<SAFETYRULE> NK(3,70)|FREQ(3,20)\n'
        '<READMICRODATA>\n<WRITETABLE> (1, 3, AS+, "tab.txt")\n'
    )
    result = _run_probe(case, "tab.arb", TABULATION_ONLY)
    assert result["code"] == 0
    assert (case / "tab.txt").stat().st_size > 0
    assert result["loaded"] == [], f"imported without need: {result['loaded']}"
