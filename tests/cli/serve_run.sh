#!/usr/bin/env bash
# run.phase: serve end to end (docs/serving.md). Oracle: scenarios/serve-three-requests.yaml's TTFT and TPOT derived
# by hand from the step costs cpsim simulated (step_costs.csv, every length on the grid, so no interpolation):
#   r0 (t=0, 8K, 4 tokens) prefills alone: first token P8K; r1 (t=0.001) prefills next: first token 2 P8K; two decodes
#   of both (D2 each), r1's 3rd token at 2 P8K + 2 D2 (its last), r0's 4th at 2 P8K + 2 D2 + D1; r2 (t=5, 16K, 1 token)
#   on an idle instance: TTFT P16K.
# Then: same input, byte-identical outputs (cache or not); the trace passes both checkers; serve mistakes are
# located one-line errors with nothing written.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$cpsim" run scenarios/serve-three-requests.yaml -o "$tmp/a" > "$tmp/headline" 2>/dev/null || fail "serve run failed"
grep -q "served 3 of 3 requests" "$tmp/headline" || fail "headline: $(head -1 "$tmp/headline")"
/usr/bin/python3 - "$tmp/a" <<'PY' || exit 1
import csv, json, sys
d = sys.argv[1]
cost = {}
for r in csv.DictReader(open(f"{d}/step_costs.csv")):
    key = ("prefill", int(r["new_tokens"])) if r["kind"] == "prefill" else ("decode", int(r["batch"]), int(r["context"]))
    cost[key] = float(r["t_s"])
# Decode contexts are 8K + 1..3 tokens: between the grid points 8192 and 16384, interpolated linearly.
def D(b, ctx):
    lo, hi = cost[("decode", b, 8192)], cost[("decode", b, 16384)]
    return lo + (hi - lo) * (ctx - 8192) / 8192
P8, P16 = cost[("prefill", 8192)], cost[("prefill", 16384)]
t1 = 2 * P8 + D(2, 8192 + 1)           # both decode (contexts 8193 and 8193)
t2 = t1 + D(2, 8192 + 2)               # r1 reaches 3 tokens
t3 = t2 + D(1, 8192 + 3)               # r0 alone: its 4th
want = {0: (P8, (t3 - P8) / 3), 1: (2 * P8 - 0.001, (t2 - 2 * P8) / 2), 2: (P16, None)}
rows = {int(r["id"]): r for r in csv.DictReader(open(f"{d}/requests.csv"))}
bad = []
for i, (ttft, tpot) in want.items():
    got = float(rows[i]["ttft_s"])
    if abs(got - ttft) > 1e-9 * ttft: bad.append(f"r{i} ttft {got} != {ttft}")
    if tpot is not None and abs(float(rows[i]["tpot_s"]) - tpot) > 1e-9 * tpot: bad.append(f"r{i} tpot {rows[i]['tpot_s']} != {tpot}")
s = json.load(open(f"{d}/summary.json"))["serve"]
if s["requests"] != {"total": 3, "done": 3, "refused": 0, "unfinished": 0}: bad.append(f"requests {s['requests']}")
if s["instances"][0]["gpus"] != "0-7" or s["instances"][0]["cp"] != 2: bad.append(f"instance {s['instances'][0]}")
if abs(s["ttft_s"]["max"] - want[2][0]) > 1e-9: bad.append("ttft max")
if bad: print("FAIL " + "; ".join(bad)); sys.exit(1)
print(f"ok   hand derivation: P8K {P8:.6f} s, P16K {P16:.6f} s, r0 TPOT {want[0][1]:.6f} s")
PY

# Determinism, and the cache changes nothing: a second run reading the costs back writes the same files.
"$cpsim" -q run scenarios/serve-three-requests.yaml --set serve.cost_cache="$tmp/cache" -o "$tmp/b" > /dev/null
"$cpsim" -q run scenarios/serve-three-requests.yaml --set serve.cost_cache="$tmp/cache" -o "$tmp/c" > /dev/null
ls "$tmp/cache"/*.json > /dev/null 2>&1 || fail "no cache file written"
for f in requests.csv step_costs.csv trace.json summary.json; do
  cmp -s "$tmp/b/$f" "$tmp/c/$f" || fail "$f differs between a fresh and a cached run"
done
cmp -s "$tmp/a/requests.csv" "$tmp/b/requests.csv" || fail "requests.csv differs with a cache"

# The trace: one track per instance, one slice per iteration (6 here: 3 prefills, 3 decodes), both checkers clean.
/usr/bin/python3 "$build/trace-check/perfetto_json_lint.py" "$tmp/a/trace.json" --quiet > "$tmp/lint.json"
node "$build/trace-check/devtools_check.mjs" "$tmp/a/trace.json" > "$tmp/dev.json"
/usr/bin/python3 - "$tmp/lint.json" "$tmp/dev.json" <<'PY' || exit 1
import json, sys
lint, dev = (json.load(open(p)) for p in sys.argv[1:3])
bad = [k for k, ok in {"lint errors": lint["errors"] == {}, "lint warnings": lint["warnings"] == {},
                       "lint slices": lint["slices"] == 6, "devtools slices": dev["slices"] == 6}.items() if not ok]
print(("FAIL " + ", ".join(bad) + f": {lint} {dev}") if bad else "ok   serve trace: 6 slices, both checkers clean")
sys.exit(1 if bad else 0)
PY

# A JSONL trace reads as the CSV one: the same requests, the same requests.csv.
printf '%s\n' '{"arrival_s": 0, "prompt_tokens": "8K", "output_tokens": 4, "cached_tokens": 0}' \
  '{"arrival_s": 0.001, "prompt_tokens": 8192, "output_tokens": 3}' '{"arrival_s": 5, "prompt_tokens": "16K", "output_tokens": 1}' \
  > "$tmp/three.jsonl"
"$cpsim" -q run scenarios/serve-three-requests.yaml --set serve.source.file="$tmp/three.jsonl" -o "$tmp/j" > /dev/null
cmp -s "$tmp/a/requests.csv" "$tmp/j/requests.csv" || fail "the JSONL trace gives other requests than the CSV one"

# A serving sweep over the rate and two named policies: sweep.csv carries the serve columns, plot_serve writes its
# plots and the sustained rate per policy.
"$cpsim" -q sweep scenarios/serve-mixed-lengths.yaml -j 2 -o "$tmp/sweep" --set serve.source.requests=40 \
  --set serve.cost_cache="$tmp/cache" --axis serve.policy=static-cp4,length-buckets --axis serve.source.rate_per_s=0.5,1 \
  > /dev/null 2>&1 || fail "serving sweep failed"
head -1 "$tmp/sweep/sweep.csv" | grep -q "serve.tpot_s.p99" || fail "sweep.csv has no serve columns"
/usr/bin/python3 analysis/plot_sweep.py "$tmp/sweep" > /dev/null 2>&1 || fail "plot_sweep on a serving sweep"
for f in latency_vs_rate.png goodput_vs_rate.png sustained.csv; do [ -s "$tmp/sweep/plots/$f" ] || fail "no plots/$f"; done
[ "$(wc -l < "$tmp/sweep/plots/sustained.csv")" -eq 3 ] || fail "sustained.csv: $(cat "$tmp/sweep/plots/sustained.csv")"
echo "ok   serving sweep: serve columns, plots and sustained rates"

# Mistakes: located at the key, exit 2, nothing written.
expect_error() {
  local want=$1; shift
  set +e
  "$cpsim" run scenarios/serve-three-requests.yaml "$@" -o "$tmp/bad" > /dev/null 2> "$tmp/err"
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "exit $rc for $*"
  line=$(grep -v "^\[" "$tmp/err" | tail -1)
  case "$line" in $want) ;; *) fail "for $*: $line" ;; esac
  [ ! -e "$tmp/bad" ] || fail "output written for $*"
}
expect_error "scenarios/serve-three-requests.yaml:10:11: serve.policy: the instances need 16 GPUs (cp x tp x instances, summed); the platform has 8" --set serve.policy.cp=4
expect_error "--set:1:1: parallel.cp: a serving run sets CP per instance class (serve.policy)" --set parallel.cp=2
expect_error "--set:1:1: run.seq_len: a serving run takes each request's lengths from serve.source and batches them itself" --set run.seq_len=4K
printf 'arrival_s,prompt_tokens,output_tokens\n0,4K,2\n1,4K,0\n' > "$tmp/t.csv"
expect_error "*/t.csv:3:1: serve.source.file: output_tokens must be positive (the prefill makes the first)" \
  --set serve.source.file="$tmp/t.csv"
echo "ok   serve mistakes are located"
