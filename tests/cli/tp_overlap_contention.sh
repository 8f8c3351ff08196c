#!/usr/bin/env bash
# scenarios/tp-overlap-contention.yaml (dense Llama-2-13B, TP 4 x CP 2 on one H800 node, sequence parallelism with
# userbuffers-style TP overlap, two micro-batches): one micro-batch's TP chunk exchanges share NVLink ports with the
# other's ring attention, and the four contention modes give four different makespans. Oracles, from the modes'
# definitions (docs/contention.md):
#   staggered: each class runs as if alone: no bandwidth lost to the other class: fastest;
#   fair: the same overlaps share the ports max-min: bandwidth lost (flow_slowdown) above staggered's;
#   exclusive: Megatron's rule, TP overlap off beside CP (its TP communication exposed) and CP never overlapping
#     TP on a GPU (overlap 0, flows wait instead): slower than fair, which keeps the overlap;
#   subtractive: comm kernels also take SMs (compute_slowdown > 0): slowest.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" sweep scenarios/tp-overlap-contention.yaml -j 2 -o "$tmp/modes" >/dev/null 2>&1
/usr/bin/python3 - "$tmp/modes/ranking.csv" <<'PY'
import csv, sys
rows = {r["contention.mode"]: r for r in csv.DictReader(open(sys.argv[1]))}
t = {m: float(r["makespan_s"]) for m, r in rows.items()}
c = lambda m, k: float(rows[m]["contention." + k])
assert len(set(t.values())) == 4, t                                   # four different answers
assert t["staggered"] < t["fair"] < t["exclusive"] < t["subtractive"], t
assert c("exclusive", "cp_overlap_with_tp_ep_s") == 0 and c("exclusive", "flow_wait_s") > 0, rows["exclusive"]
assert float(rows["exclusive"]["critical_exposed_comm_s"]) > float(rows["fair"]["critical_exposed_comm_s"])
assert c("fair", "cp_overlap_with_tp_ep_s") > 0 and c("fair", "flow_slowdown_s") > c("staggered", "flow_slowdown_s")
assert c("subtractive", "compute_slowdown_s") > 0
print(" < ".join(f"{m} {t[m]*1e3:.2f} ms" for m in sorted(t, key=t.get)))
PY
