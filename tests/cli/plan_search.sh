#!/usr/bin/env bash
# `cpsim plan --search` ranks the plans of its space and writes the winner as a runnable scenario. Oracles: on a
# 2-GPU budget the space is small enough to run exhaustively by hand (tp 1 with cp 1, with or without two pipeline
# stages, or cp 2 under ring, allgather and ulysses; tp 2 with cp 1; the second stage adds the ring's contiguous and
# striped partitions, ring being among the three best, and nothing more: tp 1 has no placement or contention choice), and the winner must be the fastest of those runs; the winner's scenario, rerun, gives
# the winner's makespan bit for bit; rows are ranked fits-first by makespan, then by least overflow.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
common=(--set model.layers=2 --set run.seq_len=32K)

"$cpsim" plan scenarios/quickstart.yaml --search --budget 2 -j 2 -o "$tmp/plan" "${common[@]}" \
  > "$tmp/table.txt" 2> "$tmp/plan.log" || { cat "$tmp/plan.log"; fail "plan --search exit code"; }
grep -q "^   1  " "$tmp/table.txt" || fail "no ranked table on stdout"

# Every plan of the space, run by hand.
best=""
for plan in "parallel.cp=1 parallel.tp=1" "parallel.cp=1 parallel.tp=1 parallel.pp=2" "parallel.cp=2 parallel.tp=1 cp.dense.algorithm=ring" \
            "parallel.cp=2 parallel.tp=1 cp.dense.algorithm=allgather" \
            "parallel.cp=2 parallel.tp=1 cp.dense.algorithm=ulysses" "parallel.cp=1 parallel.tp=2" \
            "parallel.cp=2 parallel.tp=1 cp.dense.algorithm=ring cp.dense.partition=contiguous" \
            "parallel.cp=2 parallel.tp=1 cp.dense.algorithm=ring cp.dense.partition=striped"; do
  sets=(); for s in $plan; do sets+=(--set "$s"); done
  dir="$tmp/hand-$(echo "$plan" | tr ' =.' '___')"
  "$cpsim" run scenarios/quickstart.yaml -o "$dir" "${common[@]}" "${sets[@]}" --set outputs.trace=false >/dev/null 2>&1
  best="$best $(/usr/bin/python3 -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["makespan_s"]))' "$dir/summary.json")"
done

"$cpsim" run "$tmp/plan/winner.yaml" -o "$tmp/winner" --set outputs.trace=false >/dev/null 2>&1
/usr/bin/python3 - "$tmp/plan/plans.csv" "$tmp/winner/summary.json" $best <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ranked = [r for r in rows if r["rank"]]
assert len(ranked) == 8, [r["plan"] for r in rows]                      # the whole 2-GPU space was simulated
hand = [float(x) for x in sys.argv[3:]]
assert float(ranked[0]["makespan_s"]) == min(hand), (ranked[0], hand)   # the winner is the exhaustive optimum
assert sorted(float(r["makespan_s"]) for r in ranked) == sorted(hand)
keys = [(r["fits"] != "true", float(r["memory_overflow_bytes"]), float(r["makespan_s"])) for r in ranked]
assert keys == sorted(keys), keys                          # fits first by makespan; then least overflow first
winner = json.load(open(sys.argv[2]))
assert winner["makespan_s"] == float(ranked[0]["makespan_s"]), (winner["makespan_s"], ranked[0]["makespan_s"])
print(f"plan search: winner {ranked[0]['plan']} = exhaustive optimum {min(hand)} s; winner.yaml reruns to it")
PY
