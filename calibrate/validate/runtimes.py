#!/usr/bin/env python3
"""Runtime validation (issue 7): tilewave's prediction for each runtime
against networks as users run them (calibrate/measure/runtime_bench.py).

For every measured (network, runtime, batch) it runs
`tilewave analyze ONNX --runtime R --batch B --format json` and reports, per
runtime, network set (fit / held-out / fresh / fresh2) and batch: the median and p90
latency error, Kendall tau of predicted against measured latency beside the
tau of FLOPs, and how often the predicted kernel count is within 10% of the
profiler's. Stdlib only.

usage: python3 -m calibrate.validate.runtimes --bench B.jsonl[,B2.jsonl] --kernels K.jsonl[,...]
          [--models-dir onnx_models/runtime] [--gpu h200] [--json OUT.json] [--md OUT.md]
          [--svg-prefix PREFIX] [--set fit|heldout|fresh|fresh2|all]
"""
import argparse
import json
import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor

from calibrate import harness_flags, module
from calibrate.jsonl import read_all
from calibrate.pair.bench_files import zoo_sets
from calibrate.stats import kendall_tau

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def quantile(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def predict(tw, onnx, runtime, batch, gpu):
    """The totals of `analyze --format json` under the CUDA-graph harness, in process (the module beside
    the CLI `tw`); {"error": line} for a network tilewave refuses."""
    module_ = module.tilewave_module(tw)
    try:
        j = module_.analyze(onnx, gpu=gpu, batch=batch, runtime=runtime, **harness_flags.CUDA_GRAPH)
    except module_.InputError as e:
        return {"error": str(e)}
    t = j["total"]
    return {"pred_us": t["time_us"], "pred_kernels": t["kernels"], "flops": t["flops"],
            "unmodelled": len(j.get("unmodelled", []))}


def svg_scatter(points, title, path):
    """Log-log predicted vs measured latency; colour by batch, hollow = fit set."""
    w, h, m = 520, 520, 60
    xs = [p["measured_us"] for p in points] + [p["pred_us"] for p in points]
    lo, hi = math.log10(min(xs) * 0.8), math.log10(max(xs) * 1.25)

    def pos(v, flip=False):
        f = (math.log10(v) - lo) / (hi - lo)
        return m + f * (w - 2 * m) if not flip else h - m - f * (h - 2 * m)
    colours = {1: "#1f77b4", 16: "#ff7f0e", 128: "#2ca02c"}
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="13">%s</text>' % (m, title)]
    for band, dash in ((1.0, ""), (1.12, "4,3"), (1 / 1.12, "4,3"), (1.3, "1,3"), (1 / 1.3, "1,3")):
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="%s"/>' % (
            pos(10 ** lo), pos(10 ** lo * band, True), pos(10 ** hi / band), pos(10 ** hi, True), dash))
    for e in range(int(math.floor(lo)), int(math.ceil(hi)) + 1):
        if lo <= e <= hi:
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (pos(10 ** e), h - m + 15, 10 ** e / 1e3))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (m - 5, pos(10 ** e, True) + 4, 10 ** e / 1e3))
    out.append('<text x="%d" y="%d" text-anchor="middle">measured latency (ms)</text>' % (w / 2, h - 20))
    out.append('<text x="15" y="%d" transform="rotate(-90 15 %d)" text-anchor="middle">predicted latency (ms)</text>' % (h / 2, h / 2))
    for p in points:
        c = colours.get(p["batch"], "#555")
        fill = "none" if p["set"] == "fit" else c
        out.append('<circle cx="%.1f" cy="%.1f" r="3.5" stroke="%s" fill="%s"><title>%s b%d</title></circle>' % (
            pos(p["measured_us"]), pos(p["pred_us"], True), c, fill, p["model"], p["batch"]))
    y = 40
    for b, c in colours.items():
        out.append('<circle cx="%d" cy="%d" r="4" fill="%s"/><text x="%d" y="%d">batch %d</text>' % (m + 8, y, c, m + 16, y + 4, b))
        y += 15
    out.append('<text x="%d" y="%d">filled: held-out/fresh, hollow: fit; lines: y=x, ±12%%, ±30%%</text>' % (m + 8, y + 4))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def evaluate(tw, bench_paths, kernel_paths="", models_dir=os.path.join(ROOT, "onnx_models", "runtime"), gpu="h200"):
    """(rows, table, lines): per (network, runtime, batch) rows, the summary per runtime, set and batch, and
    that summary as the markdown table main prints (docs/validation.md "Runtimes"; README's table)."""
    zoo, sets = zoo_sets()
    # A later file's measurement of the same (network, runtime, batch) wins.
    latest = {}
    for r in read_all(bench_paths):
        if not r.get("header") and r.get("status") == "ok":
            latest[(r["model"], r["runtime"], r["batch"])] = r
    bench = list(latest.values())
    kernels = {}
    if kernel_paths:
        for k in read_all(kernel_paths):  # later files win here too
            kernels[(k["model"], k["runtime"], k["batch"])] = k["kernels"]
    jobs = []
    for r in bench:
        onnx = os.path.join(models_dir, zoo.file_stem(r["model"]) + ".onnx")
        if os.path.exists(onnx):
            jobs.append((r, onnx))
        else:
            print("note: no %s, %s left out" % (os.path.relpath(onnx, ROOT), r["model"]), file=sys.stderr)
    with ThreadPoolExecutor(4) as ex:
        preds = list(ex.map(lambda j: predict(tw, j[1], j[0]["runtime"], j[0]["batch"], gpu), jobs))
    rows = []
    for (r, _), p in zip(jobs, preds):
        if "error" in p:
            print("note: %s %s b%d: %s" % (r["model"], r["runtime"], r["batch"], p["error"]), file=sys.stderr)
            continue
        which = next((s for s in ("fresh2", "fresh", "heldout", "fit") if r["model"] in sets[s]), "other")
        rows.append(dict(model=r["model"], family=zoo.family_of(r["model"]), runtime=r["runtime"], batch=r["batch"],
                         set=which, measured_us=r["latency_ms"] * 1e3, pred_us=p["pred_us"], flops=p["flops"],
                         pred_kernels=p["pred_kernels"], kernels=kernels.get((r["model"], r["runtime"], r["batch"])),
                         unmodelled=p["unmodelled"], error=p["pred_us"] / (r["latency_ms"] * 1e3) - 1))
    table = []
    for runtime in sorted({r["runtime"] for r in rows}):
        for which in ("fit", "heldout", "fresh", "fresh2"):
            for b in sorted({r["batch"] for r in rows}):
                sel = [r for r in rows if r["runtime"] == runtime and r["set"] == which and r["batch"] == b]
                if len(sel) < 2:
                    continue
                ape = [abs(r["error"]) for r in sel]
                counted = [r for r in sel if r["kernels"]]
                within = sum(abs(r["pred_kernels"] - r["kernels"]) <= 0.1 * r["kernels"] for r in counted)
                table.append(dict(runtime=runtime, set=which, batch=b, n=len(sel),
                                  median_ape=quantile(ape, 0.5), p90_ape=quantile(ape, 0.9),
                                  median_signed=quantile([r["error"] for r in sel], 0.5),
                                  tau=kendall_tau([r["pred_us"] for r in sel], [r["measured_us"] for r in sel]),
                                  tau_flops=kendall_tau([r["flops"] for r in sel], [r["measured_us"] for r in sel]),
                                  kernels_within_10=within / len(counted) if counted else None,
                                  kernels_counted=len(counted)))
    lines = ["| runtime | set | batch | n | median error | p90 error | median signed | Kendall tau | FLOPs tau | kernel count within 10% |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in table:
        kc = "%.0f%% of %d" % (100 * t["kernels_within_10"], t["kernels_counted"]) if t["kernels_within_10"] is not None else "-"
        lines.append("| %s | %s | %d | %d | %.1f%% | %.1f%% | %+.1f%% | %.2f | %.2f | %s |" % (
            t["runtime"], t["set"], t["batch"], t["n"], 100 * t["median_ape"], 100 * t["p90_ape"],
            100 * t["median_signed"], t["tau"], t["tau_flops"], kc))
    return rows, table, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--kernels", default="")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "onnx_models", "runtime"))
    ap.add_argument("--tilewave", default=os.path.join(ROOT, "build", "analyzer", "tilewave"))
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--svg-prefix")
    args = ap.parse_args()
    rows, table, lines = evaluate(args.tilewave, args.bench, args.kernels, args.models_dir, args.gpu)
    print("\n".join(lines))
    if args.md:
        with open(args.md, "w") as f:
            f.write("\n".join(lines) + "\n\nPer network (error = predicted / measured - 1):\n\n")
            f.write("| runtime | set | network | batch | measured us | predicted us | error | kernels (profiler / predicted) |\n")
            f.write("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n")
            for r in sorted(rows, key=lambda r: (r["runtime"], r["set"], r["model"], r["batch"])):
                f.write("| %s | %s | %s | %d | %.1f | %.1f | %+.1f%% | %s / %d |\n" % (
                    r["runtime"], r["set"], r["model"], r["batch"], r["measured_us"], r["pred_us"], 100 * r["error"],
                    r["kernels"], r["pred_kernels"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": table, "rows": rows}, f, indent=1)
    if args.svg_prefix:
        for runtime in sorted({r["runtime"] for r in rows}):
            pts = [r for r in rows if r["runtime"] == runtime]
            svg_scatter(pts, "tilewave %s on H200: predicted vs measured (%d runs)" % (runtime, len(pts)),
                        "%s_%s.svg" % (args.svg_prefix, runtime))


if __name__ == "__main__":
    main()
