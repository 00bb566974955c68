"""No import cycle among argusqt's modules, function-local imports included.

import-linter sees only the imports a module makes at its top; a cycle hidden by an import
inside a function still ties two modules together (one cannot be read, tested or moved
without the other). This test reads every import statement, wherever it stands, except the
annotation-only ones under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

PACKAGE = Path(__file__).resolve().parents[1] / "argusqt"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _annotation_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _targets(node: ast.Import | ast.ImportFrom, here: str, modules: set[str]) -> set[str]:
    """The argusqt modules an import statement loads (a package's own module when the name
    imported from it is not a submodule)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = here.split(".")[: -node.level] if here in modules else here.split(".")
            base = ".".join([*package, base] if base else package)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    out = set()
    for name in names:
        while name and name not in modules:  # `import argusqt.a.b as x`: the deepest module
            name = name.rpartition(".")[0]
        if name.startswith("argusqt"):
            out.add(name)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module → the argusqt modules it imports anywhere in its body (not for annotations)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and not _annotation_only(
                node, parents
            ):
                deps |= _targets(node, name, modules)
        graph[name] = deps - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module."""
    names = sorted(graph)
    index = {n: i for i, n in enumerate(names)}
    rows = [index[a] for a in names for b in graph[a] if b in index]
    cols = [index[b] for a in names for b in graph[a] if b in index]
    adj = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(names)))
    count, labels = connected_components(adj, directed=True, connection="strong")
    groups = [[names[i] for i in np.flatnonzero(labels == k)] for k in range(count)]
    return [g for g in groups if len(g) > 1]


def test_the_graph_sees_function_local_imports():
    """The reader is not blind: a known function-local import is an edge."""
    graph = import_graph()
    assert "argusqt.api" not in graph["argusqt"]  # importlib, not an import statement
    assert "argusqt.protection.core.registry" in graph["argusqt.session"]


def test_no_import_cycle_in_argusqt():
    found = cycles(import_graph())
    assert not found, "import cycles (function-local imports included): " + "; ".join(
        " ↔ ".join(group) for group in found
    )


def test_cycles_are_detected():
    """The detector on a made-up graph: a ↔ b through c, d alone."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
