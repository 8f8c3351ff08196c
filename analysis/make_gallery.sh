#!/usr/bin/env bash
# Regenerates docs/gallery/*.png: runs the bundled sweeps below, plots them with analysis/plot_sweep.py and copies the
# plots docs/gallery.md shows. Run from anywhere after a build:  analysis/make_gallery.sh [build/cpsim]
set -euo pipefail
cd "$(dirname "$0")/.."
cpsim=${1:-build/cpsim}
work=out/gallery
mkdir -p "$work" docs/gallery
# scenario : the plots of its sweep that the gallery shows
shown=(
  "sweep-cp-seqlen:makespan_vs_cp scaling_vs_cp time_breakdown bytes_per_layer_kind"
  "dense-algorithms:makespan_vs_cp algorithm_comparison time_breakdown bytes_per_layer_kind"
  "train-ring-vs-ulysses:algorithm_comparison time_breakdown"
  "contention-modes:makespan_by_point"
  "seed-unified-table:makespan_by_point bytes_per_layer_kind"
  "lasp2-vs-ring:makespan_by_point"
  "auto-pass-kv-q:makespan_by_point"
)
for entry in "${shown[@]}"; do
  scenario=${entry%%:*}
  "$cpsim" sweep "scenarios/$scenario.yaml" -j "$(nproc)" -o "$work/$scenario" 2> "$work/$scenario.log"
  /usr/bin/python3 analysis/plot_sweep.py "$work/$scenario" > /dev/null
  for plot in ${entry#*:}; do cp "$work/$scenario/plots/$plot.png" "docs/gallery/$scenario-$plot.png"; done
done
ls docs/gallery
