#!/usr/bin/env python3
"""Why the BatchNorm pass under AMP takes longer than tilewave predicts, from
the profiled kernels of calibrate/measure/run.py folders (issue 31 item 3;
docs/validation.md "BatchNorm under AMP: the plane term", docs/model.md
"Memory-bound kernels").

Every `norm` kernel that `tilewave check` pairs with a predicted BatchNorm
pass (the same pairing as calibrate/validate/kernel_classes.py) is held
beside its predicted layer from `tilewave analyze`: elements, (image,
channel) planes and bytes. Three tables:

  kernels     which kernel each harness runs for a BatchNorm, and its
              summed measured and predicted time
  rate        per kernel and batch, by the elements of one image's
              tensor (C x H x W): the median measured time per million
              elements; a kernel bound by bandwidth alone would have one
              rate at every size
  plane term  norm_plane_ns fitted on the fit families' cuDNN NCHW kernels
              (AMP NCHW): a least squares in the plane time on relative
              error, bounded as the parameter table bounds it, to the
              prediction without the term; then the sum error
              (predicted/measured - 1) and the median absolute error per
              batch, without and with the fitted term, on fit and held_out

usage: python3 -m calibrate.validate.norm_planes RUN_DIR [RUN_DIR ...]
       [--tilewave build/analyzer/tilewave] [--gpu h200]
(PYTHONPATH=build/analyzer/python: the parameter's bounds come from
tilewave's module, its value from gpu_models/GPU.json's AMP NCHW set.)
"""
import argparse
import json
import os
import sys
import tempfile

import pandas as pd
from scipy.optimize import lsq_linear

from calibrate import harness_flags
from calibrate.pair.kernel_names import kernel_class
from calibrate.validate import kernel_classes as kc

PARAM = "norm_plane_ns"
SET = "eager nchw amp"  # the GPU file's set for AMP NCHW (docs/calibration.md "Layout and precision sets")


def kernel_of(name):
    """The BatchNorm kernel a profiled name is: cuDNN's NCHW or NHWC inference kernel, PyTorch's own pass
    (kernel_names.json's batchnorm_kernel)."""
    return kernel_class(name, "batchnorm_kernel")


def norm_pairs(tilewave, rows, onnx, gpu, tmp):
    """One dict per measured norm kernel paired with a predicted BatchNorm pass: kernel_classes.checks()'s
    pairs beside the module's analyze() of the same forward (a network tilewave cannot analyse is
    left out there, and kernel_classes names it)."""
    def keep(r, p, k):
        problem = (k or {}).get("layer", {})
        if p.get("measured_class") != "norm" or p.get("predicted_class") != "norm" or problem.get("op") != "norm" \
                or not problem.get("planes"):
            return None
        return {"model": r["model"], "batch": r["batch"],
                "harness": harness_flags.CONFIGURATIONS[(r.get("precision", "amp_fp16"), r["layout"])],
                "kernel": kernel_of(p["measured"]), "measured_us": p["measured_us"],
                "predicted_us": p["predicted_us"], "elems": problem["elems"], "planes": problem["planes"]}
    return kc.paired_layers(tilewave, rows, onnx, gpu, tmp, keep)[0]


def frame(tilewave, folders, gpu):
    """The pairs of every forward, with each network's split (fit, held_out)."""
    rows = [r for folder in folders for r in kc.kernel_rows(folder)]
    split = {}
    for which in ("fit", "held_out"):
        split.update({r["model"]: which for r in kc.in_families(rows, which)})
    rows = [r for r in rows if r["model"] in split]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = kc.onnx_files(sorted({r["model"] for r in rows}), tmp)
        df = pd.DataFrame(norm_pairs(tilewave, rows, onnx, gpu, tmp))
    df["split"] = df["model"].map(split)
    return df


def current_value(gpu):
    """(value of PARAM in the GPU file's AMP NCHW set, (min, max) of the parameter table)."""
    import tilewave
    spec = next(p for p in tilewave.params() if p["name"] == PARAM)
    path = os.path.join(kc.ROOT, "gpu_models", gpu + ".json")
    try:
        sets = json.load(open(path)).get("runtime_params", {})
    except (OSError, ValueError) as e:
        raise kc.InputError("%s: %s" % (os.path.relpath(path, kc.ROOT), e))
    return float(sets.get(SET, {}).get("params", {}).get(PARAM, spec["default"])), (spec["min"], spec["max"])


def errors(d, predicted):
    """Sum error and median absolute error of `predicted` against measured, per batch and over all."""
    out = {}
    for key, g in [*d.groupby("batch"), ("all", d)]:
        ratio = g[predicted] / g["measured_us"]
        out[key] = (g[predicted].sum() / g["measured_us"].sum() - 1, (ratio - 1).abs().median(), len(g))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dirs", nargs="+", help="calibrate/measure/run.py folders")
    ap.add_argument("--tilewave", default=os.path.join("build", "analyzer", "tilewave"))
    ap.add_argument("--gpu", default="h200")
    a = ap.parse_args()
    if not os.access(a.tilewave, os.X_OK):
        ap.error("%s: not an executable tilewave (build it, or pass --tilewave)" % a.tilewave)
    try:
        value, bounds = current_value(a.gpu)
        df = frame(a.tilewave, a.run_dirs, a.gpu)
    except kc.InputError as e:
        print("norm_planes.py: %s" % e, file=sys.stderr)
        return 1
    pd.set_option("display.width", 200)

    print("BatchNorm kernels paired with a predicted BatchNorm pass (fit and held_out families):")
    kinds = df.groupby(["harness", "kernel"]).agg(kernels=("measured_us", "size"), measured_ms=("measured_us", "sum"),
                                                  predicted_ms=("predicted_us", "sum"))
    kinds[["measured_ms", "predicted_ms"]] /= 1e3
    print(kinds[kinds["kernels"] >= 100].round(1).to_string())

    print("\nmedian measured us per million elements, by the elements of one image (C x H x W):")
    df["per_image"] = pd.cut(df["elems"] / df["batch"], [0, 2 ** 12, 2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20, 2 ** 40],
                             labels=["<4K", "4K-16K", "16K-64K", "64K-256K", "256K-1M", ">1M"])
    df["us_per_melem"] = df["measured_us"] / df["elems"] * 1e6
    main_kinds = df[df["kernel"] != "other"]
    rate = main_kinds.pivot_table(index=["kernel", "batch"], columns="per_image", values="us_per_melem",
                                  aggfunc="median")
    print(rate.round(2).to_string())

    print("\nmedian measured us per million elements, cuDNN NCHW, by the elements of one plane (H x W):")
    nchw = df[(df["harness"] == "AMP NCHW") & (df["kernel"] == "cuDNN NCHW")].copy()
    nchw["plane"] = pd.cut(nchw["elems"] / nchw["planes"], [0, 64, 256, 1024, 4096, 16384, 2 ** 40],
                           labels=["<64", "64-256", "256-1K", "1K-4K", "4K-16K", ">16K"])
    print(nchw.pivot_table(index="batch", columns="plane", values="us_per_melem", aggfunc="median").round(2).to_string())

    # The prediction without the plane term, whatever the GPU file holds now.
    nchw["without_us"] = nchw["predicted_us"] - nchw["planes"] * value * 1e-3
    fit = nchw[nchw["split"] == "fit"]
    design = (fit["planes"] * 1e-3 / fit["measured_us"]).to_numpy()[:, None]
    target = (1 - fit["without_us"] / fit["measured_us"]).to_numpy()
    ns = float(lsq_linear(design, target, bounds=bounds).x[0])
    nchw["with_us"] = nchw["without_us"] + nchw["planes"] * ns * 1e-3
    print("\n%s fitted on the fit families' %d cuDNN NCHW kernels (AMP NCHW): %.4f ns a plane (GPU file: %.4f)"
          % (PARAM, len(fit), ns, value))
    print("| families | batch | kernels | sum err, without | sum err, with | median abs err, without | "
          "median abs err, with |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for which in ("fit", "held_out"):
        d = nchw[nchw["split"] == which]
        before, after = errors(d, "without_us"), errors(d, "with_us")
        for key in before:
            print("| %s | %s | %d | %+.1f%% | %+.1f%% | %.1f%% | %.1f%% |" % (
                which, key, before[key][2], 100 * before[key][0], 100 * after[key][0], 100 * before[key][1],
                100 * after[key][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
