#!/usr/bin/env bash
# Smoke test of the built bundle (installer/build.sh), offscreen, outside the checkout:
# --version, the native libraries (`--check-libs`), sample_data/demo.arb through the bundled
# batch mode, a table protected with OPT and written to Excel (opened again with openpyxl),
# Help → User guide offline (`--check-help`). Exit 0 when every step passes.
# Usage: bash installer/smoke.sh [BUNDLE_DIR]   (default dist/argusqt)
# SMOKE_PYTHON: a Python with openpyxl to read the workbook back (default: the build venv's).
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE="$(cd "${1:-dist/argusqt}" && pwd)"
export QT_QPA_PLATFORM=offscreen
# Windows: argusqt.exe is the window program (no console); argusqt-cli.exe prints
if [ -x "$BUNDLE/argusqt-cli.exe" ]; then
  APP="$BUNDLE/argusqt-cli.exe"
elif [ -x "$BUNDLE/argusqt.exe" ]; then
  APP="$BUNDLE/argusqt.exe"
else
  APP="$BUNDLE/argusqt"
fi
PYCHECK="${SMOKE_PYTHON:-}"
if [ -z "$PYCHECK" ]; then
  for p in build/bundle-venv/bin/python build/bundle-venv/Scripts/python.exe; do
    [ -x "$p" ] && PYCHECK="$(pwd)/$p" && break
  done
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
WORK="$TMP/a folder with spaces"  # as under "C:\Users\Jane Doe"
mkdir -p "$WORK"
cp -r "$BUNDLE/sample_data" "$WORK/sample_data"
cd "$WORK"  # nothing of the checkout on the path: the bundle must carry it all
ms() { date +%s%N | cut -c1-13; }
step() { echo "== $*"; }

step "--version"
t0=$(ms)
version="$("$APP" --version)"
t1=$(ms)
echo "$version (started and answered in $((t1 - t0)) ms)"
case "$version" in argusqt\ [0-9]*) ;; *) echo "FAIL: unexpected --version: $version"; exit 1 ;; esac

step "the bundled libraries load and work (SCIP, HiGHS, pyarrow, openpyxl)"
"$APP" --check-libs

step "batch sample_data/demo.arb"
t0=$(ms)
"$APP" batch sample_data/demo.arb > demo.out
t1=$(ms)
tail -n 3 demo.out
for f in demo_table1.txt demo_table2.txt demo_table1.csv demo_table1.xlsx demo_log.txt; do
  [ -s "sample_data/$f" ] || { echo "FAIL: demo.arb did not write $f"; exit 1; }
done
grep -q "Batch file .*demo.arb finished" sample_data/demo_log.txt \
  || { echo "FAIL: demo_log.txt does not say the batch file finished"; exit 1; }
echo "demo.arb: all outputs written in $((t1 - t0)) ms"

step "OPT on region × size, written to Excel"
cat > sample_data/smoke_opt.arb <<'ARB'
<LOGBOOK> "smoke_opt_log.txt"
<OPENMICRODATA> "enterprise.asc"
<OPENMETADATA> "enterprise.rda"
<SPECIFYTABLE> "region""size"|"turnover"||
<SAFETYRULE> NK(3,75)|FREQ(3,20)
<READMICRODATA>
<RECODE> 1, size, "size3.grc"
<SUPPRESS> OPT(1, 1)
<WRITETABLE> (1, 1, QU+, "smoke_opt.xlsx")
ARB
"$APP" batch sample_data/smoke_opt.arb > opt.out
grep -q "proven optimal" sample_data/smoke_opt_log.txt \
  || { echo "FAIL: OPT did not prove its pattern optimal"; cat sample_data/smoke_opt_log.txt; exit 1; }
grep -q "Audit passed" sample_data/smoke_opt_log.txt \
  || { echo "FAIL: no passed audit in the log"; exit 1; }
if [ -n "$PYCHECK" ]; then
  "$PYCHECK" - sample_data/smoke_opt.xlsx <<'PY'
import sys

import openpyxl

wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
ws = wb.worksheets[0]
rows = [r for r in ws.iter_rows(values_only=True) if any(v is not None for v in r)]
values = [v for r in rows for v in r]
assert str(values[0]).startswith("region × size"), values[0]
assert "x" in values, "no suppressed cell (x) in the workbook"
assert any(isinstance(v, float) for v in values), "no published number in the workbook"
print(f"smoke_opt.xlsx opens with openpyxl: {len(rows)} rows, {values.count('x')} cells x")
PY
else
  echo "FAIL: no Python with openpyxl to read the workbook (set SMOKE_PYTHON)"
  exit 1
fi

step "Help → User guide offline (the window offscreen)"
t0=$(ms)
"$APP" --check-help
t1=$(ms)
echo "GUI started, Help checked and closed in $((t1 - t0)) ms"

echo "smoke test passed: $BUNDLE"
