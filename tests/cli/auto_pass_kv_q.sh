#!/usr/bin/env bash
# cp.dense.algorithm: auto picks pass-KV (ring) at a high KV miss rate and pass-Q below the 5% threshold, records why,
# and reports both candidates' simulated makespans. Oracle: miss rate = T/(T+cached) with T = 32K: 1.0 with no
# cache (ring), 32768/(32768+1M) = 0.0303 with 1M cached (pass-q).
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" run scenarios/auto-pass-kv-q.yaml -o "$tmp/hot" --set model.layers=1 --set run.cached_tokens=0 >/dev/null 2>&1
"$cpsim" run scenarios/auto-pass-kv-q.yaml -o "$tmp/cached" --set model.layers=1 >/dev/null 2>&1
/usr/bin/python3 - "$tmp/hot/summary.json" "$tmp/cached/summary.json" <<'PY'
import json, sys
hot, cached = (json.load(open(p)) for p in sys.argv[1:3])
def check(s, chosen, miss):
    a = s["cp_auto"]
    assert a["chosen"] == chosen, a
    assert abs(a["miss_rate"] - miss) < 1e-12, a
    assert set(a["candidates_makespan_s"]) == {"ring", "pass-q"} and min(a["candidates_makespan_s"].values()) > 0, a
    assert s["layers"][0]["cp_algorithm"] == chosen
    v = s["volumes"][0]
    assert v["match"], v
check(hot, "ring", 1.0)
check(cached, "pass-q", 32768 / (32768 + 1048576))
print("auto: ring with no cache, pass-q with 1M cached; both candidates simulated")
PY
