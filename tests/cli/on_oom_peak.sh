#!/usr/bin/env bash
# `run.on_oom: error` refuses a plan whose simulated memory peak overflows although its closed form fits. Oracle:
# quickstart at 4 layers with 4 interleaved micro-batches: the closed form counts one micro-batch's KV (6.6 GB with
# the 768 MiB reserve), the timeline holds all four (12.4 GB); a 70 GB framework reserve puts the capacity (80 GB)
# between the two. `validate` (closed form) accepts it; `run` refuses it after simulating, with one located line,
# exit 2, and no output folder. With `on_oom: warn` the same run writes summary.json with fits false.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sets=(--set run.micro_batches=4 --set model.layers=4 --set outputs.trace=false --set run.memory_reserve=70GB)

"$cpsim" validate scenarios/quickstart.yaml "${sets[@]}" --set run.on_oom=error > /dev/null 2>&1 \
  || fail "validate should accept a plan whose closed form fits"
set +e
"$cpsim" run scenarios/quickstart.yaml "${sets[@]}" --set run.on_oom=error -o "$tmp/refused" > /dev/null 2> "$tmp/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "run exit code $rc, expected 2"
line=$(grep -v "^\[" "$tmp/err" | tail -1)
case "$line" in
  "--set:1:1: run.on_oom: GPU "*"'s simulated peak needs "*" of 74.51 GiB HBM (over by "*"; largest term: "*"): it does not fit") ;;
  *) fail "unexpected error line: $line" ;;
esac
[ ! -e "$tmp/refused" ] || fail "an output folder was left behind"

"$cpsim" run scenarios/quickstart.yaml "${sets[@]}" -o "$tmp/warned" > /dev/null 2>&1 || fail "on_oom warn run failed"
/usr/bin/python3 - "$tmp/warned/summary.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert m["closed_form_bytes"] <= m["hbm_capacity_bytes"] < m["peak_bytes"], m   # fits in closed form, not at its peak
assert m["fits"] is False and m["overflow_bytes"] == m["peak_bytes"] - m["hbm_capacity_bytes"], m
print("on_oom: the simulated peak overflow is refused under error, flagged under warn")
PY
