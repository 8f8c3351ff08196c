#!/usr/bin/env bash
# A traced run is simulated collapsed (one GPU per TP orbit) and its trace draws every GPU from its representative,
# rotated. Oracle: the full simulation's trace (--no-fast-path) of the same scenario: the same events, lanes included,
# once task ids (xfer) and arrow ids (which number tasks differently) are left out; summary.json byte-identical;
# both trace checkers pass on the collapsed trace. Covers prefill ring and Ulysses, training, decode, TP overlap with
# micro-batches, staggered contention (per-class link copies) and a GPU / layer subset.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
base=(bench/ring-70b-1m.yaml --set parallel.cp=4 --set platform.nodes=4 --set run.seq_len=64K --set model.layers=3
      --set outputs.trace=true)
n=0
same() {
  n=$((n + 1))
  "$cpsim" run "${base[@]}" "$@" -o "$tmp/c$n" >/dev/null 2>&1 || { echo "FAIL: cpsim run $*"; exit 1; }
  "$cpsim" run "${base[@]}" "$@" --no-fast-path -o "$tmp/f$n" >/dev/null 2>&1 || { echo "FAIL: --no-fast-path $*"; exit 1; }
  grep -q '"collapsed": true' "$tmp/c$n/engine.json" || { echo "FAIL: not collapsed: $*"; exit 1; }
  cmp -s "$tmp/c$n/summary.json" "$tmp/f$n/summary.json" || { echo "FAIL: summaries differ: $*"; exit 1; }
  /usr/bin/python3 "$build/trace-check/perfetto_json_lint.py" "$tmp/c$n/trace.json" --quiet > "$tmp/lint.json"
  node "$build/trace-check/devtools_check.mjs" "$tmp/c$n/trace.json" > "$tmp/dev.json"
  /usr/bin/python3 - "$tmp/c$n/trace.json" "$tmp/f$n/trace.json" "$tmp/lint.json" "$tmp/dev.json" "$*" <<'PY'
import collections, json, sys
def events(path):
    out = collections.Counter()
    for e in json.load(open(path))["traceEvents"]:
        e = dict(e)
        e.pop("id", None)  # arrow ids count arrows in writing order
        if "args" in e:
            e["args"] = {k: v for k, v in e["args"].items() if k != "xfer"}  # task ids differ
        out[json.dumps(e, sort_keys=True)] += 1
    return out
collapsed, full = events(sys.argv[1]), events(sys.argv[2])
lint, dev = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
assert lint["errors"] == {} and lint["warnings"] == {}, (lint["errors"], lint["warnings"])
assert dev["slices"] == lint["slices"] and dev["flows"] == lint["flows_connected"], (dev["slices"], lint["slices"])
extra, missing = collapsed - full, full - collapsed
assert not extra and not missing, (list(extra)[:2], list(missing)[:2])
print(f"ok   {sys.argv[5] or 'prefill ring'}: {sum(full.values())} events equal")
PY
}
same
same --set cp.dense.algorithm=ulysses --set parallel.cp=8 --set platform.nodes=8
same --set run.phase=train
same --set run.phase=decode --set cp.dense.algorithm=tree
same --set parallel.tp_comm_overlap=true --set parallel.sequence_parallel=true --set run.micro_batches=2
same --set contention.mode=staggered
same --set 'outputs.trace_gpus=[1, 9-10]' --set outputs.trace_layers=1
