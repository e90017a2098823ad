#!/usr/bin/env python3
"""Fits the arithmetic floor of elementwise kernels that evaluate special
functions (docs/model.md "Memory-bound kernels") on the H200 corpus's
profiled forwards.

GELU's erf, SiLU's sigmoid, a tanh: each element costs tens of instructions,
not one. An H100 sweep (calibrate/measure/eltwise_paths.py,
calibrate/data/h100/eltwise_paths) has PyTorch's erf GELU within 8% of a ReLU
where DRAM sets the pace, but 1.5x where its tensors fit in L2: there it
evaluates about 0.7 T values a second, the SMs' pace, not the memory's. On
the H200's faster memory such a kernel is bound by its arithmetic at every
size (DeiT-Tiny's GELU under autocast: 51.8 us measured, 34.4 us predicted
from its bytes). tilewave counts a kernel's `special_functions` per element
(each op's count in the registry, summed over an activation group's members)
and costs

    memory_us = max(traffic, elems * special_functions * special_function_ps * 1e-6)

Pairing: the library's one step (`tilewave check`, the module's check(), as
calibrate/validate/kernel_classes.py calls it) pairs each measured kernel
with a predicted one; a pair is used when its measured kernel is of class
elementwise and its predicted kernel an elementwise layer with special
functions. Each pair's traffic time is tilewave's own: the predictions of a
copy of the GPU file with the term at 0. The term is fitted on the fit
families' pairs: the value on a 0.01 ps grid over the parameter's bounds
(`tilewave params`) with the least Cauchy loss (scale 0.1) of the relative
errors, by scipy's brute. A grid, not a gradient: the max makes the loss
flat wherever traffic bounds every pair, and a local solver stalls on it
where it starts. The Cauchy loss keeps pairs that no value of the term can
fix from pulling it: NFNet's scaled activations, whose exported group
PyTorch runs as two kernels, are predicted at 4x their measured half before
the term is added. The tables are tilewave's own
predictions per split and special functions an element: with the value the GPU file holds,
with the term at 0 (the model before it), and, when the fit moved it, with
the fitted value.

usage: python3 -m calibrate.fit.special_functions build/analyzer/tilewave [--write]
(--write: the term goes into gpu_models/h200.json's "eager" set with its
provenance, through tilewave.write_gpu; PYTHONPATH=build/analyzer/python)
"""
import collections
import json
import os
import statistics
import tempfile

import numpy as np
from scipy.optimize import brute

from calibrate.fit.corpus_fit import RUN, NoPairs, corpus_main, held_line, portable, with_params
from calibrate.pair.harness_runs import param_table
from calibrate.validate.kernel_classes import onnx_files, paired_layers

PARAM = "special_function_ps"
GRID_PS = 0.01
F_SCALE = 0.1  # relative error beyond which a pair's pull fades
COMMAND = "python3 -m calibrate.fit.special_functions build/analyzer/tilewave --write"


def pairs(tilewave, rows, onnx, gpu_file, tmp):
    """[(row, measured us, predicted kernel JSON)] over the pairs of a measured elementwise kernel and a
    predicted elementwise layer with special functions, and the forwards tilewave could not analyse."""
    def keep(r, p, k):
        layer = (k or {}).get("layer", {})
        if p.get("measured_class") == "elementwise" and layer.get("op") == "eltwise" and layer.get("special_functions"):
            return r, p["measured_us"], k
        return None
    return paired_layers(tilewave, rows, onnx, gpu_file, tmp, keep)


def report(label, data, split_of, out):
    """Per split and special functions an element: pairs, measured ms, predicted / measured summed, median
    |error|."""
    cells = collections.defaultdict(lambda: [0.0, 0.0, []])
    for r, measured, k in data:
        c = cells[(split_of.get(r["model"], "?"), k["layer"]["special_functions"])]
        c[0] += measured
        c[1] += k["time_us"]
        c[2].append(abs(k["time_us"] / measured - 1))
    out(label)
    out("  %-9s %9s %7s %12s %10s %14s" % ("split", "functions", "pairs", "measured ms", "pred/meas",
                                           "median |error|"))
    for (split, n), (measured, predicted, errors) in sorted(cells.items()):
        out("  %-9s %9d %7d %12.2f %10.2f %13.1f%%" % (split, n, len(errors), measured / 1e3, predicted / measured,
                                                    100 * statistics.median(errors)))


def solve(data, bounds):
    """The term on a 0.01 ps grid over its bounds with the least Cauchy loss of relative errors, given each
    pair's traffic-only prediction."""
    measured = np.array([m for _, m, _ in data])
    fixed = np.array([k["fixed_us"] for _, _, k in data])
    traffic = np.array([k["memory_us"] for _, _, k in data])
    work = np.array([k["layer"]["elems"] * k["layer"]["special_functions"] * 1e-6 for _, _, k in data])

    def loss(x):
        relative = (fixed + np.maximum(traffic, work * x[0])) / measured - 1
        return float(np.sum(np.log1p((relative / F_SCALE) ** 2)))
    lo, hi = bounds[PARAM]["min"], bounds[PARAM]["max"]
    return float(brute(loss, [(lo, hi)], Ns=int(round((hi - lo) / GRID_PS)) + 1, finish=None))


def fit(tilewave, rows, gpu_file, split_of, out=print, tables=True, source=RUN):
    """The term fitted on the fit families' (split_of[model] == "fit") special-function pairs of `rows`
    against `gpu_file`'s predictions; `tables`: also the per-split reports. NoPairs when the fit families
    run no such kernel."""
    bounds = param_table(tilewave)
    held = json.load(open(gpu_file))["runtime_params"]["eager"]["params"]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        traffic, failed = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, {PARAM: 0.0},
                                                                  os.path.join(tmp, "traffic.json")), tmp)
        if failed:
            out("left out: %d forwards tilewave cannot analyse (%s)" % (
                len(failed), ", ".join(sorted({m for m, _, _ in failed}))))
        fit_pairs = [p for p in traffic if split_of.get(p[0]["model"]) == "fit"]
        if not fit_pairs:
            raise NoPairs("%s: no fit-family pairs of a measured elementwise kernel and a predicted one with "
                          "special functions" % source)
        values = {PARAM: round(solve(fit_pairs, bounds), 4)}
        out("fitted on %d special-function pairs of %d fit-family networks: %s" % (
            len(fit_pairs), len({p[0]["model"] for p in fit_pairs}), json.dumps(values)))
        if not tables:
            return values
        out(held_line(held, values, gpu_file))
        before, _ = pairs(tilewave, rows, onnx, gpu_file, tmp)
        report("predicted / measured, with the value %s holds" % portable(gpu_file), before, split_of, out)
        report("predicted / measured, with the term at 0 (the model before it)", traffic, split_of, out)
        if held.get(PARAM) != values[PARAM]:
            after, _ = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, values,
                                                               os.path.join(tmp, "gpu.json")), tmp)
            report("predicted / measured, with the fitted value", after, split_of, out)
    return values


def main():
    corpus_main(fit, __doc__, COMMAND, "elementwise kernels with special functions")


if __name__ == "__main__":
    main()
