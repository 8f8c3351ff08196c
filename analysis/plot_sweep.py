#!/usr/bin/python3
"""Plots of a cpsim sweep: reads DIR/sweep.csv and DIR/sweep.json (never logs), writes PNGs to DIR/plots/.

    /usr/bin/python3 analysis/plot_sweep.py out/sweep-cp-seqlen [-o PLOTDIR]

Plots (docs/sweeps.md):
  makespan_vs_cp.png        the phase's figure (TTFT, decode time, step time) vs CP degree, one line per series
  makespan_by_point.png     the same as grouped bars, for sweeps that keep one CP degree (instead of the line plot)
  scaling_vs_cp.png         speedup and parallel efficiency vs CP degree (only when the CP degree varies)
  bytes_per_layer_kind.png  CP bytes a rank receives per layer, per layer kind, log scale
  time_breakdown.png        the critical GPU's compute / exposed comm / idle (imbalance), stacked, per sequence length
  algorithm_comparison.png  makespan per CP algorithm, lines over CP degree or grouped bars (when an axis sets one)

Series: one colour per CP algorithm (the same in every plot), one line style per partition, markers for the rest;
legends sit outside the data (analysis/plot_style.py).

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

import plot_style as style  # noqa: E402

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


def varying_axes(record, ok):
    """The sweep's axes that take more than one value among the points that ran, in sweep order."""
    return [a["key"] for a in record["axes"] if a["key"] in ok and ok[a["key"]].nunique() > 1]


def series_dims(record, ok, without=()):
    """The axes that make separate series: all varying axes but the CP degree (the x axis of line plots)."""
    return [a for a in varying_axes(record, ok) if a != CP_AXIS and a not in without]


def cp_varies(ok):
    return ok["cp"].nunique() > 1


def bar_layout(dims):
    """Grouped bars: along x the sequence length, else the first axis that is not a CP algorithm; inside a group one
    bar per combination of the other axes (so CP algorithms keep their colours). One axis alone: one bar per value."""
    plain = [d for d in dims if not style.is_algorithm_axis(d)]
    if len(dims) < 2 or not plain:
        return [], list(dims)
    group = SEQ_AXIS if SEQ_AXIS in dims else plain[0]
    return [group], [d for d in dims if d != group]


def series(ok, dims):
    """(series dict, its rows) for each distinct combination of dims, in natural order."""
    if not dims:
        yield {}, ok
        return
    keys = sorted({tuple(r[d] for d in dims) for _, r in ok.iterrows()},
                  key=lambda t: [style.natural_key(v) for v in t])
    for key in keys:
        g = ok
        for d, v in zip(dims, key):
            g = g[g[d] == v]
        yield dict(zip(dims, key)), g


def one_to_one(rows, a, b):
    """Whether columns a and b name the same partition of the rows (each value of one goes with one value of the other)."""
    return rows.groupby(a)[b].nunique().max() == 1 and rows.groupby(b)[a].nunique().max() == 1


def binary_bytes(v, _pos=None):
    """Tick label: 2**26 -> '64 MiB'."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= size:
            return f"{v / size:.4g} {unit}"
    return f"{v:g} B"


def cp_axis(ax, ok):
    ax.set_xscale("log", base=2)
    ticks = sorted(ok["cp"].unique())
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(int(t)) for t in ticks])
    ax.set_xlabel("CP degree")
    ax.grid(True, which="major", alpha=0.3)


def fixed_cp_note(ok):
    return f"CP {int(ok['cp'].iloc[0])}" + (f", TP {int(ok['tp'].iloc[0])}" if ok["tp"].nunique() == 1 else "")


def makespan_lines(ax, rows, ok, dims, look, noun, ylabel=True):
    """One line per series over the CP degree, log-log."""
    for s, g in series(rows, dims):
        g = g.sort_values("cp")
        ax.plot(g["cp"], g["makespan_s"], label=look.label(s), **look.line(s))
    cp_axis(ax, ok)
    ax.set_yscale("log")
    if ylabel:
        ax.set_ylabel(f"{noun} (s, log scale)")


def makespan_bars(ax, rows, ok, groups, bars, look, noun, ylabel=True):
    """Grouped bars in ms or s (the unit of the whole sweep, so panels compare)."""
    scale, unit = style.time_unit(ok["makespan_s"])
    style.grouped_bars(ax, rows, groups, bars, "makespan_s", look, scale=scale)
    if ylabel:
        ax.set_ylabel(f"{noun} ({unit}{', log scale' if ax.get_yscale() == 'log' else ''})")


def plot_makespan(ok, record, out):
    """Lines over the CP degree when it varies; grouped bars (x: sequence length or the first axis) when it does not."""
    title, noun = style.phase_figure(ok)
    dims = series_dims(record, ok)
    look = style.SeriesStyle(dims, ok)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    if cp_varies(ok):
        makespan_lines(ax, ok, ok, dims, look, noun)
        ax.set_title(f"{title} vs CP degree ({len(ok)} points)")
        name = "makespan_vs_cp.png"
    else:
        groups, bars = bar_layout(dims)
        makespan_bars(ax, ok, ok, groups, bars, style.SeriesStyle(bars, ok), noun)
        ax.set_title(f"{title}, {fixed_cp_note(ok)} ({len(ok)} points)")
        name = "makespan_by_point.png"
    style.legend_outside(ax)
    return style.save(fig, os.path.join(out, name), DPI)


def plot_scaling(ok, record, out):
    """Speedup and efficiency over the CP degree; nothing to say when the sweep keeps one CP degree."""
    if not cp_varies(ok):
        return None
    title, noun = style.phase_figure(ok)
    dims = series_dims(record, ok)
    look = style.SeriesStyle(dims, ok)
    fig, (sp, eff) = plt.subplots(1, 2, figsize=(FIGSIZE[0] * 1.4, FIGSIZE[1]))
    for s, g in series(ok, dims):
        g = g.sort_values("cp")
        base = g.iloc[0]
        speedup = base["makespan_s"] / g["makespan_s"]
        ideal = g["cp"] / base["cp"]
        sp.plot(g["cp"], speedup, label=look.label(s), **look.line(s))
        eff.plot(g["cp"], speedup / ideal, **look.line(s))
    cps = sorted(ok["cp"].unique())
    sp.plot(cps, [c / cps[0] for c in cps], "k--", lw=1, label="ideal (linear)")
    for ax in (sp, eff):
        cp_axis(ax, ok)
    sp.set_yscale("log", base=2)
    sp.set_ylabel(f"{noun} speedup vs the smallest CP degree")
    sp.set_title("Speedup")
    eff.axhline(1.0, color="k", ls="--", lw=1)
    eff.set_ylim(0, 1.1)
    eff.set_ylabel("parallel efficiency = speedup / (cp / cp_min)")
    eff.set_title("Parallel efficiency")
    fig.suptitle(f"{title}: scaling with the CP degree")
    style.legend_outside(eff)
    handles, labels = sp.get_legend_handles_labels()
    eff.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small",
               frameon=False)
    return style.save(fig, os.path.join(out, "scaling_vs_cp.png"), DPI)


def plot_bytes(ok, record, out):
    """CP bytes per rank and layer: one colour per layer kind; lines over the CP degree or grouped bars."""
    kinds = [c.split(".", 1)[1] for c in ok.columns if c.startswith("cp_bytes_per_layer.")]
    if not kinds:
        return None
    long = pd.concat([ok.assign(layer_kind=kind, received_bytes=ok[f"cp_bytes_per_layer.{kind}"])
                      for kind in kinds], ignore_index=True)
    long = long[long["received_bytes"].notna()]
    dims = ["layer_kind"] + series_dims(record, ok)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    if cp_varies(ok):
        look = style.SeriesStyle(dims, long)
        for s, g in series(long, dims):
            g = g.sort_values("cp")
            ax.plot(g["cp"], g["received_bytes"], label=look.label(s), **look.line(s))
        cp_axis(ax, ok)
    else:
        # Axes that only rename the layer kind (a pattern axis of one kind per point) would repeat it: leave them out.
        others = [d for d in dims[1:] if not one_to_one(long, d, "layer_kind")]
        groups, bars = bar_layout(others)
        if len(kinds) > 1 or not groups:
            groups, bars = (["layer_kind"], others) if others else ([], ["layer_kind"])
        look = style.SeriesStyle(bars, long)
        style.grouped_bars(ax, long, groups, bars, "received_bytes", look, show=binary_bytes)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(binary_bytes))
    ax.set_ylabel("bytes received per rank per layer (log scale)")
    ax.set_title("CP traffic per rank and layer, by layer kind (max over ranks)")
    style.legend_outside(ax)
    return style.save(fig, os.path.join(out, "bytes_per_layer_kind.png"), DPI)


def plot_breakdown(ok, record, out):
    """The GPU that finishes last, from 0 to the makespan, as shares of it: compute (the mean over GPUs, and what it
    does above that mean: load imbalance), exposed communication, and idle time waiting on other ranks; the makespan
    is printed on each bar. Panels: one column per sequence length, one row per value of the first other axis that
    is not a CP algorithm; bars by CP degree, then by the remaining axes."""
    title, noun = style.phase_figure(ok)
    others = series_dims(record, ok, without=(SEQ_AXIS,))
    row_dim = next((d for d in others if not style.is_algorithm_axis(d)), None) if len(others) > 1 else None
    in_bar = [d for d in others if d != row_dim]
    ok = ok.assign(
        compute_mean=ok[["critical_compute_s", "compute_busy_mean_s"]].min(axis=1),
        compute_extra=(ok["critical_compute_s"] - ok["compute_busy_mean_s"]).clip(lower=0))
    seqs = sorted(ok["seq_len"].unique())
    row_values = style.natural_sorted(ok[row_dim].unique()) if row_dim else [None]
    panel_rows = lambda seq, rv: ok[(ok["seq_len"] == seq) & ((ok[row_dim] == rv) if row_dim else True)]
    bars = max(len(panel_rows(s, r)) for s in seqs for r in row_values)
    width = max(4.0, 0.32 * bars + 1.5)
    fig, axes = plt.subplots(len(row_values), len(seqs), squeeze=False,
                             figsize=(max(FIGSIZE[0], width * len(seqs)), 4.2 * len(row_values) + 0.8))
    parts = [("compute_mean", "compute (mean over GPUs)", "tab:blue"),
             ("compute_extra", "compute above the mean (imbalance)", "tab:cyan"),
             ("critical_exposed_comm_s", "exposed comm", "tab:red"),
             ("critical_idle_s", "idle (waiting on other ranks)", "tab:gray")]
    scale, unit = style.time_unit(ok["makespan_s"])
    for r, rv in enumerate(row_values):
        for c, seq in enumerate(seqs):
            ax = axes[r][c]
            g = panel_rows(seq, rv).sort_values(["cp"] + in_bar)
            xs = list(range(len(g)))
            bottom = [0.0] * len(g)
            for col, name, color in parts:
                share = (100 * g[col] / g["makespan_s"]).tolist()
                ax.bar(xs, share, bottom=bottom, color=color, label=name, width=0.75)
                bottom = [b + v for b, v in zip(bottom, share)]
            for x, t in zip(xs, g["makespan_s"]):
                ax.text(x, 101, f"{t * scale:.3g}", ha="center", va="bottom", fontsize="xx-small", rotation=90)
            labels = [f"cp {int(row['cp'])}" + "".join(f"\n{style.show_value(o, row[o])}" for o in in_bar)
                      for _, row in g.iterrows()]
            ax.set_xticks(xs)
            ax.set_xticklabels(labels, fontsize="x-small")
            ax.set_ylim(0, 118)
            ax.set_yticks(range(0, 101, 20))
            ax.set_title(f"S = {tokens(seq)}" + (f", {style.short_key(row_dim)}={style.show_value(row_dim, rv)}"
                                                 if row_dim else ""), fontsize="medium")
            if c == 0:
                ax.set_ylabel(f"% of the {noun} on the critical GPU")
            ax.grid(True, axis="y", alpha=0.3)
            ax.set_axisbelow(True)
    fig.suptitle(f"Where the {noun} goes: the GPU that finishes last, from 0 to the end "
                 f"(numbers on the bars: {noun} in {unit})" +
                 (f"\nbars: cp / {' / '.join(style.short_key(o) for o in in_bar)}" if in_bar else ""))
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(parts), fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return style.save(fig, os.path.join(out, "time_breakdown.png"), DPI)


def plot_algorithms(ok, record, out):
    """One panel per sequence length: each CP algorithm in its colour, over the CP degree or as grouped bars."""
    algs = [a for a in varying_axes(record, ok) if style.is_algorithm_axis(a)] or \
        [a["key"] for a in record["axes"] if style.is_algorithm_axis(a["key"])]
    if not algs:
        return None
    title, noun = style.phase_figure(ok)
    dims = algs + [d for d in series_dims(record, ok, without=(SEQ_AXIS,)) if d not in algs]
    look = style.SeriesStyle(dims, ok)
    seqs = sorted(ok["seq_len"].unique())
    fig, axes = plt.subplots(1, len(seqs), figsize=(max(FIGSIZE[0], 4.8 * len(seqs)), FIGSIZE[1]), squeeze=False)
    for i, (ax, seq) in enumerate(zip(axes[0], seqs)):
        rows = ok[ok["seq_len"] == seq]
        if cp_varies(ok):
            makespan_lines(ax, rows, ok, dims, look, noun, ylabel=i == 0)
        else:
            groups, bars = (dims[len(algs):len(algs) + 1], algs + dims[len(algs) + 1:])
            makespan_bars(ax, rows, ok, groups, bars, look, noun, ylabel=i == 0)
        ax.set_title(f"S = {tokens(seq)}")
    style.legend_outside(axes[0][-1])
    fig.suptitle(f"{title}: CP algorithms compared" + ("" if cp_varies(ok) else f" ({fixed_cp_note(ok)})"))
    return style.save(fig, os.path.join(out, "algorithm_comparison.png"), DPI)


def make_plots(sweep_dir, out_dir=None):
    """Writes the plots; returns the list of PNG paths."""
    record, rows = load_sweep(sweep_dir)
    ok = rows[rows["status"] == "ok"].copy()
    if ok.empty:
        raise SystemExit(f"{sweep_dir}/sweep.csv: no point ran successfully, nothing to plot")
    if "phase" in ok and (ok["phase"] == "serve").all():  # serving: latency against the arrival rate
        import plot_serve
        return plot_serve.make_plots(sweep_dir, out_dir)
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
