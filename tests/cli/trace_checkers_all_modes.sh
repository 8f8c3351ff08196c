#!/usr/bin/env bash
# Every workload family writes a trace that passes both checkers of ../shared/tools/trace-check with the slice and
# flow counts cpsim reports in summary.json: dense ring/Ulysses/USP, decode (tree, pass-q), heterogeneous kinds
# (V4-like SWA+CSA/HCA, DSA, MoBA, LASP-1), gzip'd included. Oracle: cpsim's own accounting, read by two parsers.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
check() {
  n=$((n + 1)); local out="$tmp/run$n"
  "$cpsim" run "$@" -o "$out" >/dev/null 2>&1 || { echo "FAIL: cpsim run $*"; exit 1; }
  local trace="$out/trace.json"
  if [ -f "$out/trace.json.gz" ]; then gzip -dc "$out/trace.json.gz" > "$tmp/t$n.json"; trace="$tmp/t$n.json"; fi
  /usr/bin/python3 "$build/trace-check/perfetto_json_lint.py" "$trace" --quiet > "$tmp/lint.json"
  node "$build/trace-check/devtools_check.mjs" "$trace" > "$tmp/dev.json"
  /usr/bin/python3 - "$out/summary.json" "$tmp/lint.json" "$tmp/dev.json" "$*" <<'PY'
import json, sys
summary, lint, dev = (json.load(open(p)) for p in sys.argv[1:4])
t = summary["trace"]
checks = {"lint errors": (lint["errors"], {}), "lint warnings": (lint["warnings"], {}),
          "lint slices": (lint["slices"], t["slices"]), "devtools slices": (dev["slices"], t["slices"]),
          "lint flows": (lint["flows_connected"], t["flows"]), "devtools flows": (dev["flows"], t["flows"])}
bad = [f"{k}: {got} != {want}" for k, (got, want) in checks.items() if got != want]
print(("FAIL " if bad else "ok   ") + sys.argv[4] + (": " + "; ".join(bad) if bad else f" ({t['slices']} slices, {t['flows']} flows)"))
sys.exit(1 if bad else 0)
PY
}
check scenarios/quickstart.yaml --set model.layers=2 --set cp.dense.algorithm=ulysses
check scenarios/quickstart.yaml --set model.layers=2 --set cp.dense.algorithm=usp --set cp.dense.ulysses_degree=2
check scenarios/decode-tree-vs-passq.yaml --set model.layers=2
check scenarios/decode-tree-vs-passq.yaml --set model.layers=2 --set cp.dense.algorithm=pass-q
check scenarios/v4-1m.yaml --set model.layers=4 --set platform.nodes=1 --set parallel.tp=1
check scenarios/dsa-64k.yaml --set model.layers=2
check scenarios/moba-skew.yaml --set model.layers=2
check scenarios/quickstart.yaml --set model=models/linear-8b.yaml --set model.layers=2 --set cp.linear.algorithm=lasp1
# Contention traffic: TP/EP lanes beside CP (MoE, EP over both nodes, skewed routing, exclusive waits, staggered's
# per-class network copies), sequence
# parallelism, and training with DP replicas and gradient all-reduce lanes.
check scenarios/contention-modes.yaml --set model.layers=4 --set 'model.attention.pattern=[dense]' --set contention.mode=exclusive --set parallel.ep_hot_share=0.2 --set outputs.trace=true
check scenarios/contention-modes.yaml --set model.layers=2 --set 'model.attention.pattern=[dense]' --set contention.mode=staggered --set outputs.trace=true
check scenarios/quickstart.yaml --set model.layers=2 --set parallel.cp=4 --set parallel.tp=2 --set parallel.sequence_parallel=true
check scenarios/train-ring-vs-ulysses.yaml --set model.layers=2 --set parallel.cp=2 --set parallel.tp=2 --set parallel.dp=2 --set outputs.trace=true
# Pipeline stages: the seed's CP=8 + PP=4 prefill (one stage per node, activations over InfiniBand), and a 1F1B /
# interleaved training step with DP replicas and their gradient all-reduce per stage.
check scenarios/pp4-cp8-1m.yaml --set model.layers=4 --set run.seq_len=64K
# The trace shows the four stages: every GPU's process names its stage (one stage per 8-GPU node).
for stage in 0 1 2 3; do
  grep -q "\"name\":\"node$stage gpu0 (stage $stage cp0 tp0)\"" "$tmp/run$n/trace.json" ||
    { echo "FAIL: no process named for stage $stage"; exit 1; }
done
check scenarios/pp4-cp8-1m.yaml --set model.layers=8 --set run.seq_len=32K --set run.phase=train --set parallel.cp=2 --set parallel.dp=2 --set 'parallel.order=[tp, cp, dp, pp]' --set parallel.pp_schedule=interleaved
# A subset (outputs.trace_gpus, outputs.trace_layers): the trace still passes both checkers, and holds only the listed
# GPUs' processes (plus node 0's link counters) and the listed model layers' slices; arrows only between listed GPUs.
check scenarios/quickstart.yaml --set model.layers=4 --set 'outputs.trace_gpus=[0, 2-3]' --set outputs.trace_layers=1-2
/usr/bin/python3 - "$tmp/run$n/trace.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["args"]["name"] for e in events if e.get("name") == "process_name"}
assert names == {"node0 gpu0 (cp0 tp0)", "node0 gpu2 (cp2 tp0)", "node0 gpu3 (cp3 tp0)", "node0 links"}, names
layers = {e["args"]["layer"] for e in events if e.get("ph") == "X" and "layer" in e.get("args", {})}
assert layers == {1, 2}, layers
print("ok   trace subset: GPUs 0, 2, 3 and layers 1-2 only")
PY
# Link counters grouped per node: on a 2-node XML platform with a spine, each node's NVLink ports and NICs sit under
# "node<k> links" and only the spine under "fabric links". Oracle: the link names the platform gives (n<k>_...).
check scenarios/ring-spine-xml.yaml --set model.layers=2
/usr/bin/python3 - "$tmp/run$n/trace.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
groups = {}
for e in events:
    if e.get("ph") == "C" and e.get("cat") == "link":
        groups.setdefault(names[e["pid"]], set()).add(e["name"])
assert set(groups) == {"node0 links", "node1 links", "fabric links"}, sorted(groups)
for k in (0, 1):
    assert all(n.startswith(f"link n{k}_") for n in groups[f"node{k} links"]), groups[f"node{k} links"]
assert not any(n.startswith("link n") for n in groups["fabric links"]), groups["fabric links"]
print(f"ok   link counters per node: {len(groups['node0 links'])} + {len(groups['node1 links'])} node tracks, "
      f"{len(groups['fabric links'])} fabric track")
PY
