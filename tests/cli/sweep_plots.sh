#!/usr/bin/env bash
# analysis/plot_sweep.py turns the 12-point CP x sequence-length sweep into PNGs of a readable size, and
# analysis/report.py into one Markdown page with every plot, one results row per point and the volume checks.
# A sweep with an algorithm axis adds the algorithm comparison.
set -eu
cpsim=$1; src=$2; build=$3
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3   # Debian's matplotlib and pandas live there (a pyenv `python3` may not see them)
fail() { echo "FAIL: $*"; exit 1; }

"$cpsim" sweep scenarios/sweep-cp-seqlen.yaml -j 2 -o "$tmp/s" 2>/dev/null
$py analysis/plot_sweep.py "$tmp/s" > "$tmp/plots.txt"
check_png() {  # file: a real PNG, at least 800 x 500 pixels, and more than 20 KB (not an empty canvas)
  $py - "$1" <<'PY'
import struct, sys, os
data = open(sys.argv[1], "rb").read(32)
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])   # IHDR: width, height
size = os.path.getsize(sys.argv[1])
assert w >= 800 and h >= 500 and size > 20_000, (sys.argv[1], w, h, size)
print(f"{os.path.basename(sys.argv[1])}: {w}x{h}, {size} bytes")
PY
}
for p in makespan_vs_cp scaling_vs_cp bytes_per_layer_kind time_breakdown; do
  check_png "$tmp/s/plots/$p.png"
  grep -qx "$tmp/s/plots/$p.png" "$tmp/plots.txt" || fail "$p.png not listed"
done
[ ! -e "$tmp/s/plots/algorithm_comparison.png" ] || fail "algorithm comparison without an algorithm axis"

$py analysis/report.py "$tmp/s" > /dev/null
report="$tmp/s/report.md"
for p in makespan_vs_cp scaling_vs_cp bytes_per_layer_kind time_breakdown; do
  grep -qF "(plots/$p.png)" "$report" || fail "report does not show $p.png"
done
# Results table: one row per point ("| <index> | <cp> | <seq> | ..."); volumes table: 12 points that match.
[ "$(grep -cE '^\| [0-9]+ \| (2|4|8|16) \| (32K|128K|512K) \|' "$report")" = 12 ] || fail "report rows"
[ "$(grep -cE '^\| [0-9]+ \| dense \| ring \| [0-9]+ \| [0-9]+ \| yes \|' "$report")" = 12 ] || fail "volume rows"

# An algorithm axis (the registry may hold only `ring`; the comparison still has one line per value).
"$cpsim" sweep scenarios/sweep-cp-seqlen.yaml -j 2 -o "$tmp/a" --axis cp.dense.algorithm=ring \
  --axis run.seq_len=32K,128K 2>/dev/null
$py analysis/plot_sweep.py "$tmp/a" > /dev/null
check_png "$tmp/a/plots/algorithm_comparison.png"

# A sweep that keeps one CP degree: grouped bars instead of a column of dots, and no scaling plot (nothing scales).
"$cpsim" sweep scenarios/sweep-cp-seqlen.yaml -j 2 -o "$tmp/b" --axis parallel.cp=4 --axis run.seq_len=32K,128K \
  --axis cp.dense.partition=zigzag,contiguous 2>/dev/null
$py analysis/plot_sweep.py "$tmp/b" > "$tmp/b.txt"
check_png "$tmp/b/plots/makespan_by_point.png"
[ ! -e "$tmp/b/plots/scaling_vs_cp.png" ] && [ ! -e "$tmp/b/plots/makespan_vs_cp.png" ] || fail "line plots for one CP degree"

# Series styles: 4 algorithms x 2 partitions x 2 node shapes = 16 series on distinct (colour, line, marker), one
# colour per algorithm and one line style per partition (oracle: the rule in analysis/plot_style.py's docstring).
PYTHONPATH=analysis $py - <<'PY'
import itertools, pandas as pd, plot_style
rows = pd.DataFrame([{"cp.dense.algorithm": a, "cp.dense.partition": p, "platform.gpus_per_node": g}
                     for a, p, g in itertools.product(["ring", "ulysses", "usp", "allgather"], ["zigzag", "contiguous"],
                                                      ["8", "64"])])
look = plot_style.SeriesStyle(list(rows.columns), rows)
styles = {tuple(r): look.line(dict(r)) for _, r in rows.iterrows()}
assert len({(s["color"], s["linestyle"], s["marker"]) for s in styles.values()}) == 16, styles
for (a, p, g), s in styles.items():
    assert s["color"] == plot_style.ALGORITHM_COLOURS[a], (a, s)
    assert s["linestyle"] == ("-" if p == "contiguous" else "--"), (p, s)   # partitions in natural (name) order
assert plot_style.phase_figure(pd.DataFrame({"phase": ["train"]}))[1] == "step time"
print("series styles ok")
PY
echo "plots and report ok"
