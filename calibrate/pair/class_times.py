#!/usr/bin/env python3
"""Pairs a runtime's profiled kernels with tilewave's kernel classes: for each
(network, runtime, batch), the summed device time and count of the kernels
of each class, from runtime_bench's kernels.jsonl(.gz). The class names are
the ones `tilewave calibrate fit-runtime --class-times` fits each parameter
on (docs/calibration.md "Runtimes"): library (cuDNN/cuBLAS convolutions and
GEMMs), norm (PyTorch's BatchNorm pass), eltwise, copy, pool, reduce,
softmax, transform (cuDNN layout transforms), fused (inductor's Triton kernels).

usage: python3 -m calibrate.pair.class_times -o OUT.jsonl KERNELS.jsonl[.gz] ...
"""
import argparse
import collections
import json
import sys

from calibrate.pair.kernel_names import kernel_class as named_class  # (analyzer/data/kernel_names.json)
from calibrate import jsonl


def kernel_class(name):
    """The class-times class of a profiled kernel: analyzer/data/kernel_names.json's runtime_fit rules."""
    return named_class(name, "runtime_fit")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("kernels", nargs="+")
    args = ap.parse_args()
    n = 0
    with open(args.out, "w") as out:
        for path in args.kernels:
            for r in jsonl.read(path):
                us = collections.defaultdict(float)
                count = collections.Counter()
                for name, t in r["list"]:
                    c = kernel_class(name)
                    us[c] += t
                    count[c] += 1
                for c in sorted(us):
                    out.write(json.dumps({"model": r["model"], "runtime": r["runtime"], "batch": r["batch"],
                                          "class": c, "measured_us": round(us[c], 2), "kernels": count[c]}) + "\n")
                    n += 1
    print("%d class sums -> %s" % (n, args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
