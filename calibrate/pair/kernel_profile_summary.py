#!/usr/bin/env python3
"""Where a network's GPU time goes, by kernel family, from profile_kernels.py output.

usage: python3 -m calibrate.pair.kernel_profile_summary KERNELS.jsonl MODEL BATCH [--top 8]
"""
import gzip
import argparse
import json
import re


def family(name):
    # Strip template arguments and parameter lists; keep the kernel's own name.
    base = re.sub(r"<.*", "", name.replace("(anonymous namespace)::", "")).replace("void ", "")
    return re.sub(r"\(.*", "", base).split("::")[-1][:48]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels")
    ap.add_argument("model")
    ap.add_argument("batch", type=int)
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    for line in (gzip.open if args.kernels.endswith(".gz") else open)(args.kernels, "rt"):
        rec = json.loads(line)
        if rec["model"] != args.model or rec["batch"] != args.batch:
            continue
        total = rec["kernel_sum_us"]
        groups = {}
        for name, us in rec["list"]:
            g = groups.setdefault(family(name), [0, 0.0])
            g[0] += 1
            g[1] += us
        print(f"{args.model} batch {args.batch}: {rec['kernels']} kernels, {total:.1f} us of kernel time")
        for fam, (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print(f"  {n:4d} x {fam:50s} {us:9.1f} us  {100 * us / total:5.1f}%")


if __name__ == "__main__":
    main()
