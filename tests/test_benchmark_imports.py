"""Every name a benchmark or script imports from argusqt exists.

Benchmarks are not run by the suite (they time things), so a renamed or moved function would
break them silently (bench_recode imported a function removed months before); importing
their argusqt names is cheap and catches it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])


def _argusqt_imports(path: Path) -> list[tuple[int, str, str | None]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "argusqt":
                out += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.startswith("argusqt")]
    return out


def test_there_are_benchmarks_to_check():
    assert any(p.parent.name == "benchmarks" for p in SCRIPTS)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_argusqt_names_imported_by_a_script_exist(path: Path):
    missing = []
    for line, module, name in _argusqt_imports(path):
        mod = importlib.import_module(module)
        if name is None or hasattr(mod, name):
            continue
        try:
            importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError:
            missing.append(f"{path.name}:{line}: {module}.{name}")
    assert not missing, "names no longer in argusqt: " + ", ".join(missing)
