#!/usr/bin/env python3
"""Fits PyTorch eager's short-row softmax (docs/model.md "Memory-bound
kernels"; docs/validation.md "Short softmax rows: a warp, not a block") on
the H200 corpus's profiled forwards.

PyTorch runs a softmax over rows of at most 1,024 values as
`softmax_warp_forward`: each row's values, padded to a power of two, sit in
the registers of up to 32 threads, and a group of threads takes two rows
when they are at most 128 values; each row's max and sum are reductions by
warp shuffles, log2(threads a row) steps each.
Attention's short rows (Swin's 49, ViT's 197) are many and cheap: the kernel
is bound by its warps' issue, not by its bytes, and not by the per-row time
`row_ns` that a block-per-row kernel (LayerNorm's) pays. tilewave marks such
softmaxes `warp_rows`, gives each its `warps`, `values_per_thread` and
`shuffles_per_warp` (the kernel JSON's fields), and costs them

    memory_us = max(traffic,
                    warps * (values_per_thread * softmax_warp_value_ns
                             + shuffles_per_warp * softmax_warp_shuffle_ns) * 1e-3,
                    values_per_thread * softmax_warp_chain_ns * 1e-3)

(the last: one warp's dependent chain, the floor of a softmax of few rows,
such as a global-context block's one row of H*W a image)
where a term is set above 0; a set without them charges `row_ns` per row,
as before.

Pairing: the library's one step (`tilewave check`, the module's check(), as
calibrate/validate/kernel_classes.py calls it) pairs each measured kernel
with a predicted one; a pair is used when its measured kernel is
`softmax_warp_forward` (kernel_names.json's softmax_path) and its predicted
kernel a `warp_rows` softmax (analyze()'s JSON of the same configuration,
joined by name in order). Each pair's traffic time is tilewave's own: the
predictions of a copy of the GPU file whose warp terms are negligible
(ISSUE_OFF), so that memory_us is the traffic alone. The three terms are
then fitted on the fit families' pairs by scipy's bounded least squares on
relative error with its soft_l1 loss (f_scale 0.1), within the parameters'
bounds (`tilewave params`): robust, because a few pairs are not like for
like (a softmax paired with a neighbour the runtime launched in another
order) or far off for reasons the model does not hold (docs/validation.md). The
tables are tilewave's own predictions per width band and split: with the
values the GPU file holds, with `row_ns` per row (the model before this
path), and, when the fit moved them, with the fitted values.

usage: python3 -m calibrate.fit.softmax_rows build/analyzer/tilewave [--write]
(--write: the three go into gpu_models/h200.json's "eager" set with their
provenance, through tilewave.write_gpu; PYTHONPATH=build/analyzer/python)
"""
import collections
import json
import os
import statistics
import tempfile

import numpy as np
from scipy.optimize import least_squares

from calibrate.fit.corpus_fit import RUN, NoPairs, corpus_main, held_line, portable, with_params
from calibrate.pair.harness_runs import param_table
from calibrate.pair.kernel_names import kernel_class
from calibrate.validate.kernel_classes import onnx_files, paired_layers

PARAMS = ("softmax_warp_value_ns", "softmax_warp_shuffle_ns", "softmax_warp_chain_ns")
# Warp terms this small switch the warp path on while its issue time stays far below any kernel's traffic.
ISSUE_OFF = {"softmax_warp_value_ns": 1e-6, "softmax_warp_shuffle_ns": 0.0, "softmax_warp_chain_ns": 0.0}
# Where the fit starts: each term large enough to bound some kernel (a term that bounds none has no gradient
# under the max), the chain one of few rows.
START = {"softmax_warp_value_ns": 0.05, "softmax_warp_shuffle_ns": 0.01, "softmax_warp_chain_ns": 50.0}
BANDS = ((1, 32), (33, 64), (65, 128), (129, 256), (257, 512), (513, 1024))
COMMAND = "python3 -m calibrate.fit.softmax_rows build/analyzer/tilewave --write"


def path_of(name):
    """PyTorch's softmax kernel a measured kernel's name shows (kernel_names.json's softmax_path)."""
    return kernel_class(name, "softmax_path")


def pairs(tilewave, rows, onnx, gpu_file, tmp):
    """[(row, measured us, predicted kernel JSON)] over the pairs of a measured softmax_warp_forward and a
    predicted warp_rows softmax, and the forwards tilewave could not analyse."""
    def keep(r, p, k):
        if path_of(p.get("measured") or "") == "warp" and k and k.get("layer", {}).get("warp_rows"):
            return r, p["measured_us"], k
        return None
    return paired_layers(tilewave, rows, onnx, gpu_file, tmp, keep)


def band_of(width):
    return next("%d-%d" % b for b in BANDS if b[0] <= width <= b[1])


def report(label, data, split_of, out):
    """Per split and row-width band: pairs, measured ms, predicted / measured summed, median |error|."""
    cells = collections.defaultdict(lambda: [0.0, 0.0, []])
    for r, measured, k in data:
        c = cells[(split_of.get(r["model"], "?"), band_of(k["layer"]["inner"]))]
        c[0] += measured
        c[1] += k["time_us"]
        c[2].append(abs(k["time_us"] / measured - 1))
    out(label)
    out("  %-9s %-9s %7s %12s %10s %14s" % ("split", "values", "pairs", "measured ms", "pred/meas", "median |error|"))
    order = {"%d-%d" % b: i for i, b in enumerate(BANDS)}
    for (split, band), (measured, predicted, errors) in sorted(cells.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])):
        out("  %-9s %-9s %7d %12.3f %10.2f %13.1f%%" % (split, band, len(errors), measured / 1e3, predicted / measured,
                                                      100 * statistics.median(errors)))


def misses(label, data, split_of, out, count=4):
    """Per split, the `count` networks whose summed softmax time is furthest off, by milliseconds."""
    nets = collections.defaultdict(lambda: [0.0, 0.0, set()])
    for r, measured, k in data:
        n = nets[(split_of.get(r["model"], "?"), r["model"])]
        n[0] += measured
        n[1] += k["time_us"]
        n[2].add(k["layer"]["inner"])
    out(label)
    for split in sorted({s for s, _ in nets}):
        worst = sorted(((s, m) for s, m in nets if s == split), key=lambda key: -abs(nets[key][1] - nets[key][0]))
        for key in worst[:count]:
            measured, predicted, widths = nets[key]
            out("  %-9s %-32s widths %-16s measured %8.3f ms  pred/meas %.2f" % (
                key[0], key[1], ",".join(str(w) for w in sorted(widths)), measured / 1e3, predicted / measured))


def solve(data, bounds):
    """The three terms by bounded least squares on relative error, given each pair's traffic-only prediction."""
    measured = np.array([m for _, m, _ in data])
    fixed = np.array([k["fixed_us"] for _, _, k in data])
    traffic = np.array([k["memory_us"] for _, _, k in data])
    warps = np.array([k["warps"] for _, _, k in data], dtype=float)
    values = np.array([k["values_per_thread"] for _, _, k in data], dtype=float)
    shuffles = np.array([k["shuffles_per_warp"] for _, _, k in data], dtype=float)

    def residuals(x):
        issue = warps * (values * x[0] + shuffles * x[1]) * 1e-3
        return (fixed + np.maximum(np.maximum(traffic, issue), values * x[2] * 1e-3)) / measured - 1
    lo = [bounds[n]["min"] for n in PARAMS]
    hi = [bounds[n]["max"] for n in PARAMS]
    start = [min(max(START[n], a), b) for n, a, b in zip(PARAMS, lo, hi)]
    return least_squares(residuals, start, bounds=(lo, hi), loss="soft_l1", f_scale=0.1).x


def fit(tilewave, rows, gpu_file, split_of, out=print, tables=True, source=RUN):
    """The three values fitted on the fit families' (split_of[model] == "fit") short-row softmax pairs of `rows`,
    profiled forwards of run.py, against `gpu_file`'s predictions; `tables`: also the per-band reports. NoPairs
    when the fit families run no such softmax."""
    rows = [r for r in rows if any(path_of(n) == "warp" for n, _ in r["list"])]
    bounds = param_table(tilewave)
    held = json.load(open(gpu_file))["runtime_params"]["eager"]["params"]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        traffic, failed = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, ISSUE_OFF,
                                                                  os.path.join(tmp, "traffic.json")), tmp)
        if failed:
            out("left out: %d forwards tilewave cannot analyse (%s)" % (
                len(failed), ", ".join(sorted({m for m, _, _ in failed}))))
        fit_pairs = [p for p in traffic if split_of.get(p[0]["model"]) == "fit"]
        if not fit_pairs:
            raise NoPairs("%s: no fit-family pairs of a measured softmax_warp_forward and a predicted short-row "
                          "softmax" % source)
        x = solve(fit_pairs, bounds)
        values = {n: round(float(v), 5) for n, v in zip(PARAMS, x)}
        out("fitted on %d short-row softmax pairs of %d fit-family networks: %s" % (
            len(fit_pairs), len({p[0]["model"] for p in fit_pairs}), json.dumps(values)))
        if not tables:
            return values
        out(held_line(held, values, gpu_file))  # the script's own run: say whether --write would change the file
        before, _ = pairs(tilewave, rows, onnx, gpu_file, tmp)
        report("predicted / measured, with the values %s holds" % portable(gpu_file), before, split_of, out)
        rows_rule, _ = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, dict.fromkeys(PARAMS, 0.0),
                                                               os.path.join(tmp, "row_ns.json")), tmp)
        report("predicted / measured, with row_ns per row (the warp terms at 0: the model before this path)",
               rows_rule, split_of, out)
        if any(held.get(n) != v for n, v in values.items()):
            after, _ = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, values,
                                                               os.path.join(tmp, "gpu.json")), tmp)
            report("predicted / measured, with the fitted values", after, split_of, out)
        else:
            after = before
        misses("furthest off with the fitted values, per split (every configuration and batch summed)", after,
               split_of, out)
    return values


def main():
    corpus_main(fit, __doc__, COMMAND, "softmax_warp_forward kernels")


if __name__ == "__main__":
    main()
