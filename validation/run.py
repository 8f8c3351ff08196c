#!/usr/bin/env python3
"""cpsim's validation suite: runs the scenarios of validation/scenarios, derives the figures published results
give (validation/expected.yaml), and prints one table: case, published, cpsim, ratio error (cpsim / published - 1).

    validation/run.py [--cpsim build/cpsim] [-j 2] [-o out/validation] [--strict]

Ratios (speedups, TP versus CP at equal nodes, efficiencies) are the claims the suite checks: a row whose ratio
error exceeds --tolerance (10%) is marked MISS, and --strict makes any MISS an exit code 1. Absolute times are
shown beside them for information. Writes table.csv and table.md in the output folder.
"""
import argparse, concurrent.futures as cf, csv, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCN = os.path.join(ROOT, "validation", "scenarios")


def load_expected():
    # A tiny reader for expected.yaml's shape (nested mappings of numbers and strings), to need no PyYAML.
    out, stack = {}, [(-1, None)]
    for raw in open(os.path.join(ROOT, "validation", "expected.yaml")):
        line = raw.split("#", 1)[0].rstrip() if not raw.strip().startswith("source:") else raw.rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, _, value = line.strip().partition(":")
        value = value.strip()
        while stack[-1][0] >= indent:
            stack.pop()
        parent = out if stack[-1][1] is None else stack[-1][1]
        if not value:
            parent[key] = {}
            stack.append((indent, parent[key]))
        elif value.startswith("{"):
            parent[key] = {k.strip(): float(v) for k, v in (p.split(":") for p in value.strip("{}").split(","))}
        else:
            parent[key] = value.strip('"') if not value.replace(".", "").isdigit() else float(value)
    return out


def run(cpsim, scenario, sets, out_dir):
    cmd = [cpsim, "run", os.path.join(SCN, scenario), "-o", out_dir]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()[-300:]}")
    return json.load(open(os.path.join(out_dir, "summary.json")))


def attention_span_s(out_dir):
    """The slowest GPU's attention phase: from its QKV projection's end to its output projection's start."""
    trace = json.load(open(os.path.join(out_dir, "trace.json")))
    qkv_end, o_start = {}, {}
    for e in trace["traceEvents"]:
        if e.get("ph") != "X":
            continue
        if e["name"] == "qkv_proj":
            qkv_end[e["pid"]] = max(qkv_end.get(e["pid"], 0), e["ts"] + e["dur"])
        elif e["name"] == "o_proj":
            o_start[e["pid"]] = min(o_start.get(e["pid"], 1e30), e["ts"])
    return max(o_start[p] - qkv_end[p] for p in qkv_end) * 1e-6


def points():
    """Every simulation the table needs: key -> (scenario, --set list, wants trace)."""
    pts = {}
    for cp in (1, 2, 4, 8, 16):
        pts[f"prefill cp{cp}"] = ("meta-405b-prefill.yaml", [f"parallel.cp={cp}", f"platform.nodes={cp}"], False)
    for tp in (16, 32):
        pts[f"prefill tp{tp}"] = ("meta-405b-prefill.yaml", [f"parallel.tp={tp}", f"platform.nodes={tp // 8}"], False)
    pts["prefill 1M cp16"] = ("meta-405b-prefill.yaml", ["parallel.cp=16", "platform.nodes=16", "run.seq_len=1M"], False)
    for cp in (1, 2, 4):
        pts[f"decode cp{cp}"] = ("meta-405b-decode.yaml", [f"parallel.cp={cp}", f"platform.nodes={cp}"], False)
    for miss in MISS_RATES:
        t = int(round(128000 * miss / 8)) * 8  # divisible by the 2N = 8 zigzag chunks
        for algo in ("ring", "pass-q"):
            pts[f"miss {miss} {algo}"] = ("pass-kv-vs-pass-q.yaml", [f"run.seq_len={t}", f"run.cached_tokens={128000 - t}",
                                          f"cp.dense.algorithm={algo}", "cp.dense.partition=zigzag"], False)
    rfa = ["model.layers=1"]
    pts["rfa one gpu"] = ("ring-flash-attention.yaml", rfa + ["parallel.cp=1", "run.seq_len=8K"], True)
    for part in ("contiguous", "zigzag", "striped"):
        pts[f"rfa {part}"] = ("ring-flash-attention.yaml", rfa + [f"cp.dense.partition={part}"], True)
    return pts


MISS_RATES = (0.01, 0.025, 0.05, 0.075, 0.10, 0.20)


def crossover(results):
    """The miss rate where pass-Q stops being faster than pass-KV (linear interpolation of the time difference)."""
    diff = [(m, results[f"miss {m} pass-q"]["makespan_s"] - results[f"miss {m} ring"]["makespan_s"]) for m in MISS_RATES]
    if diff[0][1] >= 0:
        return diff[0][0]
    for (m0, d0), (m1, d1) in zip(diff, diff[1:]):
        if d0 < 0 <= d1:
            return m0 + (m1 - m0) * (-d0) / (d1 - d0)
    return diff[-1][0]


def table(exp, r):
    mp, md = exp["meta_prefill"], exp["meta_decode"]
    t = lambda k: r[k]["makespan_s"]
    ttit = lambda k: r[k]["decode"]["time_per_output_token_s"]
    pub128, rows = mp["s_128k"], []
    def row(case, kind, published, cpsim, source, gated=True):
        rows.append({"case": case, "kind": kind, "published": published, "cpsim": cpsim,
                     "ratio_error": cpsim / published - 1, "gated": gated, "source": source})
    src = "arXiv:2411.01783 Tables 6-7"
    for cp in (2, 4, 8, 16):
        row(f"405B 128K prefill: CP{cp} speedup over CP1", "speedup", pub128["cp1"] / pub128[f"cp{cp}"],
            t("prefill cp1") / t(f"prefill cp{cp}"), src)
    for tp in (16, 32):
        row(f"405B 128K prefill: TP{tp} speedup over TP8", "speedup", pub128["cp1"] / pub128[f"tp{tp}"],
            t("prefill cp1") / t(f"prefill tp{tp}"), src)
    row("405B 128K prefill, 2 nodes: TP16 time / CP2 time", "TP vs CP", pub128["tp16"] / pub128["cp2"],
        t("prefill tp16") / t("prefill cp2"), src)
    row("405B 128K prefill, 4 nodes: TP32 time / CP4 time", "TP vs CP", pub128["tp32"] / pub128["cp4"],
        t("prefill tp32") / t("prefill cp4"), src)
    row("405B CP16 prefill: 1M time / 128K time", "scaling", mp["s_1m"]["cp16"] / pub128["cp16"],
        t("prefill 1M cp16") / t("prefill cp16"), "arXiv:2411.01783 Sec. 4.2.3")
    for cp in (2, 4):
        row(f"405B 128K decode: TTIT CP{cp} / CP1", "slowdown", md["ttit_s"][f"cp{cp}"] / md["ttit_s"]["cp1"],
            ttit(f"decode cp{cp}") / ttit("decode cp1"), "arXiv:2411.01783 Table 7")
    pkq = exp["meta_pass_kv_q"]
    row("405B CP4 persistent KV: pass-KV/pass-Q crossover miss rate", "crossover",
        pkq["crossover_miss_rate"], crossover(r), "arXiv:2411.01783 Table 4")
    for m in (0.01, 0.025, 0.05, 0.10, 0.20):
        key = f"m{m:.3g}" if m not in (0.10, 0.20) else f"m{m:.2f}"
        row(f"405B CP4 persistent KV, {m:.1%} miss: pass-KV time / pass-Q time", "ratio",
            pkq["pass_kv_ms"][key] / pkq["pass_q_ms"][key],
            r[f"miss {m} ring"]["makespan_s"] / r[f"miss {m} pass-q"]["makespan_s"], "arXiv:2411.01783 Table 4")
    one = attention_span_s(r["rfa one gpu"]["_dir"])
    for part in ("contiguous", "zigzag", "striped"):
        row(f"ring attention 8xH800, {part}: efficiency vs one GPU", "efficiency",
            exp["ring_flash_attention"]["efficiency"][part], 8 * one / attention_span_s(r[f"rfa {part}"]["_dir"]),
            "zhuzilin/ring-flash-attention README")
    for k, pub in (("prefill cp1", pub128["cp1"]), ("prefill cp16", pub128["cp16"]), ("prefill 1M cp16", mp["s_1m"]["cp16"])):
        row(f"405B prefill time, {k[8:]} (s)", "absolute", pub, t(k), src, gated=False)
    row("405B decode TTIT, CP1 (s)", "absolute", md["ttit_s"]["cp1"], ttit("decode cp1"), "arXiv:2411.01783 Table 7", gated=False)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpsim", default=os.path.join(ROOT, "build", "cpsim"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("-o", default=os.path.join(ROOT, "out", "validation"))
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--strict", action="store_true")
    a = ap.parse_args()
    exp = load_expected()
    os.makedirs(a.o, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cpsim-validation-")
    pts = points()
    results = {}
    with cf.ThreadPoolExecutor(max_workers=a.j) as pool:
        futs = {}
        for key, (scn, sets, trace) in pts.items():
            d = os.path.join(work, key.replace(" ", "_"))
            futs[pool.submit(run, a.cpsim, scn, sets + ([] if trace else ["outputs.trace=false"]), d)] = (key, d)
        for f in cf.as_completed(futs):
            key, d = futs[f]
            results[key] = f.result()
            results[key]["_dir"] = d
    rows = table(exp, results)
    width = max(len(r["case"]) for r in rows)
    print(f"{'case':{width}}  {'published':>10}  {'cpsim':>10}  {'error':>7}  verdict")
    misses = 0
    for r in rows:
        verdict = ("ok" if abs(r["ratio_error"]) <= a.tolerance else "MISS") if r["gated"] else "(info)"
        misses += verdict == "MISS"
        r["verdict"] = verdict
        print(f"{r['case']:{width}}  {r['published']:10.4g}  {r['cpsim']:10.4g}  {r['ratio_error']:+7.1%}  {verdict}")
    with open(os.path.join(a.o, "table.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["case", "kind", "published", "cpsim", "ratio_error", "verdict", "source"],
                           extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.o, "table.md"), "w") as f:
        f.write("| case | published | cpsim | error | verdict | source |\n|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['case']} | {r['published']:.4g} | {r['cpsim']:.4g} | {r['ratio_error']:+.1%} | {r['verdict']} | {r['source']} |\n")
    gated = sum(r["gated"] for r in rows)
    print(f"validation: {gated - misses} of {gated} ratios within {a.tolerance:.0%}; table in {a.o}/table.md")
    return 1 if a.strict and misses else 0


if __name__ == "__main__":
    sys.exit(main())
