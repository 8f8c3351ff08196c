#!/usr/bin/env bash
# Gradient all-reduce in training (scenarios/train-grad-sync.yaml): ranking.csv orders none < overlap < end, and
# per-layer buckets launched as each layer's backward ends hide most of the all-reduce. Oracle: the same bytes
# (dp_bytes_total equal for end and overlap, 0 for none) moved behind compute vs after it: the overlap's extra
# time is under a quarter of end's.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" sweep scenarios/train-grad-sync.yaml -j 2 -o "$tmp/gs" >/dev/null 2>&1
/usr/bin/python3 - "$tmp/gs" <<'PY'
import csv, sys
rank = list(csv.DictReader(open(sys.argv[1] + "/ranking.csv")))
assert [r["parallel.grad_sync"] for r in rank] == ["none", "overlap", "end"], rank
t = {r["parallel.grad_sync"]: float(r["makespan_s"]) for r in rank}
rows = {r["parallel.grad_sync"]: r for r in csv.DictReader(open(sys.argv[1] + "/sweep.csv"))}
assert rows["none"]["dp_bytes_total"] == "0"
assert rows["end"]["dp_bytes_total"] == rows["overlap"]["dp_bytes_total"] != "0"
assert t["overlap"] - t["none"] < 0.25 * (t["end"] - t["none"]), t
print(f"none {t['none']*1e3:.1f} ms, overlap {t['overlap']*1e3:.1f} ms, end {t['end']*1e3:.1f} ms")
PY
