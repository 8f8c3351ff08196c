#!/usr/bin/env bash
# A point that cannot run is a row with its status and error, the other points still run, and the exit code says
# that some failed (1). Bad sweep input is refused up front: exit 2, a located message, nothing written.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scenario=scenarios/sweep-cp-seqlen.yaml
fail() { echo "FAIL: $*"; exit 1; }

# The platform has 2 x 8 = 16 GPUs: cp 32 cannot run; 1000 tokens are not divisible by 2 * cp (zigzag).
set +e
"$cpsim" sweep $scenario -j 2 -o "$tmp/s" --axis parallel.cp=8,32 --axis run.seq_len=32K,1000 2> "$tmp/log"; rc=$?
set -e
[ "$rc" = 1 ] || { cat "$tmp/log"; fail "exit code $rc, expected 1 (some points failed)"; }
/usr/bin/python3 - "$tmp/s" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
rows = {(r["parallel.cp"], r["run.seq_len"]): r for r in csv.DictReader(open(os.path.join(d, "sweep.csv")))}
assert len(rows) == 4, rows
ok = rows[("8", "32K")]
assert ok["status"] == "ok" and ok["error"] == "" and float(ok["makespan_s"]) > 0, ok
# The worker's one-line message, as `cpsim run --set` prints it (tests/bad_scenarios/cp_too_large.expected).
for s in ("32K", "1000"):
    r = rows[("32", s)]
    assert r["status"] == "invalid", r
    assert r["error"] == "--set:1:1: parallel.cp: cp x tp = 32 x 1 = 32 GPUs, but the platform has 16", r
    assert r["makespan_s"] == "", r
r = rows[("8", "1000")]
assert r["status"] == "invalid", r
assert r["error"] == ("--set:1:1: run.seq_len: S = 1000 is not divisible by 16 "
                      "(zigzag partition over cp = 8 needs S % 16 == 0)"), r
record = json.load(open(os.path.join(d, "sweep.json")))
assert record["status_counts"] == {"invalid": 3, "ok": 1}, record["status_counts"]
assert not os.path.exists(os.path.join(d, "points", "3")), "a failed point left a folder"  # created lazily
print("failed points recorded with their errors")
PY
grep -q "sweep: 1 of 4 points ok, 3 failed" "$tmp/log" || fail "final line"

# Bad input: exit 2, the message, no sweep files.
expect_refused() {  # expected-message, then the sweep arguments
  local want=$1; shift
  set +e
  "$cpsim" sweep "$@" -o "$tmp/bad" 2> "$tmp/bad.log"; local rc=$?
  set -e
  [ "$rc" = 2 ] || { cat "$tmp/bad.log"; fail "$*: exit $rc, expected 2"; }
  grep -qxF -- "$want" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "$*: expected message: $want"; }
  [ ! -e "$tmp/bad/sweep.csv" ] || fail "$*: wrote sweep.csv"
}
expect_refused "--axis:1:1: parallel.cp: empty value in '2,'" $scenario --axis parallel.cp=2,
expect_refused "--shard:1:1: 3/3: expected 0 <= I < N" $scenario --shard 3/3
expect_refused "--set:1:1: parallel.cp: 'parallel.cp' is swept; pin it with --axis parallel.cp=VALUE" \
  $scenario --set parallel.cp=4
# An axis the scenario has no key for would fail every point: refused at the axis before anything runs.
expect_refused "--axis:1:1: sweep.parallel.cpx: the scenario has no such key (every point would fail)" \
  $scenario --axis parallel.cpx=1,2
cat > "$tmp/bad_block.yaml" <<YAML
name: bad-block
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8}
model: $src/models/llama3-8b.yaml
run: {seq_len: 32K}
sweep:
  parallel.cp: 4
YAML
expect_refused "$tmp/bad_block.yaml:6:16: sweep.parallel.cp: expected a non-empty list of values, e.g. [1, 2, 4]" \
  "$tmp/bad_block.yaml"
sed 's/  parallel.cp: 4/  model.layerz: [1, 2]/' "$tmp/bad_block.yaml" > "$tmp/bad_key.yaml"
expect_refused "$tmp/bad_key.yaml:6:3: sweep.model.layerz: the scenario has no such key (every point would fail)" \
  "$tmp/bad_key.yaml"
# `cpsim run` validates the block too, and otherwise ignores it (the base values run).
set +e
"$cpsim" run "$tmp/bad_block.yaml" -o "$tmp/run_bad" 2>/dev/null; rc=$?
set -e
[ "$rc" = 2 ] || fail "cpsim run accepted a bad sweep block (exit $rc)"
"$cpsim" run $scenario -o "$tmp/run" --set outputs.trace=false 2>/dev/null
/usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['scenario']; \
assert (s['parallel']['cp'], s['run']['seq_len']) == (8, 131072), s" "$tmp/run/summary.json"
echo "sweep failures ok"
