#!/usr/bin/env python3
"""Which library ran each convolution and GEMM in eager PyTorch: the profiled
library kernels of every measured forward, paired in launch order with
tilewave's conv/GEMM kernels where both list the same number, classed by
shape (1x1 stride-1 convs, other convs, depthwise, grouped, GEMMs) and by the
library whose kernel ran (cuBLAS `nvjet_*`, cuBLAS gemv, cuDNN). For 1x1
stride-1 convs it also prints, per library and batch, their GEMM M (N·H·W) and
tilewave's predicted / measured time (the in-process module, beside --tilewave).

usage: python3 -m calibrate.validate.library_choice --kernels K.jsonl.gz[,K2...] [--runtime eager]
"""
import argparse
import collections
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
from calibrate.jsonl import read_all
from calibrate.pair.bench_files import zoo_sets
from calibrate.pair.class_times import kernel_class
from calibrate import harness_flags, module



def library_of(name):
    if "gemv" in name:
        return "cuBLAS gemv"
    if "nvjet" in name or "cublas" in name.lower():
        return "cuBLAS"
    return "cuDNN"


def shape_class(layer):
    if layer["op"] != "conv":
        return "GEMM (M=1)" if layer["M"] == 1 else "GEMM"
    groups = layer.get("groups", 1)
    stride = layer.get("stride", [1, 1])[0]
    if groups > 1:
        return "depthwise" if groups == layer["C"] else "grouped"
    if layer["R"] == 1 and layer["S"] == 1:
        return "1x1 conv, stride %d" % stride
    return "kxk conv"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--runtime", default="eager")
    ap.add_argument("--tilewave", default=os.path.join(ROOT, "build", "analyzer", "tilewave"))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "onnx_models", "runtime"))
    args = ap.parse_args()
    zoo, _ = zoo_sets()
    latest = {}
    for k in read_all(args.kernels):
        latest[(k["model"], k["runtime"], k["batch"])] = k
    counts = collections.Counter()
    tw = module.tilewave_module(args.tilewave)
    one_by_one = collections.defaultdict(list)
    paired = total = 0
    for (model, runtime, batch), k in sorted(latest.items()):
        if runtime != args.runtime:
            continue
        total += 1
        try:
            j = tw.analyze(os.path.join(args.models_dir, zoo.file_stem(model) + ".onnx"), batch=batch, runtime=runtime,
                           **harness_flags.CUDA_GRAPH)
        except tw.InputError:
            continue
        pred = [l for l in j["layers"] if l.get("path") in ("tensor_gemm", "cuda_gemm", "direct_conv")]
        meas = [(n, t) for n, t in k["list"] if kernel_class(n) == "library"]
        if len(pred) != len(meas):
            continue
        paired += 1
        for layer, (name, us) in zip(pred, meas):
            shape, lib = shape_class(layer["layer"]), library_of(name)
            counts[(shape, lib, batch)] += 1
            if shape == "1x1 conv, stride 1":
                L = layer["layer"]
                one_by_one[(lib, batch)].append((L["N"] * L["H"] * L["W"], layer["time_us"] / us))
    print("%s: %d of %d forwards paired" % (args.runtime, paired, total))
    print("| shape | batch | cuDNN | cuBLAS | cuBLAS gemv |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for shape in sorted({s for s, _, _ in counts}):
        for b in sorted({b for _, _, b in counts}):
            row = [counts[(shape, lib, b)] for lib in ("cuDNN", "cuBLAS", "cuBLAS gemv")]
            if sum(row):
                print("| %s | %d | %d | %d | %d |" % (shape, b, *row))
    print()
    print("| 1x1 stride-1 convs on | batch | kernels | median M = N·H·W | M range | median predicted / measured |")
    print("| --- | ---: | ---: | ---: | --- | ---: |")
    for (lib, b), v in sorted(one_by_one.items()):
        ms = sorted(m for m, _ in v)
        print("| %s | %d | %d | %d | %d–%d | %.2f |" % (lib, b, len(v), statistics.median(ms), ms[0], ms[-1],
                                                       statistics.median(x for _, x in v)))


if __name__ == "__main__":
    main()
