#!/usr/bin/env bash
# `cmake --install` gives a tree that runs from any folder on its own data: the installed quickstart's summary names
# the installed model file (oracle: the path is under the prefix, so nothing was read from the sources), and
# CPSIM_DATA_DIR pointing elsewhere is the only root (oracle: an empty folder makes the run fail, exit 2).
# --version prints the CMake project version; -q silences the info logs; logs go to stderr, never stdout.
set -eu
cpsim=$1; src=$2; build=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/p" >/dev/null
version=$(sed -n 's/^project(cpsim VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
"$tmp/p/bin/cpsim" --version | grep -q "^cpsim $version (git " || { echo "FAIL: --version"; exit 1; }
cd "$tmp"
"$tmp/p/bin/cpsim" run "$tmp/p/share/cpsim/scenarios/quickstart.yaml" -o "$tmp/out" --set model.layers=1 \
  >"$tmp/stdout" 2>"$tmp/stderr"
grep -q "\"$tmp/p/share/cpsim/models/llama3-8b.yaml\"" "$tmp/out/summary.json" || { echo "FAIL: model path"; exit 1; }
if grep -q "^\[info\]" "$tmp/stdout"; then echo "FAIL: logs on stdout"; exit 1; fi
grep -q "^\[info\]" "$tmp/stderr" || { echo "FAIL: no logs on stderr"; exit 1; }
"$tmp/p/bin/cpsim" -q run "$tmp/p/share/cpsim/scenarios/quickstart.yaml" -o "$tmp/out2" --set model.layers=1 \
  2>"$tmp/quiet" >/dev/null
[ ! -s "$tmp/quiet" ] || { echo "FAIL: -q still logs:"; cat "$tmp/quiet"; exit 1; }
mkdir "$tmp/empty"
set +e
CPSIM_DATA_DIR="$tmp/empty" "$tmp/p/bin/cpsim" run "$tmp/p/share/cpsim/scenarios/quickstart.yaml" -o "$tmp/out3" \
  >/dev/null 2>&1; rc=$?
set -e
[ $rc -eq 2 ] || { echo "FAIL: CPSIM_DATA_DIR=empty exit $rc, expected 2"; exit 1; }
echo "install and version: ok"
