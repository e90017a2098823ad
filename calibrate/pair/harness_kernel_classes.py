#!/usr/bin/env python3
"""Profiled against predicted device time by kernel class, for timm's harness
on the H200 (docs/validation.md "timm's harness"): the evidence behind the
layout and precision passes' rates. For each (layout, batch), summed over the
networks of one set, the profiled kernels' time and count of each class
beside tilewave's kernels of the same class (eager, amp fp16, graph launch:
kernel times only).

Classes, by profiled kernel name / by tilewave's kernel:
  bn         cuDNN's bn_fw_inf_1C11 / a BatchNorm pass
  transform  cuDNN's nchwToNhwc, nhwcToNchw / layout_transform
  depthwise  depthwise and direct convolutions / a conv with groups > 1 on CUDA cores
  cast       float16 copies (autocast) / cast
  conv       other convolutions and GEMMs / conv, gemm
  other      everything else

usage: python3 -m calibrate.pair.harness_kernel_classes build/analyzer/tilewave [--set fit|held-out|fresh]
"""
import argparse
import collections
import sys

from calibrate.cli import print_lines
from calibrate.pair.harness_runs import RUNS, kernel_lists, predict, rows, zoo_split
from calibrate.pair.kernel_names import kernel_class  # (analyzer/data/kernel_names.json)

CLASSES = ["bn", "transform", "depthwise", "cast", "conv", "other"]


def measured_class(name):
    """The harness class of a profiled kernel: analyzer/data/kernel_names.json's harness rules."""
    return kernel_class(name, "harness")


def predicted_class(layer):
    op, problem = layer["op"], layer.get("layer", {})
    if (op == "bias" and problem.get("op") == "norm") or op == "BatchNormalization":
        return "bn"
    if op == "layout_transform":
        return "transform"
    if op == "cast":
        return "cast"
    if problem.get("op") in ("conv", "gemm", "attention"):
        return "depthwise" if layer.get("path") == "direct_conv" else "conv"
    return "other"


def class_sums(tilewave, want):
    """{(layout, batch): {"m_" / "mn_" / "p_" / "pn_" + class: profiled us / kernels / predicted us / kernels}}
    over the networks of set `want`; without `tilewave` the profiled side only."""
    fit, held = zoo_split()
    run = RUNS[1] if want == "fresh" else RUNS[0]
    kernels = kernel_lists(run)
    sums = collections.defaultdict(lambda: collections.defaultdict(float))
    runs = []
    for r in rows(run):
        in_set = want == "fresh" or (r["model"] in fit) == (want == "fit") and (r["model"] in fit or r["model"] in held)
        k = kernels.get((r["model"], r["layout"], r["batch"]))
        if in_set and k:
            runs.append((r, k))
    for r, k in runs:
        s = sums[(r["layout"], r["batch"])]
        for name, us in k["list"]:
            c = measured_class(name)
            s["m_" + c] += us
            s["mn_" + c] += 1
    if tilewave:
        for r, _ in runs:
            s = sums[(r["layout"], r["batch"])]
            for layer in predict(tilewave, r["model"], r["layout"], r["batch"], "graph")["layers"]:
                if "time_us" in layer:
                    c = predicted_class(layer)
                    s["p_" + c] += layer["time_us"]
                    s["pn_" + c] += 1
    return sums


def table_lines(sums, want):
    lines = ["set %s: profiled / predicted device time (ms) and kernel count, by class" % want,
             "%-13s %5s " % ("layout", "batch") + " ".join("%22s" % c for c in CLASSES)]
    for key in sorted(sums):
        s = sums[key]
        cells = ["%6.1f/%6.1f %4d/%4d" % (s["m_" + c] / 1e3, s["p_" + c] / 1e3, s["mn_" + c], s["pn_" + c])
                 for c in CLASSES]
        lines.append("%-13s %5d " % key + " ".join("%22s" % c for c in cells))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("tilewave", help="the CLI whose build holds the Python module")
    ap.add_argument("--set", default="fit", choices=("fit", "held-out", "fresh"))
    a = ap.parse_args()
    return print_lines("harness_kernel_classes.py", lambda: table_lines(class_sums(a.tilewave, a.set), a.set))


if __name__ == "__main__":
    sys.exit(main())
