#!/usr/bin/env python3
"""Fits the one-block-per-row term of PyTorch's GroupNorm moments kernel
(docs/model.md "Memory-bound kernels"; docs/validation.md "GroupNorm's
moments: a block per row") on the H200 corpus's profiled forwards.

Eager PyTorch runs a GroupNorm as `RowwiseMomentsCUDAKernel`, one 512-thread
block per (image, group) row whatever its length, then a small kernel of
per-channel scales and one elementwise pass. A row of 301,056 elements
(PoolFormer's one group at 56x56) is one block on one SM. The model costs the
moments as waves of resident blocks, each taking `row_block_us` plus, per
element of its row, `row_block_element_ns` from DRAM or
`row_block_l2_element_ns` from L2. This script fits the three on the fit
families' moments kernels and reports every family's.

Pairing: the moments kernels of a forward in launch order against the
predicted moments kernels (`row_moments` layers) in the model's order; a
forward whose counts differ is left out and counted. Each kernel gives one
equation, linear in the three parameters once the model's own waves, row
length and L2 share h are known (`waves`, `layer.inner`, `l2_hit_bytes`,
`bytes` of its JSON):

    measured - fixed_us  =  waves * row_block_us
                          + waves * inner * 1e-3 * ((1 - h) * row_block_element_ns + h * row_block_l2_element_ns)

solved by scipy's bounded linear least squares on relative error, within the
parameters' bounds (`tilewave params`). The errors printed after the fit are
tilewave's own predictions with the fitted values, not this formula's.

usage: python3 -m calibrate.fit.row_moments build/analyzer/tilewave [--write]
(--write: the three go into gpu_models/h200.json's "eager" set with their
provenance, through tilewave.write_gpu; PYTHONPATH=build/analyzer/python)
"""
import collections
import json
import os
import statistics
import tempfile

import numpy as np
from scipy.optimize import lsq_linear

from calibrate import harness_flags, module
from calibrate.fit.corpus_fit import RUN, NoPairs, corpus_main, held_line, portable, with_params
from calibrate.pair.harness_runs import param_table
from calibrate.validate.kernel_classes import onnx_files

PARAMS = ("row_block_us", "row_block_element_ns", "row_block_l2_element_ns")
MEASURED = "RowwiseMomentsCUDAKernel"
COMMAND = "python3 -m calibrate.fit.row_moments build/analyzer/tilewave --write"


def forwards(tilewave, rows, onnx, gpu_file):
    """[(row, [(measured us, predicted layer JSON)])], and the forwards whose kernel counts differ."""
    tw = module.tilewave_module(tilewave)
    out, unmatched = [], []
    for r in rows:
        measured = [us for name, us in r["list"] if MEASURED in name]
        doc = tw.analyze(onnx[r["model"]], batch=r["batch"], gpu=gpu_file, **harness_flags.timm_row(r))
        predicted = [k for k in doc["layers"] if k.get("layer", {}).get("row_moments")]
        if len(measured) != len(predicted):
            unmatched.append((r["model"], r["batch"], len(measured), len(predicted)))
            continue
        out.append((r, list(zip(measured, predicted))))
    return out, unmatched


def design(pairs):
    """Rows of the linear system in PARAMS, and the right-hand sides, each divided by the measured time."""
    a, b = [], []
    for measured, k in pairs:
        h = min(1.0, k.get("l2_hit_bytes", 0) / k["bytes"]) if k["bytes"] else 0.0
        elements = k["waves"] * k["layer"]["inner"] * 1e-3
        a.append([k["waves"] / measured, (1 - h) * elements / measured, h * elements / measured])
        b.append((measured - k["fixed_us"]) / measured)
    return np.array(a), np.array(b)


def report(label, data, split_of, out):
    """Per split: kernels, median and p90 |error|; per network and setting, predicted / measured moments time
    summed over the forward, at each batch."""
    by_split = collections.defaultdict(list)
    by_net = collections.defaultdict(lambda: collections.defaultdict(lambda: [0.0, 0.0]))
    for r, pairs in data:
        setting = (split_of.get(r["model"], "?"), r["model"].split("/")[-1],
                   "%s %s" % (r.get("precision", "amp_fp16"), r["layout"]))
        for measured, k in pairs:
            by_split[setting[0]].append(abs(k["time_us"] / measured - 1))
            by_net[setting][r["batch"]][0] += measured
            by_net[setting][r["batch"]][1] += k["time_us"]
    out(label)
    for split, errors in sorted(by_split.items()):
        out("  %-9s kernels %5d  median |error| %5.1f%%  p90 %6.1f%%" % (
            split, len(errors), 100 * statistics.median(errors), 100 * float(np.percentile(errors, 90))))
    batches = sorted({b for cells in by_net.values() for b in cells})
    out("  %-9s %-20s %-23s %s" % ("split", "network", "setting", " ".join("%7s" % ("b%d" % b) for b in batches)))
    for (split, net, setting), cells in sorted(by_net.items()):
        out("  %-9s %-20s %-23s %s" % (split, net, setting, " ".join(
            "%7.2f" % (cells[b][1] / cells[b][0]) if b in cells else "%7s" % "-" for b in batches)))


def fit(tilewave, rows, gpu_file, split_of, out=print, tables=True, source=RUN):
    """The three values fitted on the fit families' (split_of[model] == "fit") moments kernels of `rows`,
    profiled forwards of run.py, against `gpu_file`'s predictions; `tables`: also the per-network reports.
    NoPairs when no fit-family forward has such kernels."""
    rows = [r for r in rows if any(MEASURED in n for n, _ in r["list"])]
    bounds = param_table(tilewave)
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        before, unmatched = forwards(tilewave, rows, onnx, gpu_file)
        left = collections.defaultdict(list)
        for m, _, measured, predicted in unmatched:
            left[m].append((measured, predicted))
        for m, counts in sorted(left.items()):
            out("left out: %s, %d forwards whose moments kernels do not pair (%s measured, %s predicted)" % (
                m, len(counts), "/".join(sorted({str(c[0]) for c in counts})), "/".join(sorted({str(c[1]) for c in counts}))))
        fit_pairs = [p for r, pairs in before if split_of.get(r["model"]) == "fit" for p in pairs]
        if not fit_pairs:
            raise NoPairs("%s: no fit-family forward with %s kernels" % (source, MEASURED))
        a, b = design(fit_pairs)
        solved = lsq_linear(a, b, bounds=([bounds[n]["min"] for n in PARAMS], [bounds[n]["max"] for n in PARAMS]))
        values = {n: round(float(v), 5) for n, v in zip(PARAMS, solved.x)}
        out("fitted on %d moments kernels of %d fit-family forwards: %s" % (
            len(fit_pairs), sum(1 for r, _ in before if split_of.get(r["model"]) == "fit"), json.dumps(values)))
        held = json.load(open(gpu_file))["runtime_params"]["eager"]["params"]
        if tables:  # the script's own run: say whether --write would change the file
            out(held_line(held, values, gpu_file))
        if tables:
            report("predicted / measured, with the values %s holds" % portable(gpu_file), before, split_of, out)
            if any(held.get(n) != v for n, v in values.items()):
                after, _ = forwards(tilewave, rows, onnx, with_params(tilewave, gpu_file, values, os.path.join(tmp, "gpu.json")))
                report("predicted / measured, with the fitted values", after, split_of, out)
    return values


def main():
    corpus_main(fit, __doc__, COMMAND, "RowwiseMomentsCUDAKernel kernels")


if __name__ == "__main__":
    main()
