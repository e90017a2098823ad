#!/usr/bin/env python3
"""Fits the parameter sets of eager PyTorch under autocast, per layout
(gpu_models/h200.json runtime_params "eager nchw amp" and "eager nhwc amp";
docs/calibration.md "Layout and precision sets"), on the fit families'
profiled kernels under timm's harness (calibrate/pair/harness_kernel_classes.py's
classes).

Three kinds of kernel change with the layout and precision (docs/model.md
"Layout pass", "Precision pass"):
  bn         cuDNN's bn_fw_inf_1C11 kernel (BatchNorm over fp16 activations
             with fp32 parameters): fixed_us_norm_extra and one rate,
             norm_bw_efficiency = norm_max_bw_efficiency (L2 hits do not make
             it faster, as for PyTorch's own pass)
  transform  cuDNN's nchwToNhwc / nhwcToNchw (nchw only): fixed_us_transform,
             transform_bw_efficiency
  depthwise  the direct convolutions (nchw only): fixed_us_direct and one
             factor on direct_conv_efficiency and direct_bw_efficiency
  reduce     PyTorch's reduce_kernel (the "reduction" class of the pairing
             vocabulary): fixed_us_reduce_extra and reduce_row_ns, the time
             per output of a reduction over contiguous rows (`kept_inside`
             1), beside tilewave's variable time at the base eager set
For each, the summed profiled time per (layout, batch 1/16/256) against
count * fixed + variable / rate, a least squares in (fixed, 1/rate) on
relative error; transforms kernel by kernel instead, each direction
(to_nhwc, to_nchw) paired in launch order in the forwards whose profile has
as many of it as tilewave predicts. For bn and transform the variable part is the kernels'
bytes over the datasheet bandwidth, and their ramp term (docs/model.md
"Memory time"; none for a transform) is taken off the profiled time first: the `ramp_us` that
`tilewave layers` gives each kernel alone (every byte from DRAM, as the
variable part counts them); for depthwise it is
tilewave's variable time at the base eager set, and the rate a factor on it.

usage: python3 -m calibrate.fit.harness_passes build/analyzer/tilewave [--runs RUN_DIR] [--write]
(--write: the sets go into gpu_models/h200.json, with their provenance, through
tilewave.write_gpu: PYTHONPATH=build/analyzer/python). calibrate/fit/fit_all.py
calls fit_sets on a calibrate/measure/run.py folder.
"""
import argparse
import collections
import json
import os
import sys
import tempfile

from calibrate import parallel
from calibrate import module
from calibrate.cli import InputError
from calibrate.pair.harness_kernel_classes import measured_class, predicted_class
from calibrate.pair.kernel_names import kernel_class
from calibrate.pair.harness_runs import ROOT, RUNS, base_gpu_dir, commit, gpu_params, kernel_lists, predict, rows, zoo_split


def ls2(cells):
    """min sum ((n F + v u + o - m)/m)^2 over cells (n, v, m) or (n, v, m, o): (F, u)."""
    a = b = c = d = e = 0.0
    for cell in cells:
        n, v, m = cell[:3]
        w = 1.0 / (m * m)
        m -= cell[3] if len(cell) > 3 else 0.0
        a += w * n * n
        b += w * n * v
        c += w * v * v
        d += w * n * m
        e += w * v * m
    if c == 0:  # no cell has a variable part: F alone
        return d / a, 0.0
    det = a * c - b * b
    return (d * c - b * e) / det, (a * e - b * d) / det


def calibration_runs():
    """(row, profiled forward) of the calibration run's fit families (timm_harness/fit_heldout)."""
    fit, _ = zoo_split()
    kernels = kernel_lists(RUNS[0])
    runs = [(r, kernels.get((r["model"], r["layout"], r["batch"]))) for r in rows(RUNS[0]) if r["model"] in fit]
    return [(r, k) for r, k in runs if k]


def corpus_runs(run_dir, tmp):
    """(row, profiled forward) of the AMP forwards of a calibrate/measure/run.py folder's fit families
    (calibrate/data/h200/corpus/networks.json's split), and {model: ONNX path}, unpacked into tmp."""
    from calibrate.validate import kernel_classes  # the corpus's one reader of profiles and exports
    fit = {n["name"] for n in json.load(open(kernel_classes.CORPUS))["networks"] if n["split"] == "fit"}
    runs = [(r, r) for r in kernel_classes.kernel_rows(run_dir)
            if r["model"] in fit and r.get("precision", "amp_fp16") == "amp_fp16"]
    if not runs:
        raise InputError("%s: no AMP forward of the corpus's fit families" % run_dir)
    return runs, kernel_classes.onnx_files(sorted({r["model"] for r, _ in runs}), tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tilewave", help="the CLI whose build holds the Python module")
    ap.add_argument("--runs", metavar="RUN_DIR", help="fit on this calibrate/measure/run.py folder's fit families "
                    "(as calibrate/data/h200/corpus/run) instead of " + RUNS[0])
    ap.add_argument("--write", action="store_true", help="write the sets into gpu_models/h200.json")
    args = ap.parse_args()
    tilewave = args.tilewave
    with tempfile.TemporaryDirectory() as tmp:
        try:
            runs, onnx = corpus_runs(args.runs, tmp) if args.runs else (calibration_runs(), None)
        except InputError as e:
            sys.exit("harness_passes.py: %s" % e)
        sets = fit_sets(tilewave, runs, os.path.join(base_gpu_dir(tmp), "h200.json"), pmap=parallel.pmap, onnx=onnx)
    data = (os.path.join(args.runs, "kernels.jsonl.gz") + ", AMP forwards of the fit families "
            "(calibrate/data/h200/corpus/networks.json)") if args.runs else (
        RUNS[0] + "/kernels.jsonl.gz, fit families only (onnx_models/zoo.py runtime_split)")
    if args.write:
        tw = module.tilewave_module(tilewave)  # the one GPU-file writer
        path = os.path.join(ROOT, "gpu_models", "h200.json")
        g = json.load(open(path))
        for key, params in sets.items():
            # norm_plane_ns is calibrate/validate/norm_planes.py's fit, not this one's: kept, with its provenance
            old = g["runtime_params"].get(key, {})
            fitted_on = {
                "command": "python3 -m calibrate.fit.harness_passes build/analyzer/tilewave%s --write" % (
                    " --runs " + args.runs if args.runs else ""),
                "commit": commit(),
                "data": data,
                "harness": "timm benchmark.py: fp32 weights under autocast(float16), batch %s" % "/".join(
                    str(b) for b in sorted({r["batch"] for r, _ in runs}))}
            if "norm_plane_ns" in old.get("params", {}):
                params = {**params, "norm_plane_ns": old["params"]["norm_plane_ns"]}
                fitted_on["norm_plane_ns"] = old["fitted_on"]["norm_plane_ns"]
            g["runtime_params"][key] = {"fitted_on": fitted_on, "params": params}
        tw.write_gpu(g, path)


def layer_key(layer):
    return json.dumps(layer, sort_keys=True)


def ramp_alone(tilewave, gpu_file, layers):
    """{layer_key: µs}: each layer's ramp term as tilewave.predict_layers (`tilewave layers`) costs it alone
    on `gpu_file` (the model's own term, docs/model.md "Memory time", rather than a copy of its formula here)."""
    unique = {layer_key(layer): layer for layer in layers}
    tw = module.tilewave_module(tilewave)
    try:
        costed = tw.predict_layers(list(unique.values()), gpu=gpu_file)
    except tw.InputError as e:
        raise RuntimeError("tilewave layers: %s" % e) from None
    return {key: c.get("ramp_us", 0.0) for key, c in zip(unique, costed)}


def paired_transforms(profiled, layers):
    """[(predicted layer, profiled us)]: cuDNN's layout transforms of one forward (its profile's [name, us]
    list) beside tilewave's (its analysis's layers). cuDNN also transforms some pointwise convolutions that
    the layout pass runs on NCHW (docs/model.md "Layout pass"); summed, their time would go to the predicted
    transforms' rate. So each direction's transforms pair one to one in launch order, and only where the
    profile has as many of that direction as tilewave predicts."""
    pairs = []
    for direction in ("to_nhwc", "to_nchw"):
        measured = [us for name, us in profiled if kernel_class(name, "layout_transform") == direction]
        predicted = [layer for layer in layers
                     if predicted_class(layer) == "transform" and layer["name"].endswith(direction)]
        if len(measured) == len(predicted):
            pairs += list(zip(predicted, measured))
    return pairs


def fit_sets(tilewave, runs, gpu_file, pmap=map, out=print, onnx=None):
    """{"eager nchw amp": params, "eager nhwc amp": params}, fitted as the module docstring says on `runs`,
    (timm-harness AMP row, its profiled forward) pairs, from `gpu_file`, a GPU file without layout and
    precision sets; `out` gets the printed report line by line, `pmap` maps the predictions."""
    p = gpu_params(tilewave, gpu_file, "eager")
    bw_bytes_per_us = p["dram_bandwidth_gbs"] * 1e3
    cells = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0, 0.0]))  # (layout, cls) -> batch -> n, var, measured
    def predicted(rk):
        try:
            return predict(tilewave, rk[0]["model"], rk[0]["layout"], rk[0]["batch"], "graph", gpu=gpu_file,
                           path=(onnx or {}).get(rk[0]["model"]))
        except InputError:
            return None
    preds = list(pmap(predicted, runs))
    left_out = sorted({r["model"] for (r, _), pred in zip(runs, preds) if pred is None})
    if left_out:  # left out and named, as the validations do
        out("left out (tilewave could not analyse them): " + ", ".join(left_out))
    runs, preds = [rk for rk, pred in zip(runs, preds) if pred], [pred for pred in preds if pred]
    ramp = ramp_alone(tilewave, gpu_file, [layer["layer"] for pred in preds for layer in pred["layers"]
                                           if "time_us" in layer and predicted_class(layer) in ("bn", "transform")])
    reduce_cells = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0]))  # n, rows, measured, variable
    transform_pairs = collections.defaultdict(list)  # layout -> [(batch, variable us, profiled us)], one per kernel
    for (r, k), pred in zip(runs, preds):
        layers = [layer for layer in pred["layers"] if "time_us" in layer]
        for name, us in k["list"]:
            if measured_class(name) != "transform":
                cells[(r["layout"], measured_class(name))][r["batch"]][2] += us
            if kernel_class(name, "pairing") == "reduction":
                reduce_cells[r["layout"]][r["batch"]][2] += us
        transform_pairs[r["layout"]] += [(r["batch"], layer["bytes"] / bw_bytes_per_us,
                                          us - ramp[layer_key(layer["layer"])])
                                         for layer, us in paired_transforms(k["list"], layers)]
        for layer in layers:
            problem = layer.get("layer", {})
            if problem.get("op") == "reduce":
                cell = reduce_cells[r["layout"]][r["batch"]]
                cell[0] += 1
                cell[1] += problem["outer"] if problem.get("kept_inside", 1) == 1 else 0
                cell[3] += layer["time_us"] - layer["fixed_us"] + p["fixed_us_memory"]
            cls = predicted_class(layer)
            if cls == "transform":
                continue
            cell = cells[(r["layout"], cls)][r["batch"]]
            cell[0] += 1
            if cls == "bn":
                cell[1] += layer["bytes"] / bw_bytes_per_us
                cell[2] -= ramp[layer_key(layer["layer"])]
            else:
                cell[1] += layer["time_us"] - layer["fixed_us"]
    for layout, pairs in transform_pairs.items():
        for batch, variable, profiled in pairs:
            cell = cells[(layout, "transform")][batch]
            cell[0] += 1
            cell[1] += variable
            cell[2] += profiled
    sets = {}
    for layout in ("nchw", "channels_last"):
        out_set = {}
        f, u = ls2([tuple(v) for v in cells[(layout, "bn")].values()])
        out_set["fixed_us_norm_extra"] = round(max(0.0, f - p["fixed_us_memory"]), 4)
        out_set["norm_bw_efficiency"] = out_set["norm_max_bw_efficiency"] = round(min(1.0, 1 / u), 4)
        if layout == "nchw":
            # No paired transform, or none whose bytes set a rate: the base set's terms.
            f, u = ls2([(1, v, m) for _, v, m in transform_pairs[layout]]) if transform_pairs[layout] else (0, 0)
            if u > 0:
                out_set["fixed_us_transform"] = round(max(0.0, f), 4)
                out_set["transform_bw_efficiency"] = round(min(1.0, 1 / u), 4)
            f, u = ls2([tuple(v) for v in cells[(layout, "depthwise")].values()])
            out_set["fixed_us_direct"] = round(max(0.0, f), 4)
            out_set["direct_conv_efficiency"] = round(p["direct_conv_efficiency"] / u, 5)
            out_set["direct_bw_efficiency"] = round(min(1.0, p["direct_bw_efficiency"] / u), 5)
        f, u = ls2([tuple(v) for v in reduce_cells[layout].values()])
        out_set["fixed_us_reduce_extra"] = round(max(0.0, f), 4)
        if any(n_rows for _, n_rows, _, _ in reduce_cells[layout].values()):  # else the base set's 0
            out_set["reduce_row_ns"] = round(max(0.0, u * 1e3), 4)
        key = "eager %s amp" % ("nchw" if layout == "nchw" else "nhwc")
        sets[key] = out_set
        out(key)
        for cls in ("bn", "transform", "depthwise"):
            for b, (n, v, m) in sorted(cells[(layout, cls)].items()):
                out("  %-9s b%-4d kernels %5d  profiled (less ramp) %9.1f us  variable %9.1f us" % (cls, b, n, m, v))
        for b, (n, n_rows, m, v) in sorted(reduce_cells[layout].items()):
            out("  %-9s b%-4d kernels %5d  profiled %9.1f us  variable %9.1f us  rows %d" % ("reduce", b, n, m, v, n_rows))
        out("  " + json.dumps(out_set, sort_keys=True))
    out(json.dumps(sets, sort_keys=True))
    return sets


if __name__ == "__main__":
    main()
