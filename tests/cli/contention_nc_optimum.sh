#!/usr/bin/env bash
# Subtractive contention: sweeping the comm kernels' channel count NC over one overlap window (ring KV transfer vs
# attention) has an interior optimum: few channels starve the transfer (NC x b_channel), many steal SMs from the
# attention and consume the shared link. Oracle: the makespan minimum is at neither end of the NC axis.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" sweep scenarios/contention-nc-sweep.yaml -j 2 -o "$tmp/nc" >/dev/null 2>&1
/usr/bin/python3 - "$tmp/nc/sweep.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]))]
assert all(r["status"] == "ok" for r in rows), rows
t = [(int(r["contention.channels"]), float(r["makespan_s"])) for r in rows]
best = min(t, key=lambda x: x[1])
assert best[0] not in (t[0][0], t[-1][0]), t
assert best[1] < t[0][1] and best[1] < t[-1][1]
print(f"NC optimum {best[0]} channels: {best[1]:.4f} s (NC={t[0][0]}: {t[0][1]:.4f} s, NC={t[-1][0]}: {t[-1][1]:.4f} s)")
PY
