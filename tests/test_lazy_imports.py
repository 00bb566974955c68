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

import pytest
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
    # scipy.sparse's import copies numpy's namespace and so imports these, unused
    # (model.scipy_sparse lends stand-ins: ~0.1 s CPU of 0.4 at load 8)
    "numpy.testing",
    "numpy.f2py",
    "numpy.polynomial",
    # methods the batch does not use (the registry imports a method's module on first use)
    "argusqt.protection.adjust.cta",
    "argusqt.protection.adjust.interval",
    "argusqt.protection.suppress.network",
)

#: what reading, tabulating and writing a fixed-format microdata table needs none of
TABULATION_ONLY = (
    *HEAVY,
    "scipy",
    "highspy",
    "pyscipopt",
    "argusqt.protection.core.registry",
    "argusqt.protection.run",
    "argusqt.protection.audit.outsider",
)

PROBE = """
import gc, json, sys
from argusqt.cli import main
sys.argv = ["argusqt", "batch", %r, "log.txt"]
code = main()  # as the `argusqt` command runs it: the process ends with the run
print(json.dumps({"code": code, "loaded": [m for m in %r if m in sys.modules],
                  "frozen": gc.get_freeze_count()}))
"""


def _run_python(code: str, cwd: Path | None = None) -> dict:
    """`code` run in a fresh interpreter (nothing imported yet); its last line, as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _run_probe(folder: Path, arb: str, modules: tuple[str, ...]) -> dict:
    return _run_python(PROBE % (arb, modules), cwd=folder)


def test_batch_of_a_table_file_imports_no_gui_pandas_or_excel(tmp_path):
    case = copy_case("batch_ex1", tmp_path)
    result = _run_probe(case, "batch_ex1.arb", HEAVY)
    assert result["code"] == 0
    assert (case / "tabout_ex1.txt").is_file()
    assert result["loaded"] == [], f"imported without need: {result['loaded']}"
    # the headless command moves its modules out of the collector's passes (gc.freeze)
    assert result["frozen"] > 10_000


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


SPARSE_PROBE = """
import json, sys
%s
from argusqt.model import scipy_sparse
sp = scipy_sparse.load()
light = [m for m in ("numpy.testing", "numpy.f2py", "numpy.polynomial") if m in sys.modules]
product = (sp.csr_matrix([[1.0, 2.0], [0.0, 3.0]]) @ sp.identity(2)).toarray().tolist()
import numpy, numpy.testing, numpy.f2py
real = numpy.testing is sys.modules["numpy.testing"] and hasattr(numpy.testing, "assert_equal")
print(json.dumps({"light": light, "product": product, "real": real,
                  "f2py": hasattr(numpy.f2py, "run_main"),
                  "poly": numpy.polynomial.Polynomial([1, 2])(1.0)}))
"""


@pytest.mark.parametrize("first_import_fails", [False, True])
def test_scipy_sparse_is_loaded_without_numpy_testing_and_f2py(first_import_fails):
    """scipy.sparse works, numpy.testing, f2py and polynomial stay unloaded until asked
    for and are then the real ones; when the light import fails, the ordinary one is made."""
    # None in sys.modules makes the first import fail; the fallback forgets it and retries
    setup = 'sys.modules["scipy.sparse"] = None' if first_import_fails else ""
    result = _run_python(SPARSE_PROBE % setup)
    assert result["product"] == [[1.0, 2.0], [0.0, 3.0]]
    assert result["real"] and result["f2py"]
    assert result["poly"] == 3.0
    # the ordinary import (the fallback) loads them, the light one does not
    unused = ["numpy.testing", "numpy.f2py", "numpy.polynomial"]
    assert result["light"] == (unused if first_import_fails else [])


REGISTRY_PROBE = """
import importlib, json, sys
from argusqt.protection.core import registry
if %r:
    importlib.import_module(registry.MODULE_OF[%r])  # the module alone, for comparison
desc = registry.get(%r)
loaded = [m for m in registry.METHOD_MODULES if m in sys.modules]
print(json.dumps({"name": desc.name, "module": desc.solve.__module__, "loaded": loaded}))
"""


def _registry_probe(name: str, module_alone: bool) -> dict:
    return _run_python(REGISTRY_PROBE % (module_alone, name, name.lower()))


@pytest.mark.slow
def test_a_method_name_imports_only_its_own_module():
    """`registry.get(name)` imports the module MODULE_OF names, which registers that name,
    and no method module that this one does not import itself (HEUR: none of OPT's and
    MOD's, whose SCIP models it does not use)."""
    from argusqt.protection.core import registry

    for name, module in registry.MODULE_OF.items():
        through_registry = _registry_probe(name, module_alone=False)
        assert through_registry["name"] == name and through_registry["module"] == module
        assert through_registry["loaded"] == _registry_probe(name, True)["loaded"], name
    assert _registry_probe("HEUR", False)["loaded"] == [registry.MODULE_OF["HEUR"]]


FACTS_PROBE = """
import json, sys
import numpy as np, scipy.sparse as sp
from argusqt.protection.core import registry
from argusqt.protection.core.problem import CSPProblem
desc = registry.get("HEUR")
z = np.zeros(3)
problem = CSPProblem(values=np.array([1.0, 2.0, 3.0]), lower=z, upper=z + 10, cost=z + 1,
                     status=np.zeros(3, dtype=np.int8), lpl=z, upl=z,
                     relations=sp.csr_matrix(np.array([[1.0, 1.0, -1.0]])), rhs=np.zeros(1))
facts = registry.problem_facts(problem)
print(json.dumps({"base": facts.min_rounding_base, "scip": "pyscipopt" in sys.modules}))
"""


def test_the_registry_reaches_heur_and_the_table_facts_without_scip():
    """Naming HEUR and computing the table facts (every `<SUPPRESS>` does) load no SCIP:
    the minimum rounding base comes from rounding_base, not from the RND solver's module.
    (HEUR's polish on small tables imports SCIP itself, when it runs.)"""
    result = _run_python(FACTS_PROBE)
    assert result == {"base": 1, "scip": False}
