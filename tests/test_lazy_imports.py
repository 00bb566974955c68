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

#: the cell key method's modules and the a-priori file's: only data with record keys, CKM
#: and <APRIORI> load them (D-62)
NOT_WITHOUT_CKM_OR_APRIORI = ("argusqt.model.cellkey", "argusqt.model.ptable", "argusqt.io.apriori")

#: what reading, tabulating and writing a fixed-format microdata table needs none of
TABULATION_ONLY = (
    *HEAVY,
    *NOT_WITHOUT_CKM_OR_APRIORI,
    "scipy",
    "highspy",
    "pyscipopt",
    "argusqt.protection.core.registry",
    "argusqt.protection.run",
    "argusqt.protection.audit.outsider",
)

PROBE = """
import atexit, gc, json, sys
from argusqt.cli import main
sys.argv = ["argusqt", "batch", %r, "log.txt"]
atexit.register(lambda: print(json.dumps({
    "loaded": [m for m in %r if m in sys.modules],
    "frozen": gc.get_freeze_count(), "collector": gc.isenabled()})))
main()  # as the `argusqt` command runs it: the process ends with the run, exit functions run
"""


def _run_python(code: str, cwd: Path | None = None, any_exit: bool = False) -> dict:
    """`code` run in a fresh interpreter (nothing imported yet); its last line, as JSON, and
    with `any_exit` its exit status as "code" (else the status must be 0)."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert any_exit or out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines, out.stderr
    return {**json.loads(lines[-1]), **({"code": out.returncode} if any_exit else {})}


def _run_probe(folder: Path, arb: str, modules: tuple[str, ...]) -> dict:
    """The command's run; "code": its exit status."""
    return _run_python(PROBE % (arb, modules), cwd=folder, any_exit=True)


def test_batch_of_a_table_file_imports_no_gui_pandas_or_excel(tmp_path):
    case = copy_case("batch_ex1", tmp_path)
    result = _run_probe(case, "batch_ex1.arb", HEAVY)
    assert result["code"] == 0
    assert (case / "tabout_ex1.txt").is_file()
    assert result["loaded"] == [], f"imported without need: {result['loaded']}"
    # the headless command moves its modules out of the collector's passes (gc.freeze),
    # with the collector off while they are imported and on again for the run (D-57)
    assert result["frozen"] > 10_000
    assert result["collector"] is True


def test_a_batch_that_stops_early_leaves_the_collector_on(tmp_path):
    """The command turns the collector off for its imports; a run that stops at a syntax
    error, before the freeze, turns it on again."""
    (tmp_path / "bad.arb").write_text("<NOSUCHCOMMAND>\n")
    result = _run_probe(tmp_path, "bad.arb", ())
    assert result["code"] != 0
    assert result["collector"] is True and result["frozen"] > 0


#: what a table file's batch run reads no microdata with (docs/design.md, D-47), nor
#: recodes, reads a CKM p-table or writes an HTML report with (D-57), nor perturbs by cell
#: keys or applies an a-priori file with (D-62)
NOT_FOR_A_TABLE_FILE = (
    "argusqt.io.fixedstream",
    "argusqt.io.framefiles",
    "argusqt.io.frames",
    "argusqt.io.microdata",
    "argusqt.recode",
    "argusqt.io.ptable",
    "argusqt.export.report",
    *NOT_WITHOUT_CKM_OR_APRIORI,
    # the "did you mean" of an unknown parameter or variable name only (D-68)
    "difflib",
    # the command line's parser: `batch ARB [LOGBOOK [TEMPDIR]]` is read without it (D-73)
    "argparse",
    "gettext",
    # a small table's relations are a model.smallcsr matrix: no scipy at all (D-78)
    "scipy",
    "scipy.sparse",
    # numpy 2.4's plain np.unique imports it (np.ma.is_masked); integers go through
    # model.distinct instead (D-85)
    "numpy.ma",
)
#: modules of a batch_ex1 run (OPT on a 15-cell table file, text output): 332 in all, 100 of
#: argusqt's, on 2026-11-28 (numpy 2.4; 329 and 98 before D-82's move pool and D-83's HiGHS
#: core count with its ctypes and mmap; 331 and 97 before D-85's start without numpy.ma; 449 and 97 before D-57, 445 and 95 before D-62, 444
#: and 94 before D-68's lazy difflib, 442 and 95 before D-73's start without argparse, 440
#: and 95 before D-78's start without scipy, which brought ~110); the ceilings leave room
#: for a few modules more, not for a library more (pandas alone brings ~500, scipy.sparse
#: ~110, scipy.optimize ~170, openpyxl ~200, scipy.sparse.csgraph ~90)
MODULE_CEILING = 335
ARGUSQT_CEILING = 100

COUNT_PROBE = """
import atexit, json, sys
from argusqt.cli import main
sys.argv = ["argusqt", "batch", %r, "log.txt"]
atexit.register(lambda: print(json.dumps({
    "loaded": [m for m in %r if m in sys.modules], "modules": len(sys.modules),
    "argusqt": len([m for m in sys.modules if m.split(".")[0] == "argusqt"])})))
main()
"""


def test_batch_of_a_table_file_reads_no_microdata_and_keeps_its_module_count(tmp_path):
    """Counts, not time: the start of `argusqt batch` is the modules it imports."""
    case = copy_case("batch_ex1", tmp_path)
    result = _run_python(
        COUNT_PROBE % ("batch_ex1.arb", NOT_FOR_A_TABLE_FILE), cwd=case, any_exit=True
    )
    assert result["code"] == 0
    assert result["loaded"] == [], f"imported without need: {result['loaded']}"
    assert result["modules"] <= MODULE_CEILING, result
    assert result["argusqt"] <= ARGUSQT_CEILING, result


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


#: numpy's masked arrays, character and record arrays: scipy.sparse's namespace copy and
#: the plain `np.unique` (and `np.setdiff1d`, scipy's `diags`) import them, and a small
#: microdata table's OPT and MOD runs need none (model.distinct, respondents.diagonal, D-107)
NOT_FOR_A_SMALL_MICRODATA_TABLE = ("numpy.ma", "numpy.char", "numpy.rec")


@pytest.mark.parametrize("method", ["OPT(1, 10)", "MOD(1, 1, 1, 1, 1)"])
def test_a_small_microdata_table_is_protected_without_numpy_ma(tmp_path, method):
    """tau_testW with its respondents' floors (scipy.sparse, the insider and floor audits):
    the statuses written, and numpy.ma, numpy.char and numpy.rec never imported."""
    case = copy_case("tau_testW", tmp_path)
    (case / "small.arb").write_text(
        '<OPENMICRODATA> "tau_testW.asc"\n<OPENMETADATA> "tau_testW.rda"\n'
        '<SPECIFYTABLE> "Size""Region"|"Var2"||\n<SAFETYRULE> P(15,1)|FREQ(3,20)\n'
        f'<READMICRODATA>\n<SUPPRESS> {method}\n<WRITETABLE> (1, 3, AS+, "small.txt")\n'
    )
    result = _run_probe(case, "small.arb", ("scipy.sparse", *NOT_FOR_A_SMALL_MICRODATA_TABLE))
    assert result["code"] == 0
    assert (case / "small.txt").stat().st_size > 0
    assert result["loaded"] == ["scipy.sparse"], f"imported without need: {result['loaded']}"


SPARSE_PROBE = """
import json, sys
%s
from argusqt.model import scipy_sparse
sp = scipy_sparse.load()
light = [m for m in ("numpy.testing", "numpy.f2py", "numpy.polynomial") if m in sys.modules]
masked = [m for m in ("numpy.ma", "numpy.char", "numpy.rec") if m in sys.modules]
product = (sp.csr_matrix([[1.0, 2.0], [0.0, 3.0]]) @ sp.identity(2)).toarray().tolist()
import numpy, numpy.testing, numpy.f2py
real = numpy.testing is sys.modules["numpy.testing"] and hasattr(numpy.testing, "assert_equal")
print(json.dumps({"light": light, "product": product, "real": real,
                  "f2py": hasattr(numpy.f2py, "run_main"),
                  "poly": numpy.polynomial.Polynomial([1, 2])(1.0), "masked": masked,
                  "ma": bool(numpy.ma.is_masked(numpy.ma.masked_array([1, 2], mask=[0, 1]))),
                  "char": numpy.char.strip(numpy.array([" a "])).tolist(),
                  "rec": numpy.rec.fromarrays([[1, 2]], names="x").x.tolist(),
                  "unique": numpy.unique(numpy.array([2, 1, 2])).tolist()}))
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
    # numpy.ma, char and rec (D-107): left out too, and the real ones when asked for
    assert result["ma"] is True and result["char"] == ["a"] and result["rec"] == [1, 2]
    assert result["unique"] == [1, 2]
    # the ordinary import (the fallback) loads them, the light one does not
    unused = ["numpy.testing", "numpy.f2py", "numpy.polynomial"]
    assert result["light"] == (unused if first_import_fails else [])
    masked = ["numpy.ma", "numpy.char", "numpy.rec"]
    assert result["masked"] == (masked if first_import_fails else [])


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


#: the doors and what they delegate to: a function-local import there must keep something
#: out of its module's start (docs/design.md, D-39)
LAZY_CHECKED = (
    "argusqt/session.py",
    "argusqt/api.py",
    "argusqt/sessionfile.py",
    *sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "argusqt" / "workflow").glob("*.py")
        if p.name != "__init__.py"
    ),
)


def _function_local_imports(rel: str) -> list[tuple[int, str, list[str], bool]]:
    """(line, module, names, marked) of every import inside a function of `rel`; marked: its
    line, or the line above the run of import statements it belongs to, says `# lazy:` what
    it keeps out of start-up."""
    import ast

    text = (ROOT / rel).read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for block in ast.walk(fn):
            fields = [getattr(block, f, None) for f in ("body", "orelse", "finalbody")]
            body = [s for f in fields if isinstance(f, list) for s in f]
            first: ast.stmt | None = None  # the first import of the current run
            for node in body:
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    first = None
                    continue
                first = first or node
                above = lines[first.lineno - 2].strip() if first.lineno > 1 else ""
                marked = "# lazy:" in lines[node.lineno - 1] or above.startswith("# lazy:")
                if isinstance(node, ast.ImportFrom):
                    module, names = node.module or "", [a.name for a in node.names]
                else:
                    module, names = node.names[0].name, []
                found.append((node.lineno, module, names, marked))
    return found


def test_every_function_local_import_says_what_it_keeps_out_of_start_up():
    unmarked = [
        f"{rel}:{line}: {module}"
        for rel in LAZY_CHECKED
        for line, module, _, marked in _function_local_imports(rel)
        if not marked
    ]
    assert not unmarked, "function-local imports without a `# lazy:` reason: " + ", ".join(unmarked)


LOADED_PROBE = """
import importlib.util, json, sys
import %s
loaded = set(sys.modules)
out = []
for line, module, names in %r:
    targets = [module]
    for name in names:  # `from package import submodule` loads the submodule
        try:
            if importlib.util.find_spec(f"{module}.{name}") is not None:
                targets.append(f"{module}.{name}")
        except ImportError:
            pass
    if all(t in loaded for t in targets):
        out.append(f"{line}: {module}")
print(json.dumps(out))
"""


@pytest.mark.parametrize("rel", LAZY_CHECKED)
def test_a_lazy_import_keeps_out_what_its_module_does_not_load(rel):
    """A function-local import of a module its own module's import loads anyway saves no
    start-up time: it belongs at the top (import-linter sees only those)."""
    module = rel.removesuffix(".py").replace("/", ".")
    local = [(line, mod, names) for line, mod, names, _ in _function_local_imports(rel)]
    out = subprocess.run(
        [sys.executable, "-c", LOADED_PROBE % (module, local)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    pointless = json.loads(out.stdout.strip().splitlines()[-1])
    assert pointless == [], f"{rel}: lazy imports of modules loaded at its start: {pointless}"
