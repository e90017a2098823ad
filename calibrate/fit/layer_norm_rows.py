#!/usr/bin/env python3
"""Fits the per-row time of PyTorch eager's LayerNorm over fp32 values
(docs/model.md "Memory-bound kernels") on the H200 corpus's profiled forwards.

Where a row's width is a multiple of 4, PyTorch runs a LayerNorm as
`vectorized_layer_norm_kernel`, a block a row. Over many short rows its time
goes by rows, not bytes: tilewave charges `row_ns` a row on top of the
traffic. A sweep of widths and types on an H100 (the H200's SMs and clock;
calibrate/data/h100/row_kernels) shows an fp32 row costing about 1.35x a half
one at every width up to 1,024. Under autocast a ViT's residual stream is fp32,
so its LayerNorms run the fp32 kernel; tilewave marks LayerNorm layers
`layer_norm` and multiplies `row_ns` by `layer_norm_fp32_row_factor` where
their values are 4 bytes.

Pairing: the library's one step (`tilewave check`, the module's check(), as
calibrate/validate/kernel_classes.py calls it) pairs each measured kernel
with a predicted one; a pair is used when its measured kernel is a
`layer_norm_kernel` and its predicted kernel a `layer_norm` row layer. The
factor is fitted on the fit families' fp32 pairs, linear once the model's own
floor and traffic are known:

    measured - fixed_us - traffic = rows * row_ns * 1e-3 * layer_norm_fp32_row_factor
      traffic = memory_us - rows * row_ns * 1e-3 * (the factor the file holds)

by scipy's bounded linear least squares on relative error, within the
parameter's bounds (`tilewave params`). The tables are tilewave's own
predictions per split and type: with the value the GPU file holds and, when
the fit moved it, with the fitted value. The sweep's own ratio is printed
first, as the evidence the term stands on.

usage: python3 -m calibrate.fit.layer_norm_rows build/analyzer/tilewave [--write]
(--write: the factor goes into gpu_models/h200.json's "eager" set with its
provenance, through tilewave.write_gpu; PYTHONPATH=build/analyzer/python)
"""
import collections
import json
import os
import statistics
import tempfile

import numpy as np
from scipy.optimize import lsq_linear

from calibrate import jsonl
from calibrate.fit.corpus_fit import ROOT, NoPairs, corpus_main, held_line, portable, with_params
from calibrate.pair.harness_runs import gpu_params, param_table
from calibrate.validate.kernel_classes import onnx_files, paired_layers

FACTOR = "layer_norm_fp32_row_factor"
COMMAND = "python3 -m calibrate.fit.layer_norm_rows build/analyzer/tilewave --write"
SWEEP = "calibrate/data/h100/row_kernels/row_kernels.jsonl"


def sweep_ratio(out):
    """The fp32 / half time of the sweep's vectorised LayerNorm rows (widths a multiple of 4, at most
    1,024) at its largest size, where rows set the time: the median and range over widths."""
    path = os.path.join(ROOT, SWEEP)
    if not os.path.exists(path):
        return
    rows = [r for r in jsonl.read(path) if "op" in r]
    top = {}
    for r in rows:
        if r["op"] in ("layer_norm", "layer_norm_f32") and r["width"] % 4 == 0 and r["width"] <= 1024:
            key = (r["op"], r["width"])
            if key not in top or r["rows"] > top[key]["rows"]:
                top[key] = r
    ratios = [top[("layer_norm_f32", w)]["median_us"] / top[("layer_norm", w)]["median_us"]
              for (op, w) in top if op == "layer_norm" and ("layer_norm_f32", w) in top]
    if ratios:
        out("%s: fp32 / half LayerNorm time at the largest size, %d widths (multiples of 4, at most 1,024): "
            "median %.2f, range %.2f to %.2f" % (SWEEP, len(ratios), statistics.median(ratios), min(ratios),
                                                 max(ratios)))


def pairs(tilewave, rows, onnx, gpu_file, tmp):
    """[(row, measured us, dtype, predicted layer JSON)] over the LayerNorm pairs, and the forwards tilewave
    could not analyse."""
    def keep(r, p, k):
        layer = (k or {}).get("layer", {})
        if "layer_norm_kernel" in p.get("measured", "") and layer.get("op") == "softmax" and layer.get("layer_norm"):
            return r, p["measured_us"], layer.get("dtype", "?"), k
        return None
    return paired_layers(tilewave, rows, onnx, gpu_file, tmp, keep)


def report(label, data, split_of, out):
    """Per split and type: pairs, measured ms, predicted / measured summed, median |error|."""
    cells = collections.defaultdict(lambda: [0.0, 0.0, []])
    for r, measured, dtype, k in data:
        c = cells[(split_of.get(r["model"], "?"), dtype)]
        c[0] += measured
        c[1] += k["time_us"]
        c[2].append(abs(k["time_us"] / measured - 1))
    out(label)
    out("  %-9s %-6s %7s %12s %10s %14s" % ("split", "type", "pairs", "measured ms", "pred/meas", "median |error|"))
    for (split, dtype), (measured, predicted, errors) in sorted(cells.items()):
        out("  %-9s %-6s %7d %12.2f %10.2f %13.1f%%" % (split, dtype, len(errors), measured / 1e3,
                                                     predicted / measured, 100 * statistics.median(errors)))


def fit(tilewave, rows, gpu_file, split_of, out=print, tables=True, source="calibrate/data/h200/corpus/run"):
    """The factor fitted on the fit families' (split_of[model] == "fit") fp32 LayerNorm pairs of `rows`
    against `gpu_file`'s predictions; `tables`: also the sweep's ratio and the per-split reports. NoPairs
    when the fit families hold no fp32 LayerNorm pair."""
    bounds = param_table(tilewave)[FACTOR]
    held = json.load(open(gpu_file))["runtime_params"]["eager"]["params"]
    values_now = gpu_params(tilewave, gpu_file, "eager")
    row_ns, factor_now = values_now["row_ns"], values_now[FACTOR]
    if tables:
        sweep_ratio(out)
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        before, failed = pairs(tilewave, rows, onnx, gpu_file, tmp)
        if failed:
            out("left out: %d forwards tilewave cannot analyse (%s)" % (
                len(failed), ", ".join(sorted({m for m, _, _ in failed}))))
        fp32 = [p for p in before if split_of.get(p[0]["model"]) == "fit" and p[2] == "fp32"]
        if not fp32:
            raise NoPairs("%s: no fit-family fp32 LayerNorm pairs" % source)
        a, b = [], []
        for _, measured, _, k in fp32:
            row_us = k["layer"]["outer"] * row_ns * 1e-3
            traffic = k["memory_us"] - row_us * factor_now
            a.append([row_us / measured])
            b.append((measured - k["fixed_us"] - traffic) / measured)
        factor = float(lsq_linear(np.array(a), np.array(b), bounds=([bounds["min"]], [bounds["max"]])).x[0])
        values = {FACTOR: round(factor, 4)}
        out("fitted on %d fp32 LayerNorm pairs of the fit families (row_ns %.4g): %s" % (
            len(fp32), row_ns, json.dumps(values)))
        if not tables:
            return values
        out(held_line(held, values, gpu_file))
        report("predicted / measured, with the value %s holds" % portable(gpu_file), before, split_of, out)
        if held.get(FACTOR) != values[FACTOR]:
            after, _ = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, values,
                                                               os.path.join(tmp, "gpu.json")), tmp)
            report("predicted / measured, with the fitted value", after, split_of, out)
    return values


def main():
    corpus_main(fit, __doc__, COMMAND, "LayerNorm kernels")


if __name__ == "__main__":
    main()
