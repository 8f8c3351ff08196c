#!/usr/bin/python3
"""Plots of a cpsim sweep: reads DIR/sweep.csv and DIR/sweep.json (never logs), writes PNGs to DIR/plots/.

    /usr/bin/python3 analysis/plot_sweep.py out/sweep-cp-seqlen [-o PLOTDIR]

Plots (docs/sweeps.md):
  makespan_vs_cp.png        makespan vs CP degree, one line per sequence length (and value of any other axis)
  scaling_vs_cp.png         speedup and parallel efficiency vs CP degree, relative to the smallest CP degree of a line
  bytes_per_layer_kind.png  CP bytes a rank receives per layer, per layer kind, log scale
  time_breakdown.png        the critical GPU's compute / exposed comm / idle (imbalance), stacked, per sequence length
  algorithm_comparison.png  makespan vs CP degree per CP algorithm (only when an axis sets an algorithm)

Needs Debian's python3-matplotlib and python3-pandas (installed by setup.sh for /usr/bin/python3).
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import pandas as pd  # noqa: E402

DPI = 120
FIGSIZE = (8.5, 5.0)
CP_AXIS, SEQ_AXIS = "parallel.cp", "run.seq_len"


def load_sweep(sweep_dir):
    """(sweep.json as a dict, the rows of sweep.csv as a DataFrame). Axis columns stay strings, as written."""
    with open(os.path.join(sweep_dir, "sweep.json")) as f:
        record = json.load(f)
    axes = [a["key"] for a in record["axes"]]
    rows = pd.read_csv(os.path.join(sweep_dir, "sweep.csv"), dtype={a: str for a in axes})
    return record, rows


def tokens(n):
    """131072 -> '128K', 1048576 -> '1M' (binary, as scenarios write them)."""
    n = int(n)
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def series_axes(record):
    """The axes that make separate lines: all but the CP degree and the sequence length (resolved columns)."""
    return [a["key"] for a in record["axes"] if a["key"] not in (CP_AXIS, SEQ_AXIS)]


def algorithm_axes(record):
    return [a["key"] for a in record["axes"] if a["key"].endswith(".algorithm")]


def label_of(seq_len, others, values):
    parts = [f"S={tokens(seq_len)}"] + [f"{k.split('.')[-1] if k.endswith('algorithm') else k}={v}"
                                        for k, v in zip(others, values)]
    return ", ".join(parts)


def groups(ok, by):
    """DataFrame groups in a stable order (pandas sorts keys); always tuples."""
    if not by:
        yield (), ok
        return
    for key, g in ok.groupby(by if len(by) > 1 else by[0], sort=True):
        yield (key if isinstance(key, tuple) else (key,)), g


def binary_bytes(v, _pos=None):
    """Tick label: 2**26 -> '64 MiB'."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= size:
            return f"{v / size:g} {unit}"
    return f"{v:g} B"


def cp_axis(ax, ok):
    ax.set_xscale("log", base=2)
    ticks = sorted(ok["cp"].unique())
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(int(t)) for t in ticks])
    ax.set_xlabel("CP degree")
    ax.grid(True, which="major", alpha=0.3)


def save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_makespan(ok, record, out):
    others = series_axes(record)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for key, g in groups(ok, ["seq_len"] + others):
        g = g.sort_values("cp")
        ax.plot(g["cp"], g["makespan_s"], marker="o", label=label_of(key[0], others, key[1:]))
    cp_axis(ax, ok)
    ax.set_yscale("log")
    ax.set_ylabel("makespan (s, log scale)")
    ax.set_title(f"Prefill makespan vs CP degree ({len(ok)} points)")
    ax.legend(fontsize="small")
    return save(fig, os.path.join(out, "makespan_vs_cp.png"))


def plot_scaling(ok, record, out):
    others = series_axes(record)
    fig, (sp, eff) = plt.subplots(1, 2, figsize=(FIGSIZE[0] * 1.4, FIGSIZE[1]))
    for key, g in groups(ok, ["seq_len"] + others):
        g = g.sort_values("cp")
        base = g.iloc[0]
        speedup = base["makespan_s"] / g["makespan_s"]
        ideal = g["cp"] / base["cp"]
        label = label_of(key[0], others, key[1:])
        sp.plot(g["cp"], speedup, marker="o", label=label)
        eff.plot(g["cp"], speedup / ideal, marker="o", label=label)
    cps = sorted(ok["cp"].unique())
    sp.plot(cps, [c / cps[0] for c in cps], "k--", lw=1, label="ideal (linear)")
    for ax in (sp, eff):
        cp_axis(ax, ok)
    sp.set_yscale("log", base=2)
    sp.set_ylabel("speedup vs the smallest CP degree")
    sp.set_title("Speedup")
    eff.axhline(1.0, color="k", ls="--", lw=1)
    eff.set_ylim(0, 1.1)
    eff.set_ylabel("parallel efficiency = speedup / (cp / cp_min)")
    eff.set_title("Parallel efficiency")
    sp.legend(fontsize="small")
    return save(fig, os.path.join(out, "scaling_vs_cp.png"))


def plot_bytes(ok, record, out):
    kinds = [c.split(".", 1)[1] for c in ok.columns if c.startswith("cp_bytes_per_layer.")]
    if not kinds:
        return None
    others = series_axes(record)
    markers = "osD^v<>"
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for k, kind in enumerate(kinds):
        col = f"cp_bytes_per_layer.{kind}"
        for key, g in groups(ok[ok[col].notna()], ["seq_len"] + others):
            g = g.sort_values("cp")
            ax.plot(g["cp"], g[col], marker=markers[k % len(markers)],
                    label=f"{kind}: {label_of(key[0], others, key[1:])}")
    cp_axis(ax, ok)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(binary_bytes))
    ax.set_ylabel("bytes received per rank per layer (log scale)")
    ax.set_title("CP traffic per rank and layer, by layer kind (max over ranks)")
    ax.legend(fontsize="small")
    return save(fig, os.path.join(out, "bytes_per_layer_kind.png"))


def plot_breakdown(ok, record, out):
    """The GPU that finishes last, from 0 to the makespan: compute (split into the mean over GPUs and what it does
    above that mean: load imbalance), exposed communication, and idle time waiting on other ranks."""
    others = series_axes(record)
    ok = ok.assign(
        compute_mean=ok[["critical_compute_s", "compute_busy_mean_s"]].min(axis=1),
        compute_extra=(ok["critical_compute_s"] - ok["compute_busy_mean_s"]).clip(lower=0))
    seqs = sorted(ok["seq_len"].unique())
    bars = max(len(ok[ok["seq_len"] == s]) for s in seqs)
    width = max(3.6, 0.45 * bars + 1.2)
    fig, axes = plt.subplots(1, len(seqs), figsize=(max(FIGSIZE[0], width * len(seqs)), FIGSIZE[1] + 0.4 * len(others)),
                             squeeze=False)
    parts = [("compute_mean", "compute (mean over GPUs)", "tab:blue"),
             ("compute_extra", "compute above the mean (imbalance)", "tab:cyan"),
             ("critical_exposed_comm_s", "exposed comm", "tab:red"),
             ("critical_idle_s", "idle (waiting on other ranks)", "tab:gray")]
    for ax, seq in zip(axes[0], seqs):
        g = ok[ok["seq_len"] == seq].sort_values(["cp"] + others)
        xs = range(len(g))
        bottom = [0.0] * len(g)
        for col, name, color in parts:
            ms = (g[col] * 1e3).tolist()
            ax.bar(xs, ms, bottom=bottom, color=color, label=name, width=0.7)
            bottom = [b + v for b, v in zip(bottom, ms)]
        labels = [f"cp {int(r['cp'])}" + "".join(f"\n{r[o]}" for o in others) for _, r in g.iterrows()]
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize="x-small" if others else "small")
        ax.set_title(f"S = {tokens(seq)}")
        ax.set_ylabel("time on the critical GPU (ms)")
        ax.set_ylim(0, max(bottom) * 1.08)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("Where the time goes: the GPU that finishes last, from 0 to the makespan" +
                 (f"\n(bars: cp / {' / '.join(others)})" if others else ""))
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(parts), fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    path = os.path.join(out, "time_breakdown.png")
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_algorithms(ok, record, out):
    algs = algorithm_axes(record)
    if not algs:
        return None
    others = [a for a in series_axes(record) if a not in algs]
    seqs = sorted(ok["seq_len"].unique())
    fig, axes = plt.subplots(1, len(seqs), figsize=(max(FIGSIZE[0], 3.6 * len(seqs)), FIGSIZE[1]), squeeze=False)
    for ax, seq in zip(axes[0], seqs):
        for key, g in groups(ok[ok["seq_len"] == seq], algs + others):
            g = g.sort_values("cp")
            ax.plot(g["cp"], g["makespan_s"], marker="o", label=" / ".join(str(v) for v in key))
        cp_axis(ax, ok)
        ax.set_yscale("log")
        ax.set_title(f"S = {tokens(seq)}")
        ax.set_ylabel("makespan (s, log scale)")
        ax.legend(fontsize="small", title=" / ".join(a.split(".")[-2] + " alg." for a in algs) +
                  ("".join(" / " + o for o in others)))
    fig.suptitle("CP algorithms compared")
    return save(fig, os.path.join(out, "algorithm_comparison.png"))


def make_plots(sweep_dir, out_dir=None):
    """Writes the plots; returns the list of PNG paths."""
    record, rows = load_sweep(sweep_dir)
    ok = rows[rows["status"] == "ok"].copy()
    if ok.empty:
        raise SystemExit(f"{sweep_dir}/sweep.csv: no point ran successfully, nothing to plot")
    out = out_dir or os.path.join(sweep_dir, "plots")
    os.makedirs(out, exist_ok=True)
    written = [plot_makespan(ok, record, out), plot_scaling(ok, record, out), plot_bytes(ok, record, out),
               plot_breakdown(ok, record, out), plot_algorithms(ok, record, out)]
    return [p for p in written if p]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_dir", help="a `cpsim sweep` (or `cpsim merge`) output folder")
    ap.add_argument("-o", "--output", help="where to write the PNGs (default: SWEEP_DIR/plots)")
    args = ap.parse_args()
    for path in make_plots(args.sweep_dir, args.output):
        print(path)


if __name__ == "__main__":
    sys.exit(main())
