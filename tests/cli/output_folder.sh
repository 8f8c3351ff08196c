#!/usr/bin/env bash
# The output-folder contract (docs/robustness.md, "Output folders"): a run or sweep replaces its folder whole, never
# mixes two runs' files, refuses a folder that is not a cpsim output or that a live process holds, and stops on
# SIGINT / SIGTERM with exit 130 / 143, leaving the previous output intact and no staging folder or lock behind.
# Oracles: the contract's rules, stated beside each check. Usage: output_folder.sh CPSIM SOURCE_DIR
set -u
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'kill $holder 2>/dev/null; rm -rf "$tmp"' EXIT
holder=
fail() { echo "FAIL: $*"; exit 1; }
q=scenarios/quickstart.yaml
small=(--set model.layers=1 --set run.seq_len=32K)

# 1. A second run without a trace leaves no trace of the first behind (the folder is replaced whole).
"$cpsim" run $q -o "$tmp/d" "${small[@]}" >/dev/null 2>&1 || fail "first run"
[ -f "$tmp/d/trace.json" ] || fail "first run wrote no trace"
"$cpsim" run $q -o "$tmp/d" "${small[@]}" --set outputs.trace=false >/dev/null 2>&1 || fail "second run"
[ ! -e "$tmp/d/trace.json" ] || fail "the first run's trace.json survived"
[ -f "$tmp/d/summary.json" ] || fail "no summary"
ls -a "$tmp" | grep -q -e staging -e '\.lock' && fail "staging folder or lock left: $(ls -a "$tmp")"

# 2. A 2-point sweep into a 6-point sweep's folder keeps none of points 2-5 nor the comparison tables.
sweep=scenarios/sweep-cp-seqlen.yaml
"$cpsim" sweep $sweep -j 2 -o "$tmp/s" --axis parallel.cp=2,4,8 --axis run.seq_len=32K,64K --set model.layers=1 >/dev/null \
  2>/dev/null || fail "6-point sweep"
[ -d "$tmp/s/points/5" ] || fail "6-point sweep wrote no point 5"
"$cpsim" sweep $sweep -j 2 -o "$tmp/s" --axis parallel.cp=2,4 --axis run.seq_len=32K --set model.layers=1 >/dev/null \
  2>/dev/null || fail "2-point sweep"
[ "$(ls "$tmp/s/points" | sort | tr '\n' ' ')" = "0 1 " ] || fail "points left: $(ls "$tmp/s/points")"
[ "$(grep -c . "$tmp/s/sweep.csv")" = 3 ] || fail "sweep.csv has not 2 rows"

# 3. A folder that is not a cpsim output is refused (exit 2) and left untouched.
mkdir "$tmp/mine"; echo keep > "$tmp/mine/precious"
"$cpsim" run $q -o "$tmp/mine" "${small[@]}" 2>"$tmp/err" >/dev/null; rc=$?
[ $rc = 2 ] || fail "non-cpsim folder: exit $rc, expected 2"
grep -q "is not a cpsim output folder" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ "$(cat "$tmp/mine/precious")" = keep ] && [ ! -e "$tmp/mine/summary.json" ] || fail "the folder was touched"

# 4. A folder locked by a live process is refused (exit 1, one line); a stale lock (dead process) is taken over.
sleep 60 & holder=$!
echo $holder > "$tmp/d.lock"
"$cpsim" -q run $q -o "$tmp/d" "${small[@]}" 2>"$tmp/err" >/dev/null; rc=$?
[ $rc = 1 ] || fail "locked folder: exit $rc, expected 1"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "is being written by process $holder" "$tmp/err" || fail "$(cat "$tmp/err")"
kill $holder; wait $holder 2>/dev/null
"$cpsim" run $q -o "$tmp/d" "${small[@]}" >/dev/null 2>&1 || fail "stale lock not taken over"
[ ! -e "$tmp/d.lock" ] || fail "lock left after the run"

# 5. SIGINT and SIGTERM while simulating: exit 130 / 143, the previous output intact, nothing staged left.
before=$(md5sum < "$tmp/d/summary.json")
for sig in INT TERM; do
  "$cpsim" run bench/ring-70b-1m.yaml -o "$tmp/d" --set parallel.cp=32 --set platform.nodes=32 --no-fast-path >/dev/null 2>&1 &
  pid=$!
  sleep 1.5
  kill -$sig $pid; wait $pid; rc=$?
  want=$([ $sig = INT ] && echo 130 || echo 143)
  [ $rc = $want ] || fail "SIG$sig: exit $rc, expected $want"
  [ "$(md5sum < "$tmp/d/summary.json")" = "$before" ] || fail "SIG$sig changed the previous output"
  ls -a "$tmp" | grep -q -e staging -e '\.lock' && fail "SIG$sig left: $(ls -a "$tmp")"
done
# 6. A sweep's default folder is out/NAME too: a name that is a path is refused before anything is written.
printf 'name: ../escape\nplatform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8}\nmodel: models/llama3-8b.yaml\nrun: {phase: prefill, seq_len: 32K}\nsweep: {parallel.cp: [1, 2]}\n' > "$tmp/esc.yaml"
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "$cpsim" sweep "$tmp/esc.yaml" -j 1 >/dev/null 2>"$tmp/err"); rc=$?
[ $rc = 2 ] && grep -q "name: '../escape' must be a plain file name" "$tmp/err" || fail "sweep name: exit $rc, $(cat "$tmp/err")"
[ ! -e "$tmp/escape" ] && [ -z "$(ls "$tmp/cwd")" ] || fail "sweep name: wrote outside its folder"
echo "output folder contract: ok"
