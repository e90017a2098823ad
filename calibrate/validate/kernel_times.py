#!/usr/bin/env python3
"""Prints the profiled device time of the kernels one forward launched
(runtime_bench's kernels.jsonl[.gz]) whose name contains a substring: for
looking up, say, how long a runtime's pooling kernel took in one network.

usage: python3 -m calibrate.validate.kernel_times KERNELS.jsonl.gz --model M --batch B [--runtime R] [--match S]
"""
import argparse
import sys

from calibrate import jsonl


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels")
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--runtime")
    ap.add_argument("--match", default="", help="substring of the kernel name")
    args = ap.parse_args()
    found = False
    try:
        rows = jsonl.read(args.kernels)
    except OSError as e:
        sys.exit(f"{args.kernels}: {e.strerror}")
    for r in rows:
        if r["model"] != args.model or r["batch"] != args.batch:
            continue
        if args.runtime and r["runtime"] != args.runtime:
            continue
        found = True
        for i, (name, us) in enumerate(r["list"]):
            if args.match in name:
                print(f"{r['runtime']:9s} #{i:<4d} {us:10.2f} us  {name[:100]}")
    if not found:
        sys.exit(f"{args.kernels}: no forward of {args.model} at batch {args.batch}")


if __name__ == "__main__":
    main()
