#!/usr/bin/env bash
# An output folder that cannot be created stops the run with one line on stderr and exit code 1 (not a crash, not
# a backtrace), and nothing is written.
set -u
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
touch "$tmp/a-file"
"$cpsim" -q run scenarios/quickstart.yaml -o "$tmp/a-file/out" --set model.layers=1 2>"$tmp/err" >/dev/null; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: exit code $rc, expected 1"; exit 1; }
[ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "FAIL: expected one line:"; cat "$tmp/err"; exit 1; }
grep -q "^cpsim: error: .*$tmp/a-file/out" "$tmp/err" || { echo "FAIL: message:"; cat "$tmp/err"; exit 1; }
echo "output errors: ok"
