#!/usr/bin/env python3
"""Fits the per-plane latencies of PyTorch's NCHW bilinear upsample and the
per-value times of its other upsample kernels (docs/model.md "Memory-bound
kernels") on calibrate/measure/resize_kernels.py's H100 sweep
(calibrate/data/h100/resize_kernels), and judges them.

PyTorch's `upsample_bilinear2d_out_frame` gives each thread one output
position and loops over every (image, channel) plane. A CNN's map has far
fewer positions than the GPU has resident threads, so the kernel runs in

    t = waves x planes x ((1 - h) x resample_plane_ns + h x resample_plane_l2_ns)

with h the share of its bytes found in L2, not in its traffic's time: the
sweep's 14 x 14 map of 32,768 planes takes 6.4 ms where its bytes need 10 us.

Each call becomes tilewave's layer form (a `copy` with `resample_planes`), its
`l2_hit_bytes` all of its bytes where they fit the share of L2 that the GPU
file's `l2_reuse_fraction` keeps (the sweep repeats one call, so its tensors
stay there) and none where they exceed L2; calls between the two are
left out, their share unknown. The two are fitted by scipy's least_squares on
the log of time (each evaluation the module's predict_layers on a copy of the
GPU file holding the candidates) over the calls of output side 14 and 56, and
judged on sides 28 and 112.

The channels_last bilinear kernel and the nearest ones spread over every
output value instead, each value's index arithmetic outlasting its bytes:

    t = max(traffic, values x resample_*_value_ps)

one time per value for each kernel (nearest over NCHW, nearest over
channels_last, bilinear over channels_last), each fitted alone the same way on
its own calls of sides 14 and 56 and judged on 28 and 112.

usage: python3 -m calibrate.fit.resample_planes calibrate/data/h100/resize_kernels [--tilewave build/analyzer/tilewave]
         [--gpu h100] [--write]
(--write: the five go into gpu_models/h200.json's eager set with their provenance, through tilewave.write_gpu;
the H100 and H200 share SM count and clock, and their HBM's latency is taken as the same)
"""
import argparse
import functools
import os
import sys

import numpy as np
from scipy.optimize import least_squares

from calibrate.cli import InputError
from calibrate.fit.sweep_fit import add_common_args, errors, layer_times, read_gpu, read_sweep, report
from calibrate.module import tilewave_module
from calibrate.pair.harness_runs import commit

LOOP_PARAMS = ("resample_plane_ns", "resample_plane_l2_ns")
# The per-value kernels: (layer-set `resample_kernel`, its parameter, the calls' interpolation and layout).
VALUE_KERNELS = (("nearest_nchw", "resample_nearest_value_ps", "nearest", "nchw"),
                 ("nearest_nhwc", "resample_nearest_nhwc_value_ps", "nearest", "channels_last"),
                 ("linear_nhwc", "resample_linear_nhwc_value_ps", "bilinear", "channels_last"))
PARAMS = LOOP_PARAMS + tuple(v[1] for v in VALUE_KERNELS)
FIT_SIDES, HELD_SIDES = (14, 56), (28, 112)
COMMAND = "python3 -m calibrate.fit.resample_planes calibrate/data/h100/resize_kernels --write"


def value_bytes(mode):
    """Bytes a value of the kernel: half for `*_half`, else fp32 (autocast casts a half input to fp32 first)."""
    return 2 if mode.endswith("_half") else 4


def value_kernel(call):
    """The layer-set `resample_kernel` of a call's upsample kernel, None where it loops over planes."""
    interpolation = call["mode"].split("_")[0]
    return next((k for k, _, i, layout in VALUE_KERNELS if i == interpolation and layout == call["layout"]), None)


def sweep(folder):
    """The header and the calls, each with its upsample kernel's time (`kernel_us`); InputError where the file or a
    row is not what calibrate/measure/resize_kernels.py writes."""
    path = os.path.join(folder, "resize_kernels.jsonl")
    header, rows = read_sweep(path, ("gpu", "torch"), ("mode", "layout", "input", "output", "planes", "kernels",
                                                        "error"))
    calls = []
    for n, r in enumerate(rows, 2):
        try:
            kernel = [k for k in r["kernels"] if "upsample" in k[0]]
            if len(kernel) == 1 and not r["error"]:
                call = dict(r, kernel_us=float(kernel[0][2]), kernel=kernel[0][0])
                value_bytes(call["mode"]), value_kernel(call), int(np.prod(call["input"])), call["output"][2]
                if not call["kernel_us"] > 0 or not call["planes"] > 0:
                    raise ValueError("a time or planes not above 0")
                calls.append(call)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) as e:
            raise InputError("%s: row %d is not a resize_kernels row (%s)" % (path, n, e)) from None
    return header, calls


@functools.lru_cache(maxsize=None)
def l2_bounds(gpu):
    """(bytes a repeated call keeps in L2: the share `l2_reuse_fraction` allows, L2's bytes) of a GPU file, read
    once per file."""
    g = read_gpu(gpu)
    try:
        return g["l2_mb"] * 1e6 * g["params"]["l2_reuse_fraction"], g["l2_mb"] * 1e6
    except (KeyError, TypeError):
        raise InputError("GPU file %s: no l2_mb or params.l2_reuse_fraction" % gpu) from None


def bytes_moved(call):
    """The call's input and output bytes."""
    return (int(np.prod(call["input"])) + int(np.prod(call["output"]))) * value_bytes(call["mode"])


def l2_state(call, gpu):
    """'l2' where the call's bytes fit the share of L2 a repeated call keeps, 'dram' beyond L2, else None."""
    window, l2 = l2_bounds(gpu)
    size = bytes_moved(call)
    return "l2" if size <= window else "dram" if size >= l2 else None


def layer(call, hits):
    """The call as tilewave's eager lowering gives it: a copy that loops over its planes (a linear resample of
    NCHW memory, a cubic one of any) or spreads over its values at its kernel's time per value; with `hits`,
    all its bytes in L2."""
    out = {"op": "copy", "elems_in": int(np.prod(call["input"])), "elems_out": int(np.prod(call["output"])),
           "dtype": "fp32" if value_bytes(call["mode"]) == 4 else "fp16"}
    kernel = value_kernel(call)
    if kernel:
        out["resample_kernel"] = kernel
    else:
        out["resample_planes"] = call["planes"]
    if hits:
        out["l2_hit_bytes"] = bytes_moved(call)
    return out


def tilewave_times(tw, calls, gpu, values=None, params=PARAMS):
    """tilewave's time of each call on GPU file `gpu`, with `values` (in `params`' order) in place of its own."""
    return layer_times(tw, [layer(c, c["state"] == "l2") for c in calls], gpu, params, values)


def fit(tw, calls, gpu, params, start, upper):
    """scipy's least squares on the log of time over `calls`, for `params` from `start` within (1% of start,
    `upper`)."""
    measured = np.log([c["kernel_us"] for c in calls])
    res = least_squares(lambda p: np.log(tilewave_times(tw, calls, gpu, p, params)) - measured, start,
                        bounds=([s / 100 for s in start], [upper] * len(start)), x_scale=start, diff_step=1e-3)
    return [round(float(v), 2) for v in res.x]


def table_lines(folder, tw, gpu):
    header, calls = sweep(folder)
    for c in calls:
        c["state"] = l2_state(c, gpu)
    looped = [c for c in calls if c["layout"] == "nchw" and c["mode"].startswith("bilinear")]
    known = [c for c in looped if c["state"]]
    if not any(c["output"][2] in FIT_SIDES for c in known):
        raise InputError("%s: no NCHW bilinear call of output side %s to fit the plane latencies on"
                         % (folder, " or ".join(map(str, FIT_SIDES))))
    loop_calls = [c for c in known if c["output"][2] in FIT_SIDES]
    values = fit(tw, loop_calls, gpu, LOOP_PARAMS, [300.0, 150.0], 5000.0)
    # A latency whose calls the sweep lacks is not fitted: it would stay at its start.
    values = [v if any(c["state"] == state for c in loop_calls) else None for v, state in zip(values, ("dram", "l2"))]
    by_kernel = {k: [c for c in calls if value_kernel(c) == k and c["state"]] for k, _, _, _ in VALUE_KERNELS}
    for kernel, param, _, _ in VALUE_KERNELS:
        fit_calls = [c for c in by_kernel[kernel] if c["output"][2] in FIT_SIDES]
        values += fit(tw, fit_calls, gpu, (param,), [5.0], 100.0) if fit_calls else [None]
    fitted = [(n, v) for n, v in zip(PARAMS, values) if v is not None]
    lines = [f"{len(calls)} upsample kernels (F.interpolate) on the {header['gpu']} (torch {header['torch']}): "
             f"{len(looped)} NCHW bilinear, {len(looped) - len(known)} of them left out (bytes between the L2 share "
             f"a repeated call keeps and L2), and every call of the other kernels whose bytes are known to be in "
             "L2 or not", "",
             f"| kernels | data in | calls | {gpu}'s file: median | p90 | ratio | fitted: median | p90 | ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]

    def row(name, state, sel):
        if not sel:  # a sweep cut short by its deadline: no such calls
            return
        measured = [c["kernel_us"] for c in sel]
        names, fitted_values = zip(*fitted)
        lines.append(f"| {name} | {state} | {len(sel)} | {errors(tilewave_times(tw, sel, gpu), measured)} | "
                     f"{errors(tilewave_times(tw, sel, gpu, fitted_values, names), measured)} |")

    for split, sides in (("fit: NCHW bilinear, side 14, 56", FIT_SIDES), ("held out: NCHW bilinear, side 28, 112", HELD_SIDES)):
        for state in ("l2", "dram"):
            row(split, state, [c for c in known if c["output"][2] in sides and c["state"] == state])
    for kernel, _, _, _ in VALUE_KERNELS:
        for split, sides in (("fit", FIT_SIDES), ("held out", HELD_SIDES)):
            row(f"{split}: per value, {kernel}, side {', '.join(map(str, sides))}", "both",
                [c for c in by_kernel[kernel] if c["output"][2] in sides])
    lines += ["", "fitted on the fit rows: " + ", ".join(f"{n} {v:.2f}" for n, v in fitted)]
    return lines, fitted


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    add_common_args(ap, "a resize_kernels folder (calibrate/data/h100/resize_kernels)")
    args = ap.parse_args()
    try:
        lines, fitted = table_lines(args.sweep_dir, tilewave_module(args.tilewave), args.gpu)
    except InputError as e:
        sys.exit("resample_planes.py: %s" % e)
    report(args, lines, [n for n, _ in fitted], [v for _, v in fitted],
           f"{COMMAND} (commit {commit()}): calibrate/data/h100/resize_kernels, PyTorch's upsample kernels on an "
           "H100 SXM (the H200's SM count and clock; HBM3's latency taken for HBM3e's)")


if __name__ == "__main__":
    main()
