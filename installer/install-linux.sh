#!/usr/bin/env bash
# Install argusqt for the current user on Linux: a private virtualenv in
# ~/.local/share/argusqt/venv, the `argusqt` command in ~/.local/bin and a desktop entry.
# Usage: bash installer/install-linux.sh [--uninstall]
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="${ARGUSQT_PREFIX:-$HOME/.local/share/argusqt}"
BIN="$HOME/.local/bin"
APPS="$HOME/.local/share/applications"
MIME="$HOME/.local/share/mime"

if [ "${1:-}" = "--uninstall" ]; then
  rm -rf "$PREFIX" "$BIN/argusqt" "$APPS/argusqt.desktop" "$MIME/packages/argusqt-mime.xml"
  command -v update-mime-database >/dev/null && update-mime-database "$MIME" || true
  echo "argusqt removed"
  exit 0
fi

python3 -m venv "$PREFIX/venv"
"$PREFIX/venv/bin/python" -m pip install -q --upgrade pip
"$PREFIX/venv/bin/python" -m pip install -q "$HERE"
mkdir -p "$BIN" "$APPS"
ln -sf "$PREFIX/venv/bin/argusqt" "$BIN/argusqt"
sed -e "s|@EXEC@|$PREFIX/venv/bin/argusqt|" \
    -e "s|@ICON@|$PREFIX/venv/share/argusqt/resources/icons/app.svg|" \
    "$HERE/installer/argusqt.desktop.in" > "$APPS/argusqt.desktop"
# the desktop entry claims argusqt's own types only (.arb, .aqs, .rda), defined here
mkdir -p "$MIME/packages"
cp "$HERE/installer/argusqt-mime.xml" "$MIME/packages/argusqt-mime.xml"
command -v update-mime-database >/dev/null && update-mime-database "$MIME" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$APPS" || true
echo "argusqt installed: run 'argusqt' (make sure $BIN is on your PATH)"
