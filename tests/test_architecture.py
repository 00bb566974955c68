"""The import-linter contracts in pyproject.toml are kept: the core never imports Qt, and every
module imports only from the layers below it (docs/design.md, D-1)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contract_is_kept():
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    n = len(_config()["tool"]["importlinter"]["contracts"])
    assert f"{n} kept, 0 broken" in proc.stdout


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _top_level_modules() -> list[str]:
    pkg = ROOT / "argusqt"
    out = []
    for path in sorted(pkg.iterdir()):
        if path.name.startswith("_") and path.name != "__main__.py":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            out.append(f"argusqt.{path.name}")
        elif path.suffix == ".py":
            out.append(f"argusqt.{path.stem}")
    return out


def test_every_module_has_a_layer():
    """A new top-level module or package must be placed in the layers, exactly once."""
    contract = next(
        c for c in _config()["tool"]["importlinter"]["contracts"] if c["type"] == "layers"
    )
    placed = [m.strip() for layer in contract["layers"] for m in layer.split("|")]
    assert len(placed) == len(set(placed))
    missing = set(_top_level_modules()) - set(placed) - {"argusqt.__main__"}
    assert not missing, f"{sorted(missing)} not placed in the layers contract"


def test_contract_covers_every_core_module():
    """A new core package or module must be added to the contract, not escape it."""
    contract = _config()["tool"]["importlinter"]["contracts"][0]
    sources = set(contract["source_modules"])
    allowed_outside = {"argusqt.gui", "argusqt.cli", "argusqt.__main__", "argusqt.__init__"}
    for name in _top_level_modules():
        if name in allowed_outside:
            continue
        assert name in sources, f"{name} is not covered by the no-Qt contract"


#: a status written as a number: `status == 14`, `st >= 3`, `np.isin(status, (11, 12))`
HAND_WRITTEN_STATUS = re.compile(
    r"\b(?:\w*status\w*|st|s)(?:\[[^\]\n]*\])?\s*(?:==|!=|>=|<=|<|>)\s*(?:1[0-4]|[1-9])\b(?!\.)"
    r"|np\.isin\(\s*\w*status\w*\s*,\s*\(\s*\d"
    r"|\bstatus\w*(?:\[[^\]\n]*\])?\s*=\s*(?:1[0-4]|[1-9])\b(?!\.)"
)


def test_statuses_are_named_not_numbered():
    """Cell statuses go through argusqt.model.status (the Status enum and its masks); the
    numbers 1..14 are written only there."""
    found = []
    for path in sorted((ROOT / "argusqt").rglob("*.py")):
        if path.name == "status.py" and path.parent.name == "model":
            continue
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if HAND_WRITTEN_STATUS.search(code):
                found.append(f"{path.relative_to(ROOT)}:{no}: {line.strip()}")
    assert not found, "statuses written as numbers:\n" + "\n".join(found)
