#!/usr/bin/env python3
"""Fits `elementwise_loads_per_clock`, the operand elements an SM loads per
clock in a half-precision GEMM whose odd dimension forces element-by-element
loads (docs/model.md "GEMM-like kernels"), and judges it on pointwise
convolutions that cuDNN ran on NCHW (docs/model.md "Pointwise convolutions on
NCHW").

A pointwise convolution on NCHW over an odd number of positions (a 7 x 7 map:
49) is a GEMM per image whose N is odd: cuBLAS and cuDNN run it with CUTLASS's
sm75 align1 kernels, whose main loop is bound by those loads, (m + n) * k
elements per tile step, not by the tensor cores, and which do not split K.
Before, the model scaled a tensor-core main loop by misaligned_n_efficiency,
which prices a small GEMM's pipeline fill at the same slow rate.

Fitted by scipy's least_squares on the log of time (each evaluation the
module's predict_layers on a copy of the GPU file's eager set holding the
candidate) over the H200 pointwise sweep's `nchw_matmul` cases at side 7 (the
direct GEMM alone, torch.matmul; calibrate/data/h200/pointwise_paths). Judged,
never fitted, on the H100 pointwise sweep's NCHW convolutions of side 7 that
cuDNN ran directly (calibrate/data/h100/pointwise_paths), on
gpu_models/h100.json with the candidate, and on the H200 layer sweep's batched
half-precision GEMMs with an odd misaligned dimension
(calibrate/data/h200/measured.jsonl: the layer runner's cuBLASLt, timed in a
CUDA graph, so on the file's base set).

usage: python3 -m calibrate.fit.elementwise_loads [--tilewave build/analyzer/tilewave] [--write]
(--write: the value goes into gpu_models/h200.json's eager set with its provenance, through tilewave.write_gpu)
"""
import os

import numpy as np
from scipy.optimize import least_squares

from calibrate.cli import InputError
from calibrate.fit.partial_vectors import direct_pointwise
from calibrate.fit.sweep_fit import errors, layer_times, measured_gemms, one_value_main
from calibrate.module import ROOT
from calibrate.validate import pointwise_paths

PARAM = "elementwise_loads_per_clock"
FIT = "calibrate/data/h200/pointwise_paths"
HELD_OUT = "calibrate/data/h100/pointwise_paths"
SWEEP = "calibrate/data/h200/measured.jsonl"
ALIGN = 8  # fp16 and bf16 elements in a 16-byte vector
COMMAND = "python3 -m calibrate.fit.elementwise_loads --write"
SIDE = 7  # 49 positions: odd


def direct_gemms(folder):
    """(layers, measured µs) of a pointwise sweep's nchw_matmul cases at side 7: the direct GEMM alone."""
    layers, measured = [], []
    for r in pointwise_paths.read_rows(folder):
        kernels = pointwise_paths.call_kernels(r["kernels"])
        if r["layout"] == "nchw_matmul" and r["side"] == SIDE and kernels:
            layers.append(pointwise_paths.direct_layer(r))
            measured.append(sum(float(us) for _, us in kernels))
    if not layers:
        raise InputError("%s: no nchw_matmul case at side %d" % (folder, SIDE))
    return layers, measured


def batched_odd_gemms(path):
    """(layers, measured µs) of a layer sweep's batched half-precision GEMMs whose misaligned K (else N) is odd."""
    layers, measured = [], []
    for m, n, k, batch, dtype, us in measured_gemms(path, ("fp16", "bf16")):
        missed = k if k % ALIGN else (n if n % ALIGN else 0)
        if batch > 1 and missed % 2 == 1:
            layers.append({"op": "gemm", "dtype": dtype, "M": m, "N": n, "K": k, "batch": batch})
            measured.append(us)
    return layers, measured


def table_lines(tw):
    layers, measured = direct_gemms(os.path.join(ROOT, FIT))
    log_measured = np.log(measured)
    res = least_squares(lambda v: np.log(layer_times(tw, layers, "h200", (PARAM,), v, eager=True)) - log_measured,
                        [4.0], bounds=([0.5], [64.0]), diff_step=1e-3)
    value = round(float(res.x[0]), 3)
    held_layers, held_measured = direct_pointwise(os.path.join(ROOT, HELD_OUT), side=SIDE)
    lines = [f"{PARAM}: half-precision GEMMs with an odd N (pointwise convolutions over 7 x 7 positions on NCHW)", "",
             "| set | GPU file | calls | median error | p90 | ratio (median) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    sweep_layers, sweep_measured = batched_odd_gemms(os.path.join(ROOT, SWEEP))
    for name, gpu, sel, meas, eager in (
            (f"fit: {FIT} nchw_matmul side {SIDE}", "h200", layers, measured, True),
            (f"held out: {HELD_OUT} direct NCHW side {SIDE}", "h100", held_layers, held_measured, True),
            (f"held out: {SWEEP} batched GEMMs, odd K or N", "h200", sweep_layers, sweep_measured, False)):
        if sel:
            lines.append(f"| {name} | {gpu} | {len(sel)} | "
                         f"{errors(layer_times(tw, sel, gpu, (PARAM,), [value], eager=eager), meas)} |")
    lines += ["", f"fitted on the fit rows: {PARAM} {value:.3f} elements per clock per SM"]
    return lines, value


def main():
    one_value_main(__doc__, "elementwise_loads.py", PARAM, table_lines,
                   f"{COMMAND} (commit {{commit}}): {FIT}, the H200 pointwise sweep's direct GEMMs over 7 x 7 positions "
                   f"(torch.matmul, an odd N); judged on {HELD_OUT}")


if __name__ == "__main__":
    main()
