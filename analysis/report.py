#!/usr/bin/python3
"""One Markdown page for a cpsim sweep: the plots, the results table, failures, and the simulated CP volumes next to
the seeds' formulas. Reads DIR/sweep.csv, DIR/sweep.json and the points' summary.json files (never logs).

    /usr/bin/python3 analysis/report.py out/sweep-cp-seqlen      -> out/sweep-cp-seqlen/report.md (+ plots/*.png)
"""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_sweep  # noqa: E402

CAPTIONS = {
    "makespan_vs_cp.png": "Makespan (TTFT, decode time or step time) vs CP degree",
    "makespan_by_point.png": "Makespan of each point (the sweep keeps one CP degree)",
    "scaling_vs_cp.png": "Speedup and parallel efficiency vs CP degree (relative to the smallest CP degree)",
    "bytes_per_layer_kind.png": "CP bytes received per rank and layer, by layer kind",
    "time_breakdown.png": "Time breakdown of the GPU that finishes last",
    "algorithm_comparison.png": "CP algorithms compared",
}


def cell(v):
    return str(v).replace("|", "\\|").replace("\n", " ")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def seconds(v):
    return f"{v * 1e3:.3f} ms" if v < 1 else f"{v:.3f} s"


def share(part, whole):
    return f"{100 * part / whole:.1f}%" if whole > 0 else "-"


def gib(v):
    return f"{v / 2**30:.2f}"


def mib(v):
    return f"{v / 2**20:.1f}"


def write_report(sweep_dir, out_file=None):
    record, rows = plot_sweep.load_sweep(sweep_dir)
    axes = [a["key"] for a in record["axes"]]
    ok = rows[rows["status"] == "ok"]
    failed = rows[rows["status"] != "ok"]
    plots = plot_sweep.make_plots(sweep_dir) if not ok.empty else []
    kinds = [c.split(".", 1)[1] for c in rows.columns if c.startswith("cp_bytes_per_layer.")]

    md = [f"# Sweep report: `{record['scenario']}`", ""]
    md.append(f"{len(rows)} points, {len(ok)} ok, {len(failed)} failed. Axes (the last varies fastest):")
    md.append("")
    md += [f"- `{a['key']}`: {', '.join(a['values'])}" for a in record["axes"]]
    if record["set"]:
        md.append(f"- fixed with `--set`: {', '.join('`' + s + '`' for s in record['set'])}")
    md.append("")
    for path in plots:
        name = os.path.basename(path)
        md += [f"## {CAPTIONS.get(name, name)}", "", f"![{name}]({os.path.relpath(path, sweep_dir)})", ""]

    md += ["## Results", ""]
    md.append("Time shares are those of the GPU that finishes last (compute + exposed comm + idle = makespan); "
              "imbalance is the part of its compute above the mean over GPUs. "
              "Bytes per layer: CP bytes received by one rank in one layer (max over ranks and layers).")
    md.append("")
    header = ["#"] + [f"`{a}`" for a in axes] + ["makespan", "compute", "(imbalance)", "exposed comm", "idle",
                                                    "peak memory (GiB)"] + [f"{k} CP MiB/layer" for k in kinds]
    body = []
    for _, r in ok.iterrows():
        m = r["makespan_s"]
        body.append([r["index"]] + [r[a] for a in axes] +
                    [seconds(m), share(r["critical_compute_s"], m),
                     share(max(0.0, r["critical_compute_s"] - r["compute_busy_mean_s"]), m),
                     share(r["critical_exposed_comm_s"], m),
                     share(r["critical_idle_s"], m), gib(r["memory_max_bytes"])] +
                    [mib(r[f"cp_bytes_per_layer.{k}"]) if r[f"cp_bytes_per_layer.{k}"] == r[f"cp_bytes_per_layer.{k}"]
                     else "-" for k in kinds])
    md += [table(header, body), ""]

    if not failed.empty:
        md += ["## Failed points", ""]
        md += [table(["#"] + [f"`{a}`" for a in axes] + ["status", "error"],
                     [[r["index"]] + [r[a] for a in axes] + [r["status"], f"`{r['error']}`"]
                      for _, r in failed.iterrows()]), ""]

    # The seeds' formulas, from each point's summary.json: simulated bytes must equal the closed form.
    vol_rows = []
    for p in record["points"]:
        if p["status"] != "ok":
            continue
        with open(os.path.join(sweep_dir, p["dir"], "summary.json")) as f:
            summary = json.load(f)
        for v in summary.get("volumes", []):
            formula = v.get("formula_bytes")
            vol_rows.append([p["index"], v["layer_kind"], v["cp_algorithm"],
                             v["simulated_max_rank_received_bytes_per_layer"],
                             "-" if formula is None else formula, "yes" if v.get("match") else "no",
                             f"`{v.get('formula', '')}`"])
    if vol_rows:
        md += ["## CP volumes against the seeds' formulas", ""]
        md += [table(["#", "layer kind", "algorithm", "simulated bytes", "formula bytes", "match", "formula"],
                     vol_rows), ""]

    out_file = out_file or os.path.join(sweep_dir, "report.md")
    tmp = out_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(md))
    os.replace(tmp, out_file)  # whole or absent
    return out_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_dir", help="a `cpsim sweep` (or `cpsim merge`) output folder")
    ap.add_argument("-o", "--output", help="the Markdown file (default: SWEEP_DIR/report.md)")
    args = ap.parse_args()
    print(write_report(args.sweep_dir, args.output))


if __name__ == "__main__":
    sys.exit(main())
