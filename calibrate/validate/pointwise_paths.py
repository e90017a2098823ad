#!/usr/bin/env python3
"""Which path cuDNN took for each pointwise convolution of a
calibrate/measure/pointwise_paths.py sweep, and what tilewave predicts for it
(docs/model.md "Pointwise convolutions on NCHW").

Printed: a grid per layout, batch and map side, C down and K across (64 to
2048), `T` where the call ran through layout transforms (nchwToNhwc /
nhwcToNchw) and `.` where it did not; the share of NCHW cases that
transformed; per map side, the direct NCHW GEMMs' kernels and their time
against the same shape's channels_last kernel; then tilewave's path and time
for every NCHW case (the module's analyze_layers of the one convolution on
`--gpu`, under timm's harness in a CUDA graph): how often its path is
cuDNN's, and its time (convolution and transforms; the input's cast left
out) against the measured call's. Where the sweep has `nchw_matmul` rows
(the direct path alone, timed for every shape), per side: that GEMM's time
against cuDNN's call, where cuDNN ran directly and where it transformed, and
tilewave's direct cost (its eager set) against it.

usage: python3 -m calibrate.validate.pointwise_paths calibrate/data/h100/pointwise_paths [--gpu h100]
         [--tilewave build/analyzer/tilewave]
"""
import argparse
import collections
import os
import statistics
import tempfile

from calibrate import jsonl
from calibrate.cli import InputError, add_tilewave_option, print_lines
from calibrate.fit.sweep_fit import gpu_file
from calibrate.module import tilewave_module
from calibrate.pair.kernel_names import kernel_class
from calibrate.validate.row_sweep import eager_gpu

FIELDS = ("layout", "batch", "side", "C", "K", "kernels")
LAYOUTS = ("nchw", "channels_last", "nchw_matmul")
MAX_SIZE = 1 << 20  # a batch, side or channel count beyond any sweep's


def read_rows(folder):
    path = jsonl.in_folder(folder, "pointwise_paths.jsonl")
    try:
        rows = jsonl.read(path)
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as e:
        raise InputError("%s: not a readable JSON-lines file (%s)" % (path, e))
    out = []
    for i, r in enumerate(rows, 1):
        if isinstance(r, dict) and r.get("header"):
            continue
        if not (isinstance(r, dict) and all(f in r for f in FIELDS) and r["layout"] in LAYOUTS
                and all(type(r[f]) is int and 0 < r[f] <= MAX_SIZE for f in ("batch", "side", "C", "K"))
                and isinstance(r["kernels"], list)
                and all(isinstance(k, list) and len(k) == 2 and isinstance(k[0], str)
                        and isinstance(k[1], (int, float)) and not isinstance(k[1], bool)
                        and 0 <= k[1] < 1e9 for k in r["kernels"])):
            raise InputError("%s: row %d is not a pointwise_paths row (%s; layout one of %s; sizes 1 to %d; "
                             "kernel times finite, 0 to 1e9 us)" % (path, i, ", ".join(FIELDS), ", ".join(LAYOUTS),
                                                                    MAX_SIZE))
        if r.get("error"):
            continue
        if not sum(us for _, us in call_kernels(r["kernels"])) > 0:
            raise InputError("%s: row %d ran but its call took no time" % (path, i))
        out.append(r)
    if not out:
        raise InputError("%s: no case that ran" % path)
    return out


def transformed(kernels):
    """cuDNN ran the call through layout transforms."""
    return any(kernel_class(name, "layout_transform") != "other" for name, _ in kernels)


def call_kernels(kernels):
    """The call's kernels less the input's fp32 -> fp16 cast and memsets, which a network's convolution has not."""
    return [(name, us) for name, us in kernels if "copy_kernel" not in name and "Memset" not in name]


def family(name):
    """A GEMM kernel's family, for the table: Hopper's nvjet, CUTLASS by its architecture and alignment, else cuDNN."""
    if name.startswith("nvjet_sm90"):
        return "nvjet sm90"
    for arch in ("cutlass_75", "cutlass_80"):
        if arch in name:
            align = name[name.find("_align") + 1:].split(">")[0].split("(")[0] if "_align" in name else ""
            return "CUTLASS sm%s %s" % (arch[-2:], align)
    return "cuDNN " + name.split("_")[0]


def direct_lines(rows):
    """Per map side: the direct NCHW cases' GEMM kernel families and their time against channels_last's."""
    nhwc = {(r["batch"], r["side"], r["C"], r["K"]): sum(us for _, us in call_kernels(r["kernels"]))
            for r in rows if r["layout"] == "channels_last"}
    by_side = collections.defaultdict(lambda: (collections.Counter(), []))
    for r in rows:
        if r["layout"] != "nchw" or transformed(r["kernels"]):
            continue
        kernels = call_kernels(r["kernels"])
        families, ratios = by_side[r["side"]]
        families.update(family(name) for name, _ in kernels)
        key = (r["batch"], r["side"], r["C"], r["K"])
        if nhwc.get(key):
            ratios.append(sum(us for _, us in kernels) / nhwc[key])
    out = ["", "| side | direct NCHW cases | their GEMM kernels | time / channels_last's (median) |",
           "| ---: | ---: | --- | ---: |"]
    for side, (families, ratios) in sorted(by_side.items()):
        out.append("| %d | %d | %s | %s |" % (side, sum(families.values()), ", ".join(
            "%s %d" % kv for kv in families.most_common(3)), "%.2f" % statistics.median(ratios) if ratios else "-"))
    return out


def direct_layer(r):
    """A case's convolution as tilewave's layer form, on NCHW: its direct path, one GEMM per image."""
    return {"op": "conv", "dtype": "fp16", "N": r["batch"], "C": r["C"], "H": r["side"], "W": r["side"],
            "K": r["K"], "R": 1, "S": 1, "nchw": True}


def predicted(tw, r, gpu):
    """(tilewave transforms it, its convolution's and transforms' µs) for an NCHW case on `gpu`."""
    try:
        a = tw.analyze_layers([{"op": "conv", "out": r["K"], "kernel": 1, "bn": False, "bias": False}],
                              input=[r["C"], r["side"], r["side"]], batch=r["batch"], gpu=gpu, layout="nchw",
                              graph=True)
    except tw.InputError as e:
        raise InputError("%s: %s" % (r.get("case", "a case"), e)) from None
    kernels = [k for k in a["layers"] if k["op"] != "cast"]
    return any(k["op"] == "layout_transform" for k in kernels), sum(k["time_us"] for k in kernels)


def tilewave_lines(rows, tw, gpu):
    """Per map side: how many NCHW cases tilewave runs on cuDNN's path, and its time against the call's."""
    cells = collections.defaultdict(lambda: [0, 0, [], []])  # side: agree, cases, ratios (direct), (transformed)
    for r in rows:
        if r["layout"] != "nchw":
            continue
        moved, us = predicted(tw, r, gpu)
        measured = transformed(r["kernels"])
        cell = cells[r["side"]]
        cell[0] += moved == measured
        cell[1] += 1
        cell[3 if measured else 2].append(us / sum(t for _, t in call_kernels(r["kernels"])))
    out = ["", "tilewave on %s, NCHW (its path against cuDNN's; predicted / measured, convolution and transforms):"
           % gpu, "", "| side | cases | same path | cuDNN direct: n | ratio (median) | cuDNN transformed: n | ratio |",
           "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    agree = total = 0
    for side, (same, n, direct, moved) in sorted(cells.items()):
        agree, total = agree + same, total + n
        out.append("| %d | %d | %d | %d | %s | %d | %s |" % (side, n, same, len(direct), "%.2f" % statistics.median(
            direct) if direct else "-", len(moved), "%.2f" % statistics.median(moved) if moved else "-"))
    out.append("tilewave takes cuDNN's path in %d of %d NCHW cases" % (agree, total))
    return out


def matmul_lines(rows, tw, gpu):
    """Per map side: the direct path alone (nchw_matmul) against cuDNN's call, and tilewave's direct cost against
    it, split by the path cuDNN took."""
    calls = {(r["layout"], r["batch"], r["side"], r["C"], r["K"]): r for r in rows}
    cells = collections.defaultdict(lambda: ([], [], []))  # (side, cuDNN transformed): matmul / call, layers, matmul us
    for (layout, batch, side, c, k), r in calls.items():
        conv = calls.get(("nchw", batch, side, c, k))
        if layout != "nchw_matmul" or not conv:
            continue
        matmul_us = sum(us for _, us in call_kernels(r["kernels"]))
        cell = cells[(side, transformed(conv["kernels"]))]
        cell[0].append(matmul_us / sum(us for _, us in call_kernels(conv["kernels"])))
        cell[1].append(direct_layer(conv))
        cell[2].append(matmul_us)
    if not cells:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        eager = eager_gpu(gpu_file(gpu), os.path.join(tmp, "eager.json"), tw)
        out = ["", "the direct path alone (nchw_matmul: one GEMM per image, cuBLAS) against cuDNN's call, and "
               "tilewave's direct cost (%s's eager set) against it:" % gpu, "",
               "| side | cuDNN's path | cases | GEMM / cuDNN's call (median) | tilewave / GEMM: median | p10 | p90 |",
               "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
        for (side, moved), (ratios, layers, matmul_us) in sorted(cells.items()):
            q = sorted(p["time_us"] / m for p, m in zip(tw.predict_layers(layers, gpu=eager), matmul_us))
            out.append("| %d | %s | %d | %.2f | %.2f | %.2f | %.2f |" % (
                side, "transformed" if moved else "direct", len(ratios), statistics.median(ratios),
                statistics.median(q), q[len(q) // 10], q[9 * len(q) // 10]))
    return out


def lines_of(folder, tw=None, gpu="h100"):
    rows = read_rows(folder)
    grid = collections.defaultdict(dict)
    channels = sorted({r["C"] for r in rows} | {r["K"] for r in rows})
    transform_us = collections.Counter()
    for r in rows:
        if r["layout"] == "nchw_matmul":  # a GEMM alone, no path to choose: its own table below
            continue
        moved = [us for name, us in r["kernels"] if kernel_class(name, "layout_transform") != "other"]
        grid[(r["layout"], r["batch"], r["side"])][(r["C"], r["K"])] = "T" if moved else "."
        if r["layout"] == "nchw":
            transform_us["cases"] += 1
            transform_us["moved"] += bool(moved)
            transform_us["moved_us"] += sum(moved)
            transform_us["call_us"] += sum(us for _, us in r["kernels"]) if moved else 0
    out = ["T: the call ran through layout transforms; rows C = %s, each row's K the same from left to right" % (
        ", ".join(map(str, channels))), ""]
    for (layout, batch, side), cells in sorted(grid.items()):
        out.append("%-13s b%-4d %3dx%-3d %s" % (layout, batch, side, side, " ".join(
            "".join(cells.get((c, k), "?") for k in channels) for c in channels)))
    if transform_us["cases"]:
        out.append("NCHW: %d of %d cases transformed; their transforms took %.0f%% of those calls' kernel time" % (
            transform_us["moved"], transform_us["cases"],
            100 * transform_us["moved_us"] / transform_us["call_us"] if transform_us["call_us"] else 0))
    out += direct_lines(rows)
    if tw is not None:
        out += tilewave_lines(rows, tw, gpu) + matmul_lines(rows, tw, gpu)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="a calibrate/measure/pointwise_paths.py output folder")
    ap.add_argument("--gpu", default="h100", help="the GPU file tilewave predicts on (the sweep's GPU)")
    add_tilewave_option(ap)
    a = ap.parse_args()
    return print_lines(os.path.basename(__file__), lambda: lines_of(a.folder, tilewave_module(a.tilewave), a.gpu))


if __name__ == "__main__":
    raise SystemExit(main())
