#!/usr/bin/env bash
# Installs the two offline trace checkers from ../shared/tools/trace-check into BUILD_DIR/trace-check
# (the shared folder is read-only; npm ci pins @paulirish/trace_engine by the lock file).
#   tests/trace_check/install.sh [BUILD_DIR]   (default: <source>/build; ctest passes its own build folder)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/../shared/tools/trace-check"
dst="${1:-$root/build}/trace-check"
if [ ! -d "$src" ]; then echo "trace-check: $src not found (../shared must sit beside the clone)" >&2; exit 1; fi
if [ -f "$dst/node_modules/@paulirish/trace_engine/package.json" ] && cmp -s "$src/package-lock.json" "$dst/package-lock.json"; then
  exit 0
fi
rm -rf "$dst" && mkdir -p "$dst"
cp -r "$src/." "$dst/"
chmod -R u+w "$dst"
(cd "$dst" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
