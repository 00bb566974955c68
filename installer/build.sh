#!/usr/bin/env bash
# Build the one-folder bundle dist/argusqt: Python, Qt, SCIP, HiGHS, pyarrow, openpyxl, argusqt,
# its docs, icons and sample data; a statistician runs it without installing Python.
# Usage: bash installer/build.sh [--clean]   (Linux here; Windows runs it in Git Bash, see
# .github/workflows/windows-bundle.yml). installer/README.md says what is tested where.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
VENV="${ARGUSQT_BUILD_VENV:-build/bundle-venv}"
if [ "${1:-}" = "--clean" ]; then
  rm -rf "$VENV" build/pyinstaller dist/argusqt
fi
start=$(date +%s)

# a venv of its own with argusqt's dependencies and PyInstaller (the `build` extra), never
# .venv: the bundle holds the run-time libraries only, not the test tools
if [ ! -d "$VENV" ]; then
  "$PY" -m venv "$VENV"
fi
if [ -x "$VENV/bin/python" ]; then VPY="$VENV/bin/python"; else VPY="$VENV/Scripts/python.exe"; fi
stamp="$VENV/.argusqt-build-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ installer/constraints.txt -nt "$stamp" ]; then
  # the requirements straight from pyproject.toml (argusqt itself is bundled from this checkout)
  "$VPY" -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; print("\n".join(p["dependencies"] + p["optional-dependencies"]["build"]))' \
    > "$VENV/requirements.txt"
  "$VPY" -m pip install -q --upgrade pip
  # at the versions the bundle was tested with (installer/constraints.txt)
  "$VPY" -m pip install -q -r "$VENV/requirements.txt" -c installer/constraints.txt
  touch "$stamp"
fi

"$VPY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --workpath build/pyinstaller --distpath dist installer/argusqt.spec

end=$(date +%s)
size=$(du -sh dist/argusqt | cut -f1)
files=$(find dist/argusqt -type f | wc -l)
echo "bundle: dist/argusqt, $size in $files files, built in $((end - start)) s"
echo "smoke test: bash installer/smoke.sh"
