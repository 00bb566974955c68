"""The core never imports Qt: the import-linter contract in pyproject.toml is kept."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contract_is_kept():
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 kept, 0 broken" in proc.stdout


def test_contract_covers_every_core_module():
    """A new core package or module must be added to the contract, not escape it."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = cfg["tool"]["importlinter"]["contracts"][0]
    sources = set(contract["source_modules"])
    pkg = ROOT / "argusqt"
    allowed_outside = {"argusqt.gui", "argusqt.cli", "argusqt.__main__", "argusqt.__init__"}
    for path in pkg.iterdir():
        if path.name.startswith("_") and path.name != "__main__.py":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            name = f"argusqt.{path.name}"
        elif path.suffix == ".py":
            name = f"argusqt.{path.stem}"
        else:
            continue
        if name in allowed_outside:
            continue
        assert name in sources, f"{name} is not covered by the no-Qt contract"
