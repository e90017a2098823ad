#!/usr/bin/env python3
"""Median predicted/measured time ratio of fp16 dense 3x3 and 1x1 convolutions
and GEMMs, by decade of FLOPs: shows whether the model's error depends on
problem size (docs/calibration.md).

usage: python3 -m calibrate.validate.residuals_by_size TILEWAVE MEASURED.jsonl GPU
"""
import collections
import math
import statistics
import subprocess
import sys

from calibrate import jsonl


GROUPS = (("conv 3x3", lambda r: r["op"] == "conv" and r["R"] == 3),
          ("conv 1x1", lambda r: r["op"] == "conv" and r["R"] == 1),
          ("gemm", lambda r: r["op"] == "gemm"))


def ratios_by_size(rows):
    """{group: {decade of FLOPs: [predicted/measured]}} of `tilewave layers`' output rows
    (fp16, timed, dense convolutions and GEMMs)."""
    rows = [r for r in rows if r.get("status") == "ok" and r.get("dtype", "fp16") == "fp16"
            and r["op"] in ("conv", "gemm") and r.get("groups", 1) == 1]
    out = {}
    for label, keep in GROUPS:
        by_decade = collections.defaultdict(list)
        for r in rows:
            if keep(r):
                by_decade[round(math.log10(r["flops"]))].append(r["pred_us"] / r["measured_us"])
        out[label] = dict(sorted(by_decade.items()))
    return out


def main():
    tilewave, measured, gpu = sys.argv[1:4]
    out = subprocess.run([tilewave, "layers", measured, "--gpu", gpu], check=True, capture_output=True,
                         text=True).stdout
    for label, by_decade in ratios_by_size(jsonl.parse(out, "tilewave layers")).items():
        cells = [f"1e{d}: {statistics.median(v):.2f} (n={len(v)})" for d, v in by_decade.items()]
        print(f"{label:9s} " + "  ".join(cells))


if __name__ == "__main__":
    main()
