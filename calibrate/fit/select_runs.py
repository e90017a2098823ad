#!/usr/bin/env python3
"""Writes the runs of one network set (fit, heldout or fresh: onnx_models/zoo.py
runtime_split and RUNTIME_FRESH) from runtime_bench outputs into one file,
so that a fit reads only networks it may see.

usage: python3 -m calibrate.fit.select_runs --set fit -o OUT.jsonl [--kernels K.jsonl.gz,...] BENCH.jsonl [BENCH2.jsonl ...]
Later files win where two measured the same (network, runtime, batch).
--kernels adds each run's profiled kernel count ("kernels"), which the fit
uses to leave out runs whose kernels the lowering does not match.
"""
import argparse
import json
import sys

from calibrate.jsonl import read_all
from calibrate.pair.bench_files import zoo_sets
from calibrate import jsonl


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", required=True, choices=["fit", "heldout", "fresh"])
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--kernels", default="")
    ap.add_argument("bench", nargs="+")
    args = ap.parse_args()
    _, sets = zoo_sets()
    rows = {}
    for path in args.bench:
        for r in jsonl.read(path):
            if r.get("header") or r.get("status") != "ok" or r["model"] not in sets[args.set]:
                continue
            rows[(r["model"], r["runtime"], r["batch"])] = r
    if args.kernels:
        for k in read_all(args.kernels):
            key = (k["model"], k["runtime"], k["batch"])
            if key in rows:
                rows[key]["kernels"] = k["kernels"]
    with open(args.out, "w") as f:
        for key in sorted(rows):
            f.write(json.dumps(rows[key]) + "\n")
    print("%d runs of the %s set -> %s" % (len(rows), args.set, args.out), file=sys.stderr)


if __name__ == "__main__":
    main()
