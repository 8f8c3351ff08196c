#!/usr/bin/env bash
# cp.dense.algorithm: auto simulates both candidates and runs the faster (auto_rule: simulated, the default), or,
# with auto_rule: miss-rate, Meta's rule: pass-KV (ring) at a high KV miss rate and pass-Q below the 5% threshold.
# Oracles: the chosen candidate has the smaller of the two simulated makespans; miss rate = T/(T+cached) with
# T = 32K: 1.0 with no cache (rule: ring), 32768/(32768+1M) = 0.0303 with 1M cached (rule: pass-q).
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" run scenarios/auto-pass-kv-q.yaml -o "$tmp/hot" --set model.layers=1 --set run.cached_tokens=0 >/dev/null 2>&1
"$cpsim" run scenarios/auto-pass-kv-q.yaml -o "$tmp/cached" --set model.layers=1 >/dev/null 2>&1
rule=(--set cp.dense.auto_rule=miss-rate --set model.layers=1)
"$cpsim" run scenarios/auto-pass-kv-q.yaml -o "$tmp/hot-rule" "${rule[@]}" --set run.cached_tokens=0 >/dev/null 2>&1
"$cpsim" run scenarios/auto-pass-kv-q.yaml -o "$tmp/cached-rule" "${rule[@]}" >/dev/null 2>&1
/usr/bin/python3 - "$tmp"/{hot,cached,hot-rule,cached-rule}/summary.json <<'PY'
import json, sys
hot, cached, hot_rule, cached_rule = (json.load(open(p)) for p in sys.argv[1:5])
def check(s, rule_choice, miss, by_rule):
    a = s["cp_auto"]
    t = a["candidates_makespan_s"]
    faster = "ring" if t["ring"] <= t["pass-q"] else "pass-q"
    chosen = rule_choice if by_rule else faster
    assert a["rule"] == ("miss-rate" if by_rule else "simulated"), a
    assert a["miss_rate_rule_choice"] == rule_choice, a
    assert a["chosen"] == chosen and a["simulated_faster"] == faster, a
    assert abs(a["miss_rate"] - miss) < 1e-12, a
    assert set(a["candidates_makespan_s"]) == {"ring", "pass-q"} and min(a["candidates_makespan_s"].values()) > 0, a
    assert s["layers"][0]["cp_algorithm"] == chosen
    v = s["volumes"][0]
    assert v["match"], v
for s, by_rule in ((hot, False), (hot_rule, True)):
    check(s, "ring", 1.0, by_rule)
for s, by_rule in ((cached, False), (cached_rule, True)):
    check(s, "pass-q", 32768 / (32768 + 1048576), by_rule)
print("auto: the faster candidate by default; the miss-rate rule: ring with no cache, pass-q with 1M cached")
PY
