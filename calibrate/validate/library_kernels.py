#!/usr/bin/env python3
"""Convolutions and GEMMs as a runtime runs them: each library kernel's
profiled device time (runtime_bench's kernels.jsonl) against tilewave's
prediction for the same kernel inside the same network.

Kernels are paired in launch order within a network, only where the
profile and tilewave list the same number of library kernels (cuDNN/cuBLAS
calls), so that the i-th of one is the i-th of the other. Reports the median
and p90 error per runtime, network set and batch. Stdlib only.

usage: python3 -m calibrate.validate.library_kernels --kernels K.jsonl.gz[,K2...] [--set heldout] [--md OUT.md]
"""
import argparse
import os
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
from calibrate.jsonl import read_all
from calibrate.pair.bench_files import zoo_sets
from calibrate.validate.runtimes import quantile
from calibrate.pair.class_times import kernel_class
from calibrate import harness_flags, module



def predicted_library(tw, onnx, runtime, batch, gpu):
    """(name, op, time) of the library kernels tilewave predicts under the CUDA-graph harness, in process
    (the module beside the CLI `tw`); None for a network it refuses."""
    module_ = module.tilewave_module(tw)
    try:
        j = module_.analyze(onnx, gpu=gpu, batch=batch, runtime=runtime, **harness_flags.CUDA_GRAPH)
    except module_.InputError:
        return None
    out = []
    for layer in j["layers"]:
        if layer.get("path") in ("tensor_gemm", "cuda_gemm", "direct_conv"):
            out.append((layer["name"], layer["op"], layer["time_us"]))
    return out


def paired_errors(tw, kernels, which="heldout", models_dir=os.path.join(ROOT, "onnx_models", "runtime"), gpu="h200",
                  runtimes=None):
    """({(runtime, batch): [predicted / measured - 1 per paired kernel]}, {(runtime, batch): [networks paired,
    networks]}) of the kernels files' forwards of one network set (all runtimes, or those named)."""
    zoo, sets = zoo_sets()
    latest = {}
    for k in read_all(kernels):
        latest[(k["model"], k["runtime"], k["batch"])] = k
    jobs = []
    for (model, runtime, batch), k in sorted(latest.items()):
        onnx = os.path.join(models_dir, zoo.file_stem(model) + ".onnx")
        if (which == "all" or model in sets[which]) and (runtimes is None or runtime in runtimes) and os.path.exists(onnx):
            jobs.append((runtime, batch, k, onnx))
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        preds = list(ex.map(lambda j: predicted_library(tw, j[3], j[0], j[1], gpu), jobs))
    errors, paired_nets = {}, {}
    for (runtime, batch, k, _), pred in zip(jobs, preds):
        if pred is None:
            continue
        meas = [t for name, t in k["list"] if kernel_class(name) == "library"]
        key = (runtime, batch)
        paired_nets.setdefault(key, [0, 0])[1] += 1
        if len(meas) != len(pred):
            continue
        paired_nets[key][0] += 1
        for (name, op, p_us), m_us in zip(pred, meas):
            # A kernel's time_us is its device time (the schedule adds the launch gap), as the profiler's.
            errors.setdefault(key, []).append(p_us / m_us - 1)
    return errors, paired_nets


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--set", default="heldout", choices=["fit", "heldout", "fresh", "all"])
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "onnx_models", "runtime"))
    ap.add_argument("--tilewave", default=os.path.join(ROOT, "build", "analyzer", "tilewave"))
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--md")
    args = ap.parse_args()
    errors, paired_nets = paired_errors(args.tilewave, args.kernels, args.set, args.models_dir, args.gpu)
    lines = ["| runtime | batch | networks paired | kernels | median error | p90 error | median signed |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for (runtime, batch) in sorted(paired_nets):
        e = errors.get((runtime, batch), [])
        paired, total = paired_nets[(runtime, batch)]
        if not e:
            lines.append("| %s | %d | %d of %d | 0 | - | - | - |" % (runtime, batch, paired, total))
            continue
        ape = [abs(x) for x in e]
        lines.append("| %s | %d | %d of %d | %d | %.1f%% | %.1f%% | %+.1f%% |" % (
            runtime, batch, paired, total, len(e), 100 * quantile(ape, 0.5), 100 * quantile(ape, 0.9),
            100 * quantile(e, 0.5)))
    allx = [abs(x) for v in errors.values() for x in v]
    lines.append("")
    lines.append("all: %d kernels, median error %.1f%%, p90 %.1f%% (set: %s)" % (
        len(allx), 100 * quantile(allx, 0.5), 100 * quantile(allx, 0.9), args.set))
    print("\n".join(lines))
    if args.md:
        with open(args.md, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
