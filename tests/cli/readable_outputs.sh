#!/usr/bin/env bash
# The outputs people read: the headline names the figure of each phase (TTFT / time per output token / step time),
# trace names are JSON-escaped (a link named spine"q\x still yields a trace both checkers accept), layer slices say
# which decode step, micro-batch or backward pass they belong to, and each GPU's lanes sort layers, compute, then
# communication. Oracles: the phase definitions in docs/outputs.md, the JSON grammar (two independent parsers), and
# the scenario's own step / layer counts.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. Headline figure per phase, on stdout even under -q (it is the result; logs go to stderr).
"$cpsim" -q run scenarios/quickstart.yaml --set model.layers=2 -o "$tmp/p" > "$tmp/p.log" 2>/dev/null
grep -q "quickstart: TTFT .* (prefill of 131072 tokens; 2 layers of llama3-8b" "$tmp/p.log" || fail "prefill headline: $(cat "$tmp/p.log")"
"$cpsim" run scenarios/decode-tree-vs-passq.yaml --set model.layers=2 -o "$tmp/d" > "$tmp/d.log" 2>/dev/null
grep -q "time per output token .* (4 tokens in " "$tmp/d.log" || fail "decode headline: $(cat "$tmp/d.log")"
"$cpsim" run scenarios/train-ring-vs-ulysses.yaml --set model.layers=2 --set outputs.trace=true -o "$tmp/t" \
  > "$tmp/t.log" 2>/dev/null
grep -q "step time .* (forward + backward of 131072 tokens" "$tmp/t.log" || fail "train headline: $(cat "$tmp/t.log")"
grep -q "busiest GPU [0-9]*: compute .*, exposed communication .*, waiting on other ranks" "$tmp/p.log" || fail "busiest GPU line"

# 2. A name with a quote and a backslash: an XML platform whose shared link id is  spine"q\x  (legal XML, written
#    &quot;). Its counter track carries that name, so the trace is valid JSON only if names are escaped.
#    (Scenario names themselves are plain file names, validated at the loader, so they cannot carry a quote.)
sed 's/"spine"/"spine\&quot;q\\x"/g' platforms/h100-2x4-spine.xml > "$tmp/sp.xml"
sed "s#platforms/h100-2x4-spine.xml#$tmp/sp.xml#" scenarios/ring-spine-xml.yaml > "$tmp/q.yaml"
"$cpsim" run "$tmp/q.yaml" --set model.layers=1 --set outputs.trace=true -o "$tmp/q" >/dev/null 2>&1 \
  || fail "run on a platform whose link id has a quote and a backslash"
/usr/bin/python3 "$build/trace-check/perfetto_json_lint.py" "$tmp/q/trace.json" --quiet > "$tmp/lint.json"
node "$build/trace-check/devtools_check.mjs" "$tmp/q/trace.json" > "$tmp/dev.json"

/usr/bin/python3 - "$tmp" <<'PY'
import json, sys, os
tmp = sys.argv[1]
bad = []
lint, dev = json.load(open(f"{tmp}/lint.json")), json.load(open(f"{tmp}/dev.json"))
if lint["errors"]: bad.append(f"lint errors on the quoted name: {lint['errors']}")
summary_q = json.load(open(f"{tmp}/q/summary.json"))
if dev["slices"] != summary_q["trace"]["slices"]: bad.append(f"devtools slices {dev['slices']} != {summary_q['trace']['slices']}")
def events(run):
    t = json.load(open(f"{tmp}/{run}/trace.json"))
    return t["traceEvents"] if isinstance(t, dict) else t
# The link counter keeps its exact name (oracle: the link id in sp.xml, after XML unescaping).
counters = {e["name"] for e in events("q") if e.get("ph") == "C"}
if 'link spine"q\\x' not in counters:
    bad.append(f"no counter named link spine\"q\\x among {sorted(counters)[:8]}")

def layer_names(run):
    return {e["name"] for e in events(run) if e.get("ph") == "X" and e.get("cat") == "layer"}
# Decode: 4 steps x 2 layers, each slice named by its step (oracle: run.decode_tokens = 4, model.layers = 2).
want_d = {f"decode step {s} · layer {l}" for s in range(4) for l in range(2)}
if layer_names("d") != want_d: bad.append(f"decode layer names {sorted(layer_names('d'))}")
# Training: each layer's forward and backward slice (oracle: model.layers = 2).
want_t = {"layer 0", "layer 1", "layer 0 backward", "layer 1 backward"}
if layer_names("t") != want_t: bad.append(f"train layer names {sorted(layer_names('t'))}")
# Lane order per GPU: every "layers" lane before "compute", compute before every communication lane.
for run in ("p", "d", "t"):
    ev = events(run)
    lane = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    order = {(e["pid"], e["tid"]): e["args"]["sort_index"] for e in ev if e.get("name") == "thread_sort_index"}
    by_pid = {}
    for key, name in lane.items(): by_pid.setdefault(key[0], []).append((order[key], name))
    for pid, lanes in by_pid.items():
        names = [n for _, n in sorted(lanes)]
        rank = [0 if n.startswith("layers") else 1 if n == "compute" else 2 for n in names]
        if rank != sorted(rank) or len({o for o, _ in lanes}) != len(lanes):
            bad.append(f"{run} pid {pid} lane order {names}")
print("FAIL " + "; ".join(bad) if bad else "ok   headline per phase, escaped names, layer slice names, lane order")
sys.exit(1 if bad else 0)
PY
