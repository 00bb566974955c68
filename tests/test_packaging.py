"""The wheel, sdist and bundle carry what the program opens: metadata complete, every Help page
and picture, every icon the main window asks for (installer/README.md). Static and quick: the
builds themselves run in installer/check_wheel.sh and installer/build.sh + smoke.sh."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import tomllib
from pathlib import Path

import argusqt
from argusqt.docs import DOCS_DIR, PAGES, USER_GUIDE

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _package_data_files(package: str) -> set[Path]:
    """The files setuptools puts in the wheel for `package` from its package-data globs."""
    folder = ROOT.joinpath(*package.split("."))
    return {p.resolve() for pat in SETUPTOOLS["package-data"][package] for p in folder.glob(pat)}


def _data_files(target: str) -> set[Path]:
    """The files setuptools installs under `<prefix>/target` from the data-files globs."""
    return {p.resolve() for pat in SETUPTOOLS["data-files"][target] for p in ROOT.glob(pat)}


def test_metadata_is_complete():
    for field in ("name", "version", "description", "readme", "license", "requires-python"):
        assert PROJECT.get(field), f"pyproject [project] lacks {field}"
    assert PROJECT["version"] == argusqt.__version__
    assert (ROOT / PROJECT["readme"]).is_file()
    assert PROJECT["authors"] and PROJECT["keywords"]
    classifiers = PROJECT["classifiers"]
    assert "Operating System :: Microsoft :: Windows" in classifiers
    # the oldest Python named in a classifier is the one requires-python allows
    oldest = min(
        tuple(map(int, c.rsplit(":: ", 1)[1].split(".")))
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert PROJECT["requires-python"] == ">=" + ".".join(map(str, oldest))
    # PEP 639: a license expression and a license classifier together are refused by the build
    assert not [c for c in classifiers if c.startswith("License ::")]


def test_console_entry_point_resolves():
    module, _, name = PROJECT["scripts"]["argusqt"].partition(":")
    assert callable(getattr(importlib.import_module(module), name))


def test_build_tools_only_in_the_build_extra():
    extras = PROJECT["optional-dependencies"]

    def names(reqs: list[str]) -> set[str]:
        return {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower() for r in reqs}

    assert {"pyinstaller", "build", "twine"} <= names(extras["build"])
    for group in (PROJECT["dependencies"], extras["test"]):
        assert not names(group) & {"pyinstaller", "twine"}
    # the README's two commands (scripts/bootstrap.sh) install the test extra, not the build's
    bootstrap = (ROOT / "scripts/bootstrap.sh").read_text(encoding="utf-8")
    assert '".[test]"' in bootstrap and "[build]" not in bootstrap


def test_every_help_page_and_picture_is_package_data():
    shipped = _package_data_files("argusqt.docs")
    for page in PAGES:
        assert (DOCS_DIR / page).resolve() in shipped, page
    pictures = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", USER_GUIDE.read_text(encoding="utf-8"))
    assert pictures, "the user guide shows no picture: the pattern above is out of date"
    for picture in pictures:
        assert (DOCS_DIR / picture).resolve() in shipped, picture


def _icon_names_of_the_main_window() -> set[str]:
    """The icon names MainWindow._make_actions passes to _act (5th argument or icon_name)."""
    tree = ast.parse((ROOT / "argusqt/gui/mainwindow.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        callee = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if callee not in ("A", "_act"):
            continue
        args = [*call.args[4:5], *(k.value for k in call.keywords if k.arg == "icon_name")]
        found |= {a.value for a in args if isinstance(a, ast.Constant) and a.value}
    return found


def test_every_icon_the_window_uses_is_installed():
    names = _icon_names_of_the_main_window()
    assert len(names) >= 5, names  # the toolbar's actions; fewer means the parse missed them
    icons = _data_files("share/argusqt/resources/icons")
    for name in names | {"app"}:
        assert (ROOT / "resources/icons" / f"{name}.svg").resolve() in icons, name
    assert (ROOT / "resources/style.qss").resolve() in _data_files("share/argusqt/resources")
    # where argusqt.gui.resources looks for them in an installed (not checkout) argusqt
    source = (ROOT / "argusqt/gui/resources.py").read_text(encoding="utf-8")
    assert '"share" / "argusqt" / "resources"' in source


def test_sdist_carries_what_the_readme_runs():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8").split()
    for folder in ("sample_data", "scripts", "installer", "tests"):
        assert folder in manifest, folder


def test_the_bundles_library_self_check_passes_here():
    """installer/bundle_main.py --check-libs, run in this venv: the check itself is sound
    (the frozen bundle runs it in installer/smoke.sh)."""
    spec = importlib.util.spec_from_file_location("bundle_main", ROOT / "installer/bundle_main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.check_libs() == 0


def test_the_windows_workflow_runs_the_tested_linux_recipe():
    """The Windows job (never run here) builds and smoke-tests with the very scripts the
    Linux build runs, so the tested twin stays a twin."""
    workflow = (ROOT / ".github/workflows/windows-bundle.yml").read_text(encoding="utf-8")
    for script in ("installer/build.sh", "installer/smoke.sh"):
        assert f"bash {script}" in workflow and (ROOT / script).is_file(), script
    assert "runs-on: windows-" in workflow
    build = (ROOT / "installer/build.sh").read_text(encoding="utf-8")
    assert "installer/argusqt.spec" in build and (ROOT / "installer/argusqt.spec").is_file()


def test_the_bundle_pins_every_dependency_within_pyproject():
    """installer/constraints.txt (the tested versions build.sh installs) names each runtime
    dependency and the build tools at one version that pyproject.toml allows."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / "installer/constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not a pin: {line}"
            pins[canonicalize_name(name)] = version
    for spec in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["build"]:
        req = Requirement(spec)
        version = pins.get(canonicalize_name(req.name))
        assert version is not None, f"{req.name} is not pinned in installer/constraints.txt"
        assert req.specifier.contains(version), f"{req.name}=={version} outside {req.specifier}"
