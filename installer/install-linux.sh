#!/usr/bin/env bash
# Install argusqt for the current user on Linux: a private virtualenv in
# ~/.local/share/argusqt/venv (or, with --bundle, a copy of the bundle that
# installer/build.sh made: no Python needed), the `argusqt` command in ~/.local/bin and a
# desktop entry.
# Usage: bash installer/install-linux.sh [--uninstall | --bundle [dist/argusqt]]
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

if [ "${1:-}" = "--bundle" ]; then
  # the built folder, copied whole (a new copy replaces the old one); nothing is compiled
  SRC="${2:-$HERE/dist/argusqt}"
  [ -x "$SRC/argusqt" ] || { echo "no bundle at $SRC (run: bash installer/build.sh)" >&2; exit 1; }
  SRC="$(cd "$SRC" && pwd)"
  rm -rf "$PREFIX/bundle.new"
  mkdir -p "$PREFIX"
  cp -a "$SRC" "$PREFIX/bundle.new"
  rm -rf "$PREFIX/bundle" && mv "$PREFIX/bundle.new" "$PREFIX/bundle"
  EXEC="$PREFIX/bundle/argusqt"
  ICON="$PREFIX/bundle/_internal/resources/icons/app.svg"
else
  python3 -m venv "$PREFIX/venv"
  "$PREFIX/venv/bin/python" -m pip install -q --upgrade pip
  "$PREFIX/venv/bin/python" -m pip install -q "$HERE"
  EXEC="$PREFIX/venv/bin/argusqt"
  ICON="$PREFIX/venv/share/argusqt/resources/icons/app.svg"
fi
mkdir -p "$BIN" "$APPS"
ln -sf "$EXEC" "$BIN/argusqt"
sed -e "s|@EXEC@|$EXEC|" -e "s|@ICON@|$ICON|" \
    "$HERE/installer/argusqt.desktop.in" > "$APPS/argusqt.desktop"
# the desktop entry claims argusqt's own types only (.arb, .aqs, .rda), defined here
mkdir -p "$MIME/packages"
cp "$HERE/installer/argusqt-mime.xml" "$MIME/packages/argusqt-mime.xml"
command -v update-mime-database >/dev/null && update-mime-database "$MIME" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$APPS" || true
echo "argusqt installed: run 'argusqt' (make sure $BIN is on your PATH)"
