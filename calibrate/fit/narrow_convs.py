#!/usr/bin/env python3
"""Fits the step times of cuDNN's implicit GEMMs over narrow channels
(docs/model.md "Narrow-channel convolutions"; docs/validation.md
"Narrow-channel convolutions") on the H200 corpus's profiled forwards.

A dense convolution over fewer input channels than one 16-byte vector (an
RGB stem's 3) runs in half precision either in one of cuDNN's first-layer
kernels (`image_first_layer ... k64c4r7s7`, `k64c4r3s3`, `k32c4r7s7`,
stride 2, over input padded to 4 channels), or, for every other shape, in an
implicit GEMM without vector loads: from NHWC the tensor-core
`sm80_xmma_fprop_implicit_gemm_indexed_wo_smem ... tilesize128x32x16`, from
NCHW the CUDA-core `implicit_convolve_sgemm` / `precomputed_convolve_sgemm`.
tilewave prices the latter by their 128x32x16 steps shared by the SMs:

    t = fixed_us_gemm + ceil(pixels / 128) x ceil(K / 32) / SMs x (tile_us + ceil(C R S / 16) x step_us)

with `narrow_conv_nhwc_tile_us` and `narrow_conv_nhwc_step_us`, or the
`nchw` pair, by the memory the kernel reads. Each paired kernel gives one
equation, linear in its layout's two terms once tilewave's own counts are
known; they are read from tilewave's cost with one term at 1 µs and the
other at 0 (time_us - fixed_us of the kernel's JSON), so no term of the
model is restated here. Solved by scipy's
least_squares on the log of time with a robust (soft L1) loss over the fit
families' kernels, since a pairing that joins an NCHW stem to a neighbouring
convolution's kernel gives a ratio off by 10x; the errors printed are
tilewave's own predictions, per split.

Pairing: `tilewave check`'s pairs of each profiled forward
(calibrate.validate.kernel_classes.paired_layers), kept where the predicted
kernel is such a convolution and the measured one is a convolution kernel.

usage: python3 -m calibrate.fit.narrow_convs build/analyzer/tilewave [--write]
(--write: the four go into gpu_models/h200.json's "eager" and "inductor" sets
with their provenance, through tilewave.write_gpu; PYTHONPATH=build/analyzer/python.
torch.compile hands convolutions to cuDNN, and its profiled forwards launch the
same three kinds of kernel: see INDUCTOR)
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
from calibrate.validate.kernel_classes import onnx_files, paired_layers

PARAMS = {"nhwc": ("narrow_conv_nhwc_tile_us", "narrow_conv_nhwc_step_us"),
          "nchw": ("narrow_conv_nchw_tile_us", "narrow_conv_nchw_step_us")}
COMMAND = "python3 -m calibrate.fit.narrow_convs build/analyzer/tilewave --write"
INDUCTOR = {"inductor": "the same cuDNN kernels run under torch.compile (image_first_layer, "
                        "implicit_gemm_indexed_wo_smem tilesize128x32x16 and implicit_convolve_sgemm in the "
                        "inductor forwards of calibrate/data/h200/runtimes/*/kernels.jsonl.gz)"}


def layout_of(layer):
    """'nhwc' or 'nchw' for a predicted narrow-channel implicit GEMM (by its kernel name), else None."""
    name = layer.get("kernel", "")
    for layout in PARAMS:
        if name.startswith("conv_unaligned_" + layout):
            return layout
    return None


def keep(row, pair, layer):
    if layer is None or pair.get("measured_class") != "conv" or layer.get("op") not in ("Conv", "ConvTranspose"):
        return None
    return row, pair["measured_us"], layer


def key(row, layer):
    return row["model"], row["batch"], row["layout"], row.get("precision", "amp_fp16"), layer["name"]


def pairs_with(tilewave, rows, onnx, gpu_file, tmp, narrow=None):
    """(row, measured us, predicted layer JSON) of every paired convolution on `gpu_file`; with `narrow` (a set
    of key()s), those convolutions only, whatever kernel the file prices them as."""
    kept, _ = paired_layers(tilewave, rows, onnx, gpu_file, tmp, keep)
    if narrow is None:
        return [x for x in kept if layout_of(x[2])]
    return [x for x in kept if key(x[0], x[2]) in narrow]


def solve(fit_pairs, names, bounds):
    """The (tile, step) terms `names` from [(measured us, JSON with the tile term at 1 us, JSON with the step
    term at 1 us)]: least squares on the log of time with a robust loss, since a kernel the pairing joined to
    another convolution's (an NCHW forward launches several unlike ones back to back) must not pull them."""
    x = np.array([[t["time_us"] - t["fixed_us"], k["time_us"] - k["fixed_us"]] for _, t, k in fit_pairs])
    fixed = np.array([k["fixed_us"] for _, _, k in fit_pairs])
    measured = np.log([m for m, _, _ in fit_pairs])
    low = [max(bounds[n]["min"], 1e-4) for n in names]
    return least_squares(lambda v: np.log(fixed + x @ v) - measured, [0.5, 0.5], loss="soft_l1", f_scale=0.1,
                         bounds=(low, [bounds[n]["max"] for n in names])).x


def fit(tilewave, rows, gpu_file, split_of, out=print, tables=True, source=RUN):
    """The four terms fitted on the fit families' narrow-channel convolutions of `rows` (run.py's profiled
    forwards); NoPairs when no fit-family forward has one."""
    bounds = param_table(tilewave)
    rows = [r for r in rows if r.get("precision", "amp_fp16") in ("amp_fp16", "half")]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        # tilewave's own counts of each kernel: its time less its fixed cost with one term at 1 us, the other 0.
        passes = []
        for term in range(2):
            unit = with_params(tilewave, gpu_file, {n: float(i == term) for names in PARAMS.values()
                                                    for i, n in enumerate(names)}, os.path.join(tmp, "unit.json"))
            passes.append(pairs_with(tilewave, rows, onnx, unit, tmp))
        tile_counts = {(key(r, k), m): k for r, m, k in passes[0]}
        steps = [(r, m, k) for r, m, k in passes[1] if (key(r, k), m) in tile_counts]
        narrow = {key(r, k): layout_of(k) for r, _, k in steps}
        values = {}
        for layout, names in PARAMS.items():
            fit_pairs = [(m, tile_counts[(key(r, k), m)], k) for r, m, k in steps
                         if layout_of(k) == layout and split_of.get(r["model"]) == "fit"]
            if not fit_pairs:
                raise NoPairs("%s: no fit-family forward has a narrow-channel convolution from %s" % (
                    source, layout.upper()))
            values.update({n: round(float(v), 4) for n, v in zip(names, solve(fit_pairs, names, bounds))})
            out("%s: fitted on %d kernels of the fit families: %s" % (
                layout.upper(), len(fit_pairs), ", ".join("%s = %.4f us" % (n, values[n]) for n in names)))
        if tables:
            held = json.load(open(gpu_file))["runtime_params"]["eager"]["params"]
            out(held_line(held, values, gpu_file))
            report("predicted / measured with %s's values" % portable(gpu_file),
                   pairs_with(tilewave, rows, onnx, gpu_file, tmp, narrow), split_of, narrow, out)
            fitted = with_params(tilewave, gpu_file, values, os.path.join(tmp, "fitted.json"))
            report("predicted / measured with the fitted values",
                   pairs_with(tilewave, rows, onnx, fitted, tmp, narrow), split_of, narrow, out)
    return values


def report(label, pairs, split_of, narrow, out):
    """Per split and layout (narrow: key() -> layout): kernels, median and p90 |error|, median ratio, and
    summed ratio."""
    cells = collections.defaultdict(list)
    for r, measured, k in pairs:
        cells[(split_of.get(r["model"], "?"), narrow[key(r, k)])].append((k["time_us"], measured))
    out(label)
    out("  | split | memory | kernels | median |error| | p90 | median ratio | sum ratio |")
    out("  | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (split, layout), v in sorted(cells.items()):
        err = [abs(p / m - 1) for p, m in v]
        out("  | %s | %s | %d | %.1f%% | %.1f%% | %.2f | %.2f |" % (
            split, layout.upper(), len(v), 100 * statistics.median(err), 100 * float(np.percentile(err, 90)),
            statistics.median(p / m for p, m in v), sum(p for p, _ in v) / sum(m for _, m in v)))


def main():
    corpus_main(fit, __doc__, COMMAND, "narrow-channel convolution kernels", INDUCTOR)


if __name__ == "__main__":
    main()
