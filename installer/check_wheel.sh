#!/usr/bin/env bash
# Build the sdist and wheel (`python -m build`), check their metadata (`twine check --strict`),
# install the wheel into a fresh venv and run it there, outside the checkout: `argusqt
# --version`, `argusqt batch sample_data/demo.arb` (on a copy) and Help offline
# (scripts/check_installed_help.py). Exit 0 when all pass.
# Usage: bash installer/check_wheel.sh   (uses the build venv of installer/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
PY="${PYTHON:-python3}"
VENV="${ARGUSQT_BUILD_VENV:-build/bundle-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
"$VENV/bin/python" -m pip install -q "build>=1.2" "twine>=5.1"

rm -rf dist/wheel && mkdir -p build
"$VENV/bin/python" -m build --outdir dist/wheel . > build/python-build.log 2>&1 \
  || { tail -20 build/python-build.log; exit 1; }
"$VENV/bin/python" -m twine check --strict dist/wheel/*
ls -l dist/wheel

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PY" -m venv "$WORK/venv"
start=$(date +%s)
"$WORK/venv/bin/python" -m pip install -q dist/wheel/argusqt-*.whl
echo "wheel installed into a fresh venv in $(($(date +%s) - start)) s"
cp -r sample_data "$WORK/sample_data"
cd "$WORK"
"$WORK/venv/bin/argusqt" --version
start=$(date +%s)
"$WORK/venv/bin/argusqt" batch sample_data/demo.arb > demo.out
tail -n 2 demo.out
[ -s sample_data/demo_table1.xlsx ] || { echo "FAIL: no demo_table1.xlsx"; exit 1; }
echo "argusqt batch sample_data/demo.arb: exit 0 in $(($(date +%s) - start)) s"
QT_QPA_PLATFORM=offscreen "$WORK/venv/bin/python" "$ROOT/scripts/check_installed_help.py" \
  | grep -v "^ok "
echo "wheel check passed"
