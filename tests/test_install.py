"""Installation: the README's two commands are `.ci/run`'s, one bootstrap install serves both,
the desktop entry claims argusqt's own file types only, and a machine without a display gets
one clear line instead of Qt's abort."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from argusqt.cli import missing_display, x_display_reachable

ROOT = Path(__file__).resolve().parents[1]
INSTALLER = ROOT / "installer"
MIME_NS = "{http://www.freedesktop.org/standards/shared-mime-info}"


# ---------------------------------------------------------------- README and .ci/run
def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```sh\n(.*?)\n```", text, re.DOTALL)[:2]


def test_readme_first_two_commands_are_the_ci_pair():
    app, tests = _readme_commands()
    assert app == "bash scripts/bootstrap.sh && .venv/bin/argusqt sample_data/enterprise.asc"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert tests == ci


# ---------------------------------------------------------------- one bootstrap stamp
@pytest.fixture
def checkout(tmp_path) -> Path:
    """A copy of bootstrap.sh and pyproject.toml with a stand-in .venv python that logs its
    arguments, and a `dpkg` that says every system package is present (no apt, no network)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", tmp_path / "scripts" / "bootstrap.sh")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    fake_python = venv_bin / "python"
    fake_python.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path / "pip.log"}"\n')
    fake_python.chmod(0o755)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "dpkg").write_text("#!/bin/sh\nexit 0\n")
    (tools / "dpkg").chmod(0o755)
    return tmp_path


def _bootstrap(checkout: Path, *args: str) -> list[str]:
    env = dict(os.environ, PATH=f"{checkout / 'tools'}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(
        ["bash", "scripts/bootstrap.sh", *args], cwd=checkout, env=env, check=True, timeout=60
    )
    log = checkout / "pip.log"
    return log.read_text().splitlines() if log.exists() else []


def _installs(lines: list[str]) -> list[str]:
    return [ln for ln in lines if ln.startswith("-m pip install") and " -e " in f" {ln} "]


@pytest.mark.parametrize("first, second", [((), ("--test",)), (("--test",), ())])
def test_app_and_test_setups_share_one_install(checkout, first, second):
    _bootstrap(checkout, *first)
    lines = _bootstrap(checkout, *second)
    assert _installs(lines) == ["-m pip install -q -e .[test]"]
    stamps = sorted(p.name for p in (checkout / ".venv").glob(".argusqt-installed*"))
    assert stamps == [".argusqt-installed"]


def test_a_changed_pyproject_installs_again(checkout):
    _bootstrap(checkout)
    stamp = checkout / ".venv" / ".argusqt-installed"
    os.utime(checkout / "pyproject.toml", (stamp.stat().st_mtime + 5,) * 2)
    assert len(_installs(_bootstrap(checkout, "--test"))) == 2


# ---------------------------------------------------------------- desktop entry and MIME
def _desktop_entry() -> dict[str, str]:
    lines = (INSTALLER / "argusqt.desktop.in").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(ln.split("=", 1) for ln in lines[1:] if "=" in ln)


def _mime_types() -> dict[str, list[str]]:
    root = ET.parse(INSTALLER / "argusqt-mime.xml").getroot()
    return {
        m.get("type"): [g.get("pattern") for g in m.iter(f"{MIME_NS}glob")]
        for m in root.iter(f"{MIME_NS}mime-type")
    }


def test_desktop_entry_claims_only_argusqt_file_types():
    claimed = [t for t in _desktop_entry()["MimeType"].split(";") if t]
    defined = _mime_types()
    assert "text/plain" not in claimed
    assert all(not t.startswith("text/") for t in claimed)
    assert sorted(claimed) == sorted(defined)  # every claimed type is ours, defined here
    globs = sorted(g for gs in defined.values() for g in gs)
    assert globs == ["*.aqs", "*.arb", "*.rda"]


def test_installer_installs_the_mime_definitions():
    script = (INSTALLER / "install-linux.sh").read_text(encoding="utf-8")
    assert "argusqt-mime.xml" in script and "update-mime-database" in script


def _fake_bundle(folder: Path, says: str) -> Path:
    """A stand-in for dist/argusqt: the program (a script saying `says`) and the icon."""
    icons = folder / "_internal" / "resources" / "icons"
    icons.mkdir(parents=True, exist_ok=True)
    (icons / "app.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    program = folder / "argusqt"
    program.write_text(f"#!/bin/sh\necho {says}\n", encoding="utf-8")
    program.chmod(0o755)
    return folder


def _install(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARGUSQT_PREFIX"} | {"HOME": str(home)}
    return subprocess.run(
        ["bash", str(INSTALLER / "install-linux.sh"), *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_bundle_install_runs_the_copy_and_uninstall_removes_it(tmp_path):
    """`install-linux.sh --bundle DIR`: a copy of the built bundle (no Python), the command
    and the desktop entry pointing into it; a second install replaces the copy."""
    home = tmp_path / "home"
    home.mkdir()
    bundle = _fake_bundle(tmp_path / "dist" / "argusqt", "first")
    assert _install(home, "--bundle", str(bundle)).returncode == 0
    command = home / ".local" / "bin" / "argusqt"
    prefix = home / ".local" / "share" / "argusqt" / "bundle"
    assert command.resolve() == (prefix / "argusqt").resolve()
    run = subprocess.run([str(command)], capture_output=True, text=True, timeout=60)
    assert run.stdout == "first\n"
    entry = (home / ".local/share/applications/argusqt.desktop").read_text(encoding="utf-8")
    fields = dict(ln.split("=", 1) for ln in entry.splitlines() if "=" in ln)
    assert fields["Exec"] == f"{prefix / 'argusqt'} %F"
    assert Path(fields["Icon"]).is_file() and Path(fields["Icon"]).is_relative_to(prefix)

    _fake_bundle(bundle, "second")  # a new build, installed over the old copy
    assert _install(home, "--bundle", str(bundle)).returncode == 0
    run = subprocess.run([str(command)], capture_output=True, text=True, timeout=60)
    assert run.stdout == "second\n"

    assert _install(home, "--uninstall").returncode == 0
    assert not command.is_symlink() and not prefix.exists()
    assert not (home / ".local/share/applications/argusqt.desktop").exists()


def test_bundle_install_without_a_bundle_says_how_to_make_one(tmp_path):
    proc = _install(tmp_path, "--bundle", str(tmp_path / "nowhere"))
    assert proc.returncode != 0
    assert "no bundle at" in proc.stderr and "installer/build.sh" in proc.stderr
    assert not (tmp_path / ".local" / "bin" / "argusqt").exists()


@pytest.mark.skipif(shutil.which("update-mime-database") is None, reason="no shared-mime-info")
def test_mime_definitions_are_valid_for_shared_mime_info(tmp_path):
    """update-mime-database accepts the file and maps each extension to our type."""
    packages = tmp_path / "mime" / "packages"
    packages.mkdir(parents=True)
    shutil.copy(INSTALLER / "argusqt-mime.xml", packages)
    subprocess.run(["update-mime-database", str(tmp_path / "mime")], check=True, timeout=120)
    globs = (tmp_path / "mime" / "globs2").read_text(encoding="utf-8")
    for ext, mime in (
        ("arb", "application/x-argusqt-batch"),
        ("aqs", "application/x-argusqt-session"),
        ("rda", "application/x-argusqt-metadata"),
    ):
        assert f"40:{mime}:*.{ext}" in globs


# ---------------------------------------------------------------- no display
def test_missing_display_rule():
    assert missing_display({}, "linux") is not None
    assert missing_display({"DISPLAY": ":0"}, "linux", reachable=lambda d: True) is None
    gone = missing_display({"DISPLAY": "host:3"}, "linux", reachable=lambda d: False)
    assert gone is not None and "DISPLAY=host:3" in gone and "argusqt batch FILE.arb" in gone
    assert missing_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert missing_display({}, "win32") is None and missing_display({}, "darwin") is None


def test_x_display_probe_over_tcp():
    """A server listening on 6000+N answers for "127.0.0.1:N"; once closed it does not."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    if port < 6000:
        server.close()
        pytest.skip(f"ephemeral port {port} is below X11's 6000 base")
    server.listen()
    display = f"127.0.0.1:{port - 6000}.0"
    try:
        assert x_display_reachable(display)
    finally:
        server.close()
    assert not x_display_reachable(display, timeout=5.0)
    assert x_display_reachable("weird-form")  # unknown forms are left to Qt


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY is an X11/Wayland idea")
@pytest.mark.parametrize(
    "args, display",
    [((), None), (("gui",), None), (("sample_data/enterprise.asc",), None), ((), "unix:987")],
)
def test_gui_without_display_says_so_in_one_line(args, display):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY") and not k.startswith("QT_")
    }
    if display is not None:
        env["DISPLAY"] = display  # set, but no X server answers there
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "argusqt", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    expected = "no display to open a window on" if display is None else "cannot reach the display"
    assert lines[0].startswith(f"argusqt: {expected}")
    assert "argusqt batch FILE.arb" in lines[0]
    assert proc.stdout == ""
