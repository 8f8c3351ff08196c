#!/usr/bin/python3
"""Latency percentiles of a serving sweep against the arrival rate: reads DIR/sweep.csv and DIR/sweep.json only.

    /usr/bin/python3 analysis/plot_serve.py out/serve-mixed-lengths [-o PLOTDIR]

Writes (docs/serving.md):
  latency_vs_rate.png   p99 TTFT and p99 TPOT against serve.source.rate_per_s, one line per series (the other
                        axes, e.g. serve.policy), the SLO as a dashed line
  goodput_vs_rate.png   the fraction of requests served within both SLOs
  sustained.csv         per series, the highest swept rate whose p99 TPOT meets the TPOT SLO, and the highest whose
                        p99 TTFT and p99 TPOT both meet theirs; a point with more than 1% of its requests refused or
                        unfinished meets neither. Printed as a table too.
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import plot_style as style  # noqa: E402

RATE_AXIS = "serve.source.rate_per_s"


def load(sweep_dir):
    with open(os.path.join(sweep_dir, "sweep.json")) as f:
        meta = json.load(f)
    rows = pd.read_csv(os.path.join(sweep_dir, "sweep.csv"), dtype=str, keep_default_na=False)
    rows = rows[rows["status"] == "ok"].copy()
    for col in rows.columns:
        if col.startswith("serve.") and col != "serve.policy" and col != RATE_AXIS:
            rows[col] = pd.to_numeric(rows[col], errors="coerce")
    rows["rate"] = pd.to_numeric(rows[RATE_AXIS])
    return meta, rows


def series_keys(meta):
    return [a["key"] for a in meta["axes"] if a["key"] != RATE_AXIS]


def meets(row, check_ttft):
    lost = row["serve.requests_total"] - row["serve.requests_done"]
    if lost > 0.01 * row["serve.requests_total"]:
        return False
    ok = pd.isna(row["serve.slo_tpot_s"]) or row["serve.tpot_s.p99"] <= row["serve.slo_tpot_s"]
    if check_ttft:
        ok = ok and (pd.isna(row["serve.slo_ttft_s"]) or row["serve.ttft_s.p99"] <= row["serve.slo_ttft_s"])
    return bool(ok)


def sustained(group, check_ttft):
    """The highest rate meeting the SLO with every lower swept rate meeting it too (None if the lowest fails)."""
    best = None
    for _, row in group.sort_values("rate").iterrows():
        if not meets(row, check_ttft):
            break
        best = row["rate"]
    return best


def make_plots(sweep_dir, out_dir=None):
    meta, rows = load(sweep_dir)
    if RATE_AXIS not in [a["key"] for a in meta["axes"]]:
        raise SystemExit(f"plot_serve: the sweep has no {RATE_AXIS} axis")
    out_dir = out_dir or os.path.join(sweep_dir, "plots")
    os.makedirs(out_dir, exist_ok=True)
    keys = series_keys(meta)
    groups = list(rows.groupby(keys if len(keys) > 1 else keys[0], sort=False)) if keys else [((), rows)]
    styles = style.SeriesStyle(keys, rows)
    written = []

    def series_of(name):
        values = name if isinstance(name, tuple) else (name,)
        series = dict(zip(keys, values))
        return series, styles.label(series) if keys else "all points"

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for name, group in groups:
        series, label = series_of(name)
        g = group.sort_values("rate")
        for ax, col in zip(axes, ["serve.ttft_s.p99", "serve.tpot_s.p99"]):
            ax.plot(g["rate"], g[col], label=label, **styles.line(series))
    for ax, col, title in zip(axes, ["serve.slo_ttft_s", "serve.slo_tpot_s"], ["p99 TTFT (s)", "p99 TPOT (s)"]):
        slo = rows[col].dropna()
        if len(slo):
            ax.axhline(slo.iloc[0], color="black", linestyle="--", linewidth=1, label=f"SLO {slo.iloc[0]:g} s")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("arrival rate (requests/s)")
        ax.set_ylabel(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.suptitle(f"{os.path.basename(os.path.normpath(sweep_dir))}: latency percentiles against the arrival rate")
    fig.tight_layout()
    path = os.path.join(out_dir, "latency_vs_rate.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    fig, ax = plt.subplots(figsize=(8.5, 5.0))
    for name, group in groups:
        series, label = series_of(name)
        g = group.sort_values("rate")
        ax.plot(g["rate"], g["serve.goodput_fraction"], label=label, **styles.line(series))
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("arrival rate (requests/s)")
    ax.set_ylabel("requests within both SLOs (fraction)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "goodput_vs_rate.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    path = os.path.join(out_dir, "sustained.csv")
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["series", "sustained_rate_tpot_slo", "sustained_rate_both_slos"])
        for name, group in groups:
            label = series_of(name)[1]
            fmt = lambda r: "" if r is None else f"{r:g}"  # noqa: E731
            w.writerow([label, fmt(sustained(group, False)), fmt(sustained(group, True))])
    os.replace(path + ".tmp", path)
    written.append(path)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_dir")
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    paths = make_plots(args.sweep_dir, args.output)
    with open(paths[-1]) as f:
        print(f.read(), end="")
    for p in paths:
        print(p, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
