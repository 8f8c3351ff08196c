#!/usr/bin/env bash
# scenarios/contention-modes.yaml (TP 8 in a node, CP 2 across nodes, MoE with EP over all 16 GPUs, two
# micro-batches) in the four modes: ranking.csv orders them and the reported contention explains each gap.
# Oracles, from the modes' definitions (docs/contention.md):
#   staggered: CP and TP/EP overlap, but a class never slows another: least bandwidth lost, fastest;
#   fair: the same overlaps share the NIC rails max-min: more bandwidth lost (flow_slowdown), slower;
#   exclusive: CP never overlaps TP/EP on a GPU (overlap 0) and flows wait instead (flow_wait > 0): slower still;
#   subtractive: comm kernels take link capacity and SMs (compute_slowdown > 0): slowest.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# On the ideal machine (lock-step collectives): the modes' definitions are the oracle, not the calibration.
"$cpsim" sweep scenarios/contention-modes.yaml -j 2 -o "$tmp/modes" --set platform.calibration=ideal >/dev/null 2>&1
/usr/bin/python3 - "$tmp/modes/ranking.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
groups = {}
for r in rows:
    groups.setdefault(r["parallel.ep_hot_share"], []).append(r)
assert len(groups) == 2, groups.keys()
for share, g in groups.items():
    order = [r["contention.mode"] for r in g]
    assert order == ["staggered", "fair", "exclusive", "subtractive"], (share, order)
    m = {r["contention.mode"]: {k: float(v) for k, v in r.items() if k in ("makespan_s", "vs_fastest") or k.startswith("contention.") and k != "contention.mode"} for r in g}
    overlap, wait = "contention.cp_overlap_with_tp_ep_s", "contention.flow_wait_s"
    lost, sm = "contention.flow_slowdown_s", "contention.compute_slowdown_s"
    assert m["fair"][overlap] > 0 and m["staggered"][overlap] > 0, m
    assert m["exclusive"][overlap] == 0 and m["exclusive"][wait] > 0, m["exclusive"]
    assert all(m[k][wait] == 0 for k in ("fair", "staggered", "subtractive")), m
    assert m["fair"][lost] > m["staggered"][lost], m
    assert m["subtractive"][sm] > 0 and all(m[k][sm] == 0 for k in ("fair", "staggered", "exclusive")), m
    assert m["fair"]["vs_fastest"] > 1 and m["staggered"]["vs_fastest"] == 1
    print(f"hot share {share}: " + ", ".join(f"{k} {m[k]['makespan_s'] * 1e3:.2f} ms" for k in order))
PY
