#!/usr/bin/env python3
"""How often cuDNN ran its direct convolution kernel (convolve_common_engine)
in the eager runs of runtime validation (docs/report.md "`tilewave check`"):
per run and batch, the (network, batch) profiles that contain it.

usage: python3 -m calibrate.validate.direct_conv_share [calibrate/data/h200/runtimes]
"""
import collections
import pathlib
import sys

from calibrate import jsonl


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "calibrate/data/h200/runtimes")
    runs = sorted(root.glob("run*/kernels.jsonl.gz"))
    if not runs:
        sys.exit(f"{root}: no run*/kernels.jsonl.gz")
    print("run   batch  eager profiles  with the direct kernel")
    for path in runs:
        seen, direct = collections.Counter(), collections.Counter()
        for r in jsonl.read(path):
            if r["runtime"] != "eager":
                continue
            seen[r["batch"]] += 1
            direct[r["batch"]] += any("convolve_common_engine" in name for name, _ in r["list"])
        for b in sorted(seen):
            print(f"{path.parent.name:5} {b:5}  {seen[b]:14}  {direct[b]:22}")


if __name__ == "__main__":
    main()
