#!/usr/bin/env bash
# A sweep of 4 CP degrees x 3 sequence lengths (scenarios/sweep-cp-seqlen.yaml) gives 12 rows with -j 2, in
# row-major order of the axes; the same sweep run as 3 shards and merged gives the same sweep.csv and sweep.json byte
# for byte, and so does -j 1. Oracles: the axis product (order), the seed's ring formula for the bytes column,
# each point's own summary.json for the makespan.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scenario=scenarios/sweep-cp-seqlen.yaml
fail() { echo "FAIL: $*"; exit 1; }

"$cpsim" sweep $scenario -j 2 -o "$tmp/full" 2> "$tmp/full.log" || { cat "$tmp/full.log"; fail "sweep exit code"; }
rows=$(($(wc -l < "$tmp/full/sweep.csv") - 1))
[ "$rows" = 12 ] || fail "expected 12 rows, got $rows"
grep -q "^sweep: \[12/12\] point " "$tmp/full.log" || fail "no plain progress lines on a non-terminal stderr"

/usr/bin/python3 - "$tmp/full" <<'PY'
import csv, itertools, json, os, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(d, "sweep.csv"))))
cps, seqs = ["2", "4", "8", "16"], ["32K", "128K", "512K"]
order = [(r["parallel.cp"], r["run.seq_len"]) for r in rows]
assert order == list(itertools.product(cps, seqs)), order          # the last axis varies fastest
assert [r["index"] for r in rows] == [str(i) for i in range(12)]
for r in rows:
    assert r["status"] == "ok" and r["error"] == "", r
    n, s = int(r["cp"]), int(r["seq_len"])
    assert n == int(r["parallel.cp"]) and s == int(r["run.seq_len"][:-1]) * 1024, r
    # Seed (cp-overview 7.2): ring pass-KV, per rank per layer (N-1)/N * S * 2 * d_kv * s; d_kv = 1024, BF16 s = 2.
    assert int(r["cp_bytes_per_layer.dense"]) == (n - 1) * s * 2 * 1024 * 2 // n, r
    assert r["formula_match.dense"] == "true", r
    summary = json.load(open(os.path.join(d, "points", r["index"], "summary.json")))
    assert float(r["makespan_s"]) == summary["makespan_s"], r
    assert abs(float(r["critical_compute_s"]) + float(r["critical_exposed_comm_s"]) + float(r["critical_idle_s"])
               - summary["makespan_s"]) <= 1e-12 * summary["makespan_s"], r
    assert not os.path.exists(os.path.join(d, "points", r["index"], "trace.json")), "trace without --traces"
record = json.load(open(os.path.join(d, "sweep.json")))
assert record["points_total"] == 12 and record["status_counts"] == {"ok": 12} and "shard" not in record
print("12 rows in axis order; bytes equal the ring formula; makespans equal the points' summaries")
PY

for i in 0 1 2; do
  "$cpsim" sweep $scenario -j 2 --shard $i/3 -o "$tmp/shard$i" 2>/dev/null || fail "shard $i exit code"
  [ "$(($(wc -l < "$tmp/shard$i/sweep.csv") - 1))" = 4 ] || fail "shard $i should hold 4 of the 12 points"
done
"$cpsim" merge "$tmp/shard2" "$tmp/shard0" "$tmp/shard1" -o "$tmp/merged" 2>/dev/null || fail "merge exit code"
cmp "$tmp/full/sweep.csv" "$tmp/merged/sweep.csv" || fail "merged sweep.csv differs from the unsharded one"
cmp "$tmp/full/sweep.json" "$tmp/merged/sweep.json" || fail "merged sweep.json differs from the unsharded one"
for i in $(seq 0 11); do
  cmp "$tmp/full/points/$i/summary.json" "$tmp/merged/points/$i/summary.json" || fail "merged point $i"
done

"$cpsim" sweep $scenario -j 1 -o "$tmp/serial" 2>/dev/null || fail "-j 1 exit code"
cmp "$tmp/full/sweep.csv" "$tmp/serial/sweep.csv" || fail "sweep.csv depends on -j"
cmp "$tmp/full/sweep.json" "$tmp/serial/sweep.json" || fail "sweep.json depends on -j"

# A merge with a shard missing is refused, and writes nothing.
set +e
"$cpsim" merge "$tmp/shard0" "$tmp/shard2" -o "$tmp/partial" 2> "$tmp/partial.log"; rc=$?
set -e
[ "$rc" = 2 ] || fail "merge with a missing shard: exit $rc, expected 2"
grep -qx "merge:1:1: (points): 4 of 12 points missing (1, 4, 7, 10): is a shard missing?" "$tmp/partial.log" \
  || { cat "$tmp/partial.log"; fail "missing-shard message"; }
[ ! -e "$tmp/partial/sweep.csv" ] || fail "a refused merge wrote sweep.csv"
if find "$tmp" -name '*.tmp.*' | grep -q .; then fail "temporary files left"; fi
echo "sweep grid ok: 12 rows; 3 shards merged and -j 1 give identical files"

# --zip: CP degree and sequence length move together (3 points, not 9), each point running its own pair; shards of a
# zipped sweep merge to the same record. Oracle: the zip's i-th values on row i, the ring formula's S per point.
"$cpsim" sweep scenarios/quickstart.yaml -j 2 -o "$tmp/zip" --zip parallel.cp=2,4,8 --zip run.seq_len=32K,64K,128K \
  --set model.layers=1 2> "$tmp/zip.log" || { cat "$tmp/zip.log"; fail "zip sweep exit code"; }
for i in 0 1; do
  "$cpsim" sweep scenarios/quickstart.yaml -j 1 -o "$tmp/zip-shard$i" --shard $i/2 --zip parallel.cp=2,4,8 \
    --zip run.seq_len=32K,64K,128K --set model.layers=1 2>/dev/null || true
done
"$cpsim" merge "$tmp/zip-shard0" "$tmp/zip-shard1" -o "$tmp/zip-merged" 2>/dev/null || fail "zip merge"
cmp "$tmp/zip/sweep.csv" "$tmp/zip-merged/sweep.csv" || fail "merged zip sweep differs"
/usr/bin/python3 - "$tmp/zip" <<'PY'
import csv, os, sys
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "sweep.csv"))))
assert [(r["parallel.cp"], r["run.seq_len"]) for r in rows] == [("2", "32K"), ("4", "64K"), ("8", "128K")], rows
assert [int(r["cp"]) for r in rows] == [2, 4, 8] and [int(r["seq_len"]) for r in rows] == [32768, 65536, 131072]
PY
echo "sweep: zipped axes give one point per position; shards merge"
