#!/usr/bin/env python3
"""PyTorch eager's row kernels on shapes no network chose, against tilewave
(docs/validation.md "Short softmax rows: a warp, not a block").

Reads calibrate/data/h200/row_kernels/row_kernels.jsonl (written on the H200
by calibrate/measure/row_kernels.py: softmax over the last axis in half, half
in with fp32 out as autocast runs it, and fp32; softmax over axis 1; LayerNorm;
each width at 2^18, 2^22 and 2^26 values) and predicts every shape as one
layer of the layer-set format (docs/layerset.md) with the GPU file's eager set
over its base parameters, the set eager networks are costed with. Nothing here
was fitted on these shapes: the softmax terms come from the corpus's networks
(calibrate/fit/softmax_rows.py). Prints, per op and band of widths,
predicted over measured summed and the median |error|, and per op the widths
furthest off.

usage: python3 -m calibrate.validate.row_sweep [--gpu gpu_models/h200.json]
(PYTHONPATH=build/analyzer/python)
"""
import argparse
import collections
import json
import os
import statistics
import sys
import tempfile

from calibrate import jsonl
from calibrate.cli import InputError, print_lines
from calibrate.fit.softmax_rows import BANDS, band_of as warp_band_of
from calibrate.module import tilewave_module

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SWEEP = os.path.join(ROOT, "calibrate", "data", "h200", "row_kernels", "row_kernels.jsonl")
GPU = os.path.join(ROOT, "gpu_models", "h200.json")
WIDE = ">1024"  # beyond the warp path's bands: the block-per-row softmax
# What tilewave runs each measured op as: the dtype its precision pass gives it (autocast's softmax writes
# fp32, so tilewave costs it in fp32), and whether its rows are a softmax's contiguous ones.
OPS = {"softmax": ("fp16", True), "softmax_amp": ("fp32", True), "softmax_f32": ("fp32", True),
       "softmax_dim1": ("fp16", True), "layer_norm": ("fp16", False)}


def layer_of(row):
    dtype, is_softmax = OPS[row["op"]]
    layer = {"op": "softmax", "dtype": dtype, "outer": row["rows"], "inner": row["width"]}
    if row["op"] == "softmax_dim1":  # [rows, width, 8] over axis 1: 8 kept values inside each row
        layer.update(outer=row["rows"] * 8, kept_inside=8)
    elif is_softmax and row["width"] <= 1024:
        layer["warp_rows"] = True
    return layer




def eager_gpu(gpu_file, path, module):
    """A copy of the GPU file with its eager set over its base parameters, through the one GPU-file writer."""
    if not os.path.isfile(gpu_file):  # a FIFO or a device would block the read, a folder fails it
        raise InputError("%s: not a regular file" % gpu_file)
    try:
        with open(gpu_file, "rb") as f:
            g = json.loads(f.read().decode("utf-8"))
        g["params"].update(g["runtime_params"]["eager"]["params"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError("%s: not a GPU file with an eager set (%s)" % (gpu_file, e))
    try:
        module.write_gpu(g, path)
    except module.InputError as e:
        raise InputError("%s: %s" % (gpu_file, e))
    return path


def band_of(width):
    return warp_band_of(width) if width <= BANDS[-1][1] else WIDE


def lines_of(gpu_file):
    module = tilewave_module(os.path.join(ROOT, "build", "analyzer", "tilewave"))
    rows = [r for r in jsonl.read(SWEEP) if not r.get("header") and r.get("median_us")]
    with tempfile.TemporaryDirectory() as tmp:
        predicted = module.predict_layers([layer_of(r) for r in rows], gpu=eager_gpu(gpu_file, os.path.join(
            tmp, "eager.json"), module))
    cells = collections.defaultdict(lambda: [0.0, 0.0, []])
    widths = collections.defaultdict(lambda: [0.0, 0.0])
    for r, p in zip(rows, predicted):
        c = cells[(r["op"], band_of(r["width"]))]
        c[0] += r["median_us"]
        c[1] += p["time_us"]
        c[2].append(abs(p["time_us"] / r["median_us"] - 1))
        w = widths[(r["op"], r["width"])]
        w[0] += r["median_us"]
        w[1] += p["time_us"]
    out = ["%d shapes of %s, predicted with %s's eager set" % (
        len(rows), os.path.relpath(SWEEP, ROOT), os.path.relpath(os.path.abspath(gpu_file), ROOT)),
        "  %-13s %-9s %7s %12s %10s %14s" % ("op", "values", "shapes", "measured us", "pred/meas", "median |error|")]
    order = {band: i for i, band in enumerate(["%d-%d" % b for b in BANDS] + [WIDE])}
    for (op, band), (measured, pred, errors) in sorted(cells.items(), key=lambda kv: (list(OPS).index(kv[0][0]),
                                                                                        order[kv[0][1]])):
        out.append("  %-13s %-9s %7d %12.1f %10.2f %13.1f%%" % (op, band, len(errors), measured, pred / measured,
                                                              100 * statistics.median(errors)))
    out.append("furthest off per op (the three sizes summed): width pred/meas")
    for op in OPS:
        worst = sorted((w for w in widths if w[0] == op), key=lambda w: -abs(widths[w][1] / widths[w][0] - 1))[:4]
        out.append("  %-13s %s" % (op, "  ".join("%d: %.2f" % (w[1], widths[w][1] / widths[w][0]) for w in worst)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default=GPU)
    args = ap.parse_args()
    return print_lines("row_sweep.py", lambda: lines_of(args.gpu))


if __name__ == "__main__":
    sys.exit(main())
