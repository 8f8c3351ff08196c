#!/usr/bin/env bash
# run.recompute costs time as well as saving memory. Oracle: full recomputation (activation checkpointing) replays
# every layer's forward, kernels and collectives, inside its backward, after the upstream gradient arrives, so on a
# compute-bound run the step grows by the forward's makespan (the same scenario's prefill), and each backward
# layer's CP bytes grow by one forward layer's (the volumes row still matches its closed form). Selective
# recomputation adds no task in this model (layer_stack.cpp says why): the same step time as none.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
common=(scenarios/train-ring-vs-ulysses.yaml --set model.layers=2 --set outputs.trace=false)
for r in none selective full; do "$cpsim" -q run "${common[@]}" --set run.recompute=$r -o "$tmp/$r" > /dev/null; done
"$cpsim" -q run "${common[@]}" --set run.phase=prefill -o "$tmp/prefill" > /dev/null
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
s = {r: json.load(open(f"{tmp}/{r}/summary.json")) for r in ("none", "selective", "full", "prefill")}
bad = []
if s["selective"]["makespan_s"] != s["none"]["makespan_s"]: bad.append("selective changed the step time")
grown = s["full"]["makespan_s"] - s["none"]["makespan_s"]
if abs(grown - s["prefill"]["makespan_s"]) > 0.02 * s["prefill"]["makespan_s"]:
    bad.append(f"full adds {grown} s, the forward takes {s['prefill']['makespan_s']} s")
vol = {r: {v["cp_algorithm"]: v for v in s[r]["volumes"]} for r in ("none", "full")}
fwd, bwd = vol["none"]["ring"]["simulated_max_rank_received_bytes_per_layer"], \
    vol["none"]["ring-backward"]["simulated_max_rank_received_bytes_per_layer"]
if vol["full"]["ring-backward"]["simulated_max_rank_received_bytes_per_layer"] != fwd + bwd:
    bad.append(f"full backward bytes {vol['full']['ring-backward']} != {fwd} + {bwd}")
if not all(v["match"] for v in vol["full"].values()): bad.append("a volumes row does not match its formula")
print("FAIL " + "; ".join(bad) if bad else
      f"ok   full recompute adds {grown * 1e3:.3f} ms (forward {s['prefill']['makespan_s'] * 1e3:.3f} ms)")
sys.exit(1 if bad else 0)
PY
