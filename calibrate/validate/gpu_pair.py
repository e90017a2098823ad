#!/usr/bin/env python3
"""Two GPUs on the same networks (docs/validation.md "The H100 against the
H200"): two calibrate/measure/run.py folders of the same networks, settings
and harness, measured on GPU A and GPU B, held against tilewave's
predictions for the two GPU files.

Per batch, over the settings both folders ran (medians over the settings):

  GPU B/A       the forward replayed in a CUDA graph (graph_ms) on B over A,
                measured, and tilewave's CUDA-graph prediction for B over A
  B's error     median |predicted - measured| / measured GPU time on B, and
                the median predicted / measured ratio
  host B/A      the forward call's host time (host_ms), measured: the
                machines' hosts, not the GPUs
  step B/A      the step of timm's plain loop, measured

Per kernel class (the pairing vocabulary of `tilewave check`, as
calibrate/validate/kernel_classes.py sums it), over the profiled forwards of
the GPU-bound batches (64 and 256) both folders hold: the measured kernel
time on B over A, the predicted one, and, where the two GPUs have the same
SM-cycle rate (SMs x clock), the share of the class's time that moves with
DRAM bandwidth, d in  B/A = (1 - d) + d * BW_A / BW_B  (0: the SMs set the
rate, 1: DRAM does; docs/calibration.md "Carry-over" carries bandwidth
fractions as rates the SMs limit, which is d = 0).

usage: python3 -m calibrate.validate.gpu_pair RUN_A RUN_B --gpus A,B [--tilewave build/analyzer/tilewave]
"""
import argparse
import collections
import os
import statistics
import sys
import tempfile

from calibrate.module import tilewave_module
from calibrate.validate import corpus_networks, kernel_classes
from calibrate.cli import InputError, add_tilewave_option, print_lines

GPU_BOUND_BATCHES = (64, 256)


def key(r):
    """A row's setting; a profiled forward without a precision is run.py's AMP one."""
    return (r["model"], r.get("precision", "amp_fp16"), r["layout"], r["batch"])


def gpu_facts(tilewave, ids):
    """The GPU files' database rows (`tilewave gpus --format json`), by id, in the order given."""
    rows = {g["id"]: g for g in tilewave_module(tilewave).gpu_database()}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise InputError("--gpus: no GPU file %s in the database" % ", ".join(missing))
    return [rows[i] for i in ids]


def dram_share(ratio, a, b):
    """d of the module doc, or None where A and B differ in SM-cycle rate or in nothing."""
    if a["sms"] * a["boost_clock_mhz"] != b["sms"] * b["boost_clock_mhz"]:
        return None
    bandwidth_ratio = a["dram_bandwidth_gbs"] / b["dram_bandwidth_gbs"]
    return None if bandwidth_ratio == 1 else (ratio - 1) / (bandwidth_ratio - 1)


def setting_lines(tilewave, folder_a, folder_b, gpu_a, gpu_b):
    rows_a = {key(r): r for r in corpus_networks.measured_rows(folder_a)}
    rows_b = {key(r): r for r in corpus_networks.measured_rows(folder_b)}
    common = [k for k in sorted(set(rows_a) & set(rows_b)) if rows_a[k].get("graph_ms") and rows_b[k].get("graph_ms")]
    if not common:
        raise InputError("%s, %s: no setting measured in both with a CUDA-graph time" % (folder_a, folder_b))
    with tempfile.TemporaryDirectory() as tmp:
        onnx = kernel_classes.onnx_files(sorted({k[0] for k in common}), tmp)
        pred_a, failed_a = corpus_networks.predictions(tilewave, [rows_a[k] for k in common], onnx, gpu_a)
        pred_b, failed_b = corpus_networks.predictions(tilewave, [rows_b[k] for k in common], onnx, gpu_b)
    both = [k for k in common if k in pred_a and k in pred_b]
    out = ["%d networks, %d settings measured on both and predicted for both (%s, %s)" % (
        len({k[0] for k in both}), len(both), gpu_a, gpu_b), "",
        "| batch | n | GPU B/A measured | GPU B/A predicted | B's GPU median | B's GPU ratio "
        "| host B/A measured | step B/A measured |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for batch in sorted({k[3] for k in both}):
        ks = [k for k in both if k[3] == batch]
        a, b = [rows_a[k] for k in ks], [rows_b[k] for k in ks]
        ratio_b = [pred_b[k].graph["time_us"] / 1e3 / rows_b[k]["graph_ms"] for k in ks]
        out.append("| %d | %d | %.3f | %.3f | %.1f%% | %.2f | %.2f | %.2f |" % (
            batch, len(ks), statistics.median(y["graph_ms"] / x["graph_ms"] for x, y in zip(a, b)),
            statistics.median(pred_b[k].graph["time_us"] / pred_a[k].graph["time_us"] for k in ks),
            100 * statistics.median(abs(r - 1) for r in ratio_b), statistics.median(ratio_b),
            statistics.median(y["host_ms"] / x["host_ms"] for x, y in zip(a, b) if x.get("host_ms") and y.get("host_ms")),
            statistics.median(y["step_ms_median"] / x["step_ms_median"] for x, y in zip(a, b))))
    for model, error in sorted({**failed_a, **failed_b}.items()):
        out.append("  left out: %s: %s" % (model, error))
    return out


def forward_class_sums(tilewave, folder, gpu, keys):
    """{setting: {class: Counter(measured_us, predicted_us)}} of the folder's profiled forwards whose setting is
    in keys and that tilewave could analyse."""
    rows = [r for r in kernel_classes.kernel_rows(folder) if key(r) in keys]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = kernel_classes.onnx_files(sorted({r["model"] for r in rows}), tmp)
        results, _ = kernel_classes.checks(tilewave, rows, onnx, gpu, tmp)
    sums = {}
    for r, c in results:
        by_class = sums.setdefault(key(r), collections.defaultdict(collections.Counter))
        for row in c["by_class"]:
            by_class[row["class"]]["measured_us"] += row["measured_us"]
            by_class[row["class"]]["predicted_us"] += row["predicted_us"]
    return sums


def summed(forwards, keys):
    """{class: Counter} over the forwards of those settings."""
    sums = collections.defaultdict(collections.Counter)
    for k in keys:
        for cls, s in forwards[k].items():
            sums[cls].update(s)
    return sums


def class_lines(tilewave, folder_a, folder_b, a, b):
    def profiled(folder):
        return {key(r) for r in kernel_classes.kernel_rows(folder) if r["batch"] in GPU_BOUND_BATCHES}
    keys = profiled(folder_a) & profiled(folder_b)
    forwards_a = forward_class_sums(tilewave, folder_a, a["id"], keys)
    forwards_b = forward_class_sums(tilewave, folder_b, b["id"], keys)
    both = set(forwards_a) & set(forwards_b)  # a forward either GPU's prediction could not analyse: out of both
    sums_a, sums_b = summed(forwards_a, both), summed(forwards_b, both)
    total_a = sum(s["measured_us"] for s in sums_a.values())
    out = ["", "Kernel classes over the %d profiled forwards at batch %s both hold (%.0f ms measured on %s); DRAM "
           "%.0f GB/s on %s, %.0f GB/s on %s; SMs x clock %d x %.0f MHz and %d x %.0f MHz:" % (
               len(both), " and ".join(map(str, GPU_BOUND_BATCHES)), total_a / 1e3, a["id"],
               a["dram_bandwidth_gbs"], a["id"], b["dram_bandwidth_gbs"], b["id"], a["sms"], a["boost_clock_mhz"],
               b["sms"], b["boost_clock_mhz"]), "",
           "| class | share on A | measured B/A | predicted B/A | DRAM share d, measured | d, predicted |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]

    def cell(d):
        return "-" if d is None else "%.2f" % d
    for cls in sorted(sums_a, key=lambda c: -sums_a[c]["measured_us"]):
        sa, sb = sums_a[cls], sums_b.get(cls, collections.Counter())
        if not (sa["measured_us"] > 0 and sb["measured_us"] > 0):
            continue
        measured = sb["measured_us"] / sa["measured_us"]
        predicted = sb["predicted_us"] / sa["predicted_us"] if sa["predicted_us"] > 0 else None
        out.append("| %s | %.1f%% | %.3f | %s | %s | %s |" % (
            cls, 100 * sa["measured_us"] / total_a, measured, "-" if predicted is None else "%.3f" % predicted,
            cell(dram_share(measured, a, b)), cell(None if predicted is None else dram_share(predicted, a, b))))
    return out


def lines_of(folder_a, folder_b, gpus, tilewave):
    a, b = gpu_facts(tilewave, gpus)
    return setting_lines(tilewave, folder_a, folder_b, a["id"], b["id"]) + class_lines(tilewave, folder_a, folder_b,
                                                                                        a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_a", help="calibrate/measure/run.py folder measured on GPU A")
    ap.add_argument("run_b", help="the same networks measured on GPU B")
    ap.add_argument("--gpus", required=True, help="A,B: the two GPU files' ids")
    add_tilewave_option(ap, os.path.join("build", "analyzer", "tilewave"))
    a = ap.parse_args()
    gpus = a.gpus.split(",")
    if len(gpus) != 2 or not all(gpus):
        print("gpu_pair.py: --gpus takes two GPU ids, A,B", file=sys.stderr)
        return 2
    return print_lines("gpu_pair.py", lambda: lines_of(a.run_a, a.run_b, gpus, a.tilewave))


if __name__ == "__main__":
    sys.exit(main())
