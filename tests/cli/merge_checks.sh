#!/usr/bin/env bash
# merge verifies what it joins (issue: hardening, "Merge verifies what it joins"): shards of two versions of the
# scenario, a fractional index, a negative makespan and a deleted point folder are refused (exit 2, one line, no
# output); a shard with a failed point merges but exits 1, as the unsharded sweep does.
# Oracle: the rules in docs/robustness.md. Usage: merge_checks.sh CPSIM SOURCE_DIR
set -u
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cp scenarios/sweep-cp-seqlen.yaml "$tmp/s.yaml"
sed -i 's|models/|'"$src"'/models/|' "$tmp/s.yaml"
sweep() { "$cpsim" sweep "$tmp/s.yaml" -j 2 --axis parallel.cp=2,4 --axis run.seq_len=32K --set model.layers=1 "$@" \
  >/dev/null 2>&1; }
sweep --shard 0/2 -o "$tmp/a" || fail "shard 0"
sweep --shard 1/2 -o "$tmp/b" || fail "shard 1"
"$cpsim" merge "$tmp/a" "$tmp/b" -o "$tmp/m" >/dev/null 2>&1 || fail "a clean merge"
refused() {  # refused "what" "expected substring" shard-dirs...
  local what=$1 want=$2; shift 2
  "$cpsim" merge "$@" -o "$tmp/out" >/dev/null 2>"$tmp/err"; local rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, expected 2 ($(cat "$tmp/err"))"
  [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF -- "$want" "$tmp/err" || fail "$what: $(cat "$tmp/err")"
  [ ! -e "$tmp/out" ] || fail "$what: wrote an output"
}
tamper() {  # tamper NAME PYTHON-EXPRESSION-ON-j
  rm -rf "$tmp/$1"; cp -r "$tmp/b" "$tmp/$1"
  /usr/bin/python3 - "$tmp/$1/sweep.json" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(j, open(sys.argv[1], "w"))
PY
}
tamper hash 'j["scenario_fnv1a64"] = "0" * 16'
refused "another scenario version" "not the same sweep" "$tmp/a" "$tmp/hash"
tamper frac 'j["points"][0]["index"] = 1.5'
refused "a fractional index" "a point index is not a whole number" "$tmp/a" "$tmp/frac"
tamper neg 'j["points"][0]["metrics"]["makespan_s"] = -1'
refused "a negative makespan" "has no valid makespan_s" "$tmp/a" "$tmp/neg"
rm -rf "$tmp/gone"; cp -r "$tmp/b" "$tmp/gone"; rm -rf "$tmp/gone/points"
refused "a deleted point folder" "is ok but" "$tmp/a" "$tmp/gone"
# A failed point: the merge is written and exits 1.
tamper failed 'j["points"][0]["status"] = "failed"; j["points"][0]["error"] = "x"'
"$cpsim" merge "$tmp/a" "$tmp/failed" -o "$tmp/mf" >/dev/null 2>&1; rc=$?
[ $rc = 1 ] || fail "a failed point: exit $rc, expected 1"
[ -f "$tmp/mf/sweep.csv" ] || fail "a failed point: no merged sweep.csv"
echo "merge checks: ok"
