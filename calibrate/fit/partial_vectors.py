#!/usr/bin/env python3
"""Fits `partial_vector_efficiency`, the main-loop rate of a half-precision
GEMM whose K or N misses the 8-element alignment but is a multiple of 2
(docs/model.md "GEMM-like kernels"), and judges it on pointwise convolutions
run on NCHW (docs/model.md "Pointwise convolutions on NCHW").

Such a GEMM loads 4- or 8-byte vectors (cuBLAS's align2/align4 kernels,
sm80-class on Hopper), not 16-byte ones and not single elements: it runs far
faster than an odd dimension's GEMM (`misaligned_efficiency`,
`misaligned_n_efficiency`), which the model applied to it before.

Fitted by scipy's least_squares on the log of time (each evaluation the
module's predict_layers on a copy of the GPU file holding the candidate) over
the H200 layer sweep's fp16 GEMMs with such a K, or an aligned K and such an N
(calibrate/data/h200/measured.jsonl). Judged, never fitted, on the H100
pointwise sweep's NCHW convolutions of side 14 that cuDNN ran directly
(calibrate/data/h100/pointwise_paths: a GEMM per image, N = 196 positions, a
multiple of 4), costed on gpu_models/h100.json with the candidate.

usage: python3 -m calibrate.fit.partial_vectors [--tilewave build/analyzer/tilewave] [--write]
(--write: the value goes into gpu_models/h200.json's eager set with its provenance, through tilewave.write_gpu)
"""
import os

import numpy as np
from scipy.optimize import least_squares

from calibrate.cli import InputError
from calibrate.fit.sweep_fit import errors, layer_times, measured_gemms, one_value_main, read_gpu
from calibrate.module import ROOT
from calibrate.validate import pointwise_paths

PARAM = "partial_vector_efficiency"
SWEEP = "calibrate/data/h200/measured.jsonl"
POINTWISE = "calibrate/data/h100/pointwise_paths"
COMMAND = "python3 -m calibrate.fit.partial_vectors --write"
ALIGN = 8  # fp16 elements in a 16-byte vector


def partial(d):
    return d % ALIGN != 0 and d % 2 == 0


def sweep_gemms(path):
    """(layers, measured µs) of the sweep's fp16 GEMMs whose first misaligned dimension (K, else N) is partial."""
    layers, measured = [], []
    for m, n, k, batch, dtype, us in measured_gemms(path, ("fp16",)):
        if partial(k) or (k % ALIGN == 0 and partial(n)):
            layers.append({"op": "gemm", "dtype": dtype, "M": m, "N": n, "K": k, "batch": batch})
            measured.append(us)
    if not layers:
        raise InputError("%s: no fp16 GEMM with a K or N that is even but misaligned" % path)
    return layers, measured


def direct_pointwise(folder, side=14):
    """(layers, measured µs) of a pointwise_paths sweep's NCHW cases of `side` that cuDNN ran directly, as one
    GEMM: that kernel's time, the input's cast left out (the sweep's one reader and its rules)."""
    layers, measured = [], []
    for r in pointwise_paths.read_rows(folder):
        kernels = pointwise_paths.call_kernels(r["kernels"])
        if r["layout"] == "nchw" and r["side"] == side and not pointwise_paths.transformed(r["kernels"]) \
                and len(kernels) == 1:
            layers.append(pointwise_paths.direct_layer(r))
            measured.append(float(kernels[0][1]))
    return layers, measured


def table_lines(tw):
    layers, measured = sweep_gemms(os.path.join(ROOT, SWEEP))
    log_measured = np.log(measured)
    res = least_squares(lambda v: np.log(layer_times(tw, layers, "h200", (PARAM,), v)) - log_measured, [0.5],
                        bounds=([0.03], [1.0]), diff_step=1e-3)
    value = round(float(res.x[0]), 3)
    pw_layers, pw_measured = direct_pointwise(os.path.join(ROOT, POINTWISE))
    lines = [f"{PARAM}: a half-precision GEMM whose misaligned K or N is a multiple of 2 elements", "",
             "| set | GPU file | calls | at the odd factor: median | p90 | ratio | fitted: median | p90 | ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    # Each call at the factor of an odd dimension (K's, else N's), which the model gave these GEMMs before.
    for name, gpu, sel, meas in ((f"fit: {SWEEP} GEMMs", "h200", layers, measured),
                                 (f"held out: {POINTWISE} direct NCHW side 14", "h100", pw_layers, pw_measured)):
        if not sel:
            continue
        before = [0.0] * len(sel)
        factors = odd_factors(gpu, sel)
        for factor in set(factors):  # one candidate file per factor, not per call
            at = [i for i, f in enumerate(factors) if f == factor]
            for i, us in zip(at, layer_times(tw, [sel[i] for i in at], gpu, (PARAM,), [factor])):
                before[i] = us
        lines.append(f"| {name} | {gpu} | {len(sel)} | {errors(before, meas)} | "
                     f"{errors(layer_times(tw, sel, gpu, (PARAM,), [value]), meas)} |")
    lines += ["", f"fitted on the fit rows: {PARAM} {value:.3f}"]
    return lines, value


def odd_factors(gpu, layers):
    """The factor the model gave each layer before: misaligned_efficiency where its K (a conv's C) misses the
    alignment, else misaligned_n_efficiency; the eager set's value first. The GPU file is read once."""
    g = read_gpu(gpu)
    eager = g.get("runtime_params", {}).get("eager", {}).get("params", {})
    names = ["misaligned_efficiency" if x["K" if x["op"] == "gemm" else "C"] % ALIGN else "misaligned_n_efficiency"
             for x in layers]
    return [eager[n] if n in eager else g["params"][n] for n in names]


def main():
    one_value_main(__doc__, "partial_vectors.py", PARAM, table_lines,
                   f"{COMMAND} (commit {{commit}}): {SWEEP}, the H200 layer sweep's fp16 GEMMs with an even, misaligned K "
                   f"or N; judged on {POINTWISE}")


if __name__ == "__main__":
    main()
