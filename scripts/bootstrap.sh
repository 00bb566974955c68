#!/usr/bin/env bash
# Set up argusqt on a fresh Debian machine: the system libraries Qt needs, a virtualenv in
# .venv and the package in it (editable) with its test tools, once for the application and
# the test suite alike. Idempotent: skips apt when the libraries are present and pip when
# nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

QT_DEBS="libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 libfreetype6 libdbus-1-3
libglib2.0-0 libx11-xcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xinerama0 libxcb-xkb1 python3-venv"

missing=""
for p in $QT_DEBS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "Installing system packages:$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# One install and one stamp for both README commands (the application's and the tests'):
# the package goes in with its test tools the first time, so running the other command
# afterwards installs nothing. `--test` is still accepted (.ci/run passes it). A newer
# pyproject.toml (changed dependencies) installs again.
stamp=".venv/.argusqt-installed"
rm -f ".venv/.argusqt-installed[test]"  # the second stamp of earlier versions
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
  touch "$stamp"
fi
# Bytecode for the editable install, as pip writes it for a normal one: where
# PYTHONDONTWRITEBYTECODE is set every run would otherwise compile ~100 modules again
# (0.1–0.8 s of a batch run's start, docs/design.md "Process start"); quick when up to date.
.venv/bin/python -m compileall -q argusqt >/dev/null || true
