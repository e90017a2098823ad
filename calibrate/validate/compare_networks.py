#!/usr/bin/env python3
"""Predicted vs measured whole-network latency (docs/validation.md).

Reads a netbench.jsonl (calibrate/measure/netbench), predicts every (model, batch)
with `tilewave analyze --format json` on the bundled ONNX graph, and prints
per-network errors, utilization, and ranking quality (Kendall tau of the
predicted order and of the FLOPs order against the measured order) per batch.
Stdlib only.

usage: python3 -m calibrate.validate.compare_networks TILEWAVE NETBENCH.jsonl [--gpu h200] [--runtime eager-folded] [--markdown] [--json OUT]
"""
import argparse
import json
import os
import statistics
import sys

from calibrate import harness_flags, module
from calibrate.stats import kendall_tau
from calibrate import jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def predict(tilewave, models_dir, model, batch, gpu, runtime):
    """`analyze --format json`'s document under the CUDA-graph harness, in process (the module beside `tilewave`)."""
    return module.tilewave_module(tilewave).analyze(os.path.join(models_dir, model + ".onnx"), gpu=gpu, batch=batch,
                                                    runtime=runtime, **harness_flags.CUDA_GRAPH)


def network_rows(tilewave, netbench, models_dir, gpu="h200", runtime="eager-folded"):
    """One row per ok (model, batch) of NETBENCH whose graph is in MODELS_DIR: measured and predicted."""
    rows = []
    for m in jsonl.read(netbench):
        if m.get("header") or m.get("status") != "ok":
            continue
        if not os.path.exists(os.path.join(models_dir, m["model"] + ".onnx")):
            continue
        p = predict(tilewave, models_dir, m["model"], m["batch"], gpu, runtime)
        meas_us = m["latency_ms"] * 1e3
        pred_us = p["total"]["time_us"]
        peak = p["peak_tflops"] * 1e12
        rows.append({"model": m["model"], "batch": m["batch"], "measured_us": meas_us, "predicted_us": pred_us,
                     "error": pred_us / meas_us - 1, "flops": p["total"]["flops"],
                     "measured_util": p["total"]["flops"] / (meas_us * 1e-6 * peak),
                     "predicted_util": p["total"]["utilization"], "kernels_pred": len(p["layers"]),
                     "kernels_measured": m.get("kernels_per_forward")})
    return rows


def batches(rows):
    """{batch: its rows, fastest measured first}."""
    return {b: sorted([r for r in rows if r["batch"] == b], key=lambda r: r["measured_us"])
            for b in sorted({r["batch"] for r in rows})}


def batch_summary(rows):
    summary = []
    for batch, rs in batches(rows).items():
        meas = [r["measured_us"] for r in rs]
        summary.append({"batch": batch, "networks": len(rs),
                        "median_abs_error": statistics.median(abs(r["error"]) for r in rs),
                        "max_abs_error": max(abs(r["error"]) for r in rs),
                        "tau_predicted": kendall_tau([r["predicted_us"] for r in rs], meas),
                        "tau_flops": kendall_tau([r["flops"] for r in rs], meas)})
    return summary


def markdown_tables(rows, heading="### Batch {batch}"):
    """Per batch, a heading and the network table (docs/validation.md's per-set tables)."""
    lines = []
    for batch, rs in batches(rows).items():
        lines += ["", heading.format(batch=batch), "",
                  "| model | measured µs | predicted µs | error | measured util | predicted util | kernels (pred / measured) |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in rs:
            km = r["kernels_measured"] if r["kernels_measured"] is not None else "-"
            lines.append(f"| {r['model']} | {r['measured_us']:.1f} | {r['predicted_us']:.1f} | {100*r['error']:+.1f}% | "
                         f"{100*r['measured_util']:.2f}% | {100*r['predicted_util']:.2f}% | {r['kernels_pred']} / {km} |")
    return lines


def summary_cells(s):
    return [str(s["batch"]), str(s["networks"]), f"{100*s['median_abs_error']:.1f}%", f"{100*s['max_abs_error']:.1f}%",
            f"{s['tau_predicted']:.3f}", f"{s['tau_flops']:.3f}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tilewave")
    ap.add_argument("netbench")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--runtime", default="eager-folded",
                    help="netbench (runs 1-6) folded BatchNorm and removed conv biases: eager-folded")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "onnx_models"),
                    help="folder of <model>.onnx (onnx_models/heldout_variants for the validation-only set)")
    args = ap.parse_args()

    rows = network_rows(args.tilewave, args.netbench, args.models_dir, args.gpu, args.runtime)
    if not rows:
        sys.exit(f"{args.netbench}: no ok lines for bundled models")
    summary = batch_summary(rows)
    if args.markdown:
        print("\n".join(markdown_tables(rows)))
        print()
        print("| batch | networks | median abs error | max abs error | Kendall tau, predicted | Kendall tau, FLOPs |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for s in summary:
            print("| " + " | ".join(summary_cells(s)) + " |")
    else:
        for batch, rs in batches(rows).items():
            print(f"\nbatch {batch}")
            print(f"{'model':22s} {'measured_us':>12s} {'predicted_us':>12s} {'error':>8s} {'meas util':>9s} {'pred util':>9s}")
            for r in rs:
                print(f"{r['model']:22s} {r['measured_us']:12.1f} {r['predicted_us']:12.1f} {100*r['error']:+7.1f}% "
                      f"{100*r['measured_util']:8.2f}% {100*r['predicted_util']:8.2f}%")
        print()
        for s in summary:
            print(f"batch {s['batch']:4d}: {s['networks']} networks, median |error| {100*s['median_abs_error']:.1f}%, "
                  f"max {100*s['max_abs_error']:.1f}%, Kendall tau predicted {s['tau_predicted']:.3f} vs FLOPs {s['tau_flops']:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
