#!/usr/bin/env python3
"""End-to-end time of a tilewave process, from start to output written:
ResNet-152 at batch 128 to JSON, a tiny CNN, and `tilewave gpus`. Prints
the minimum and median over repetitions (docs/performance.md "Start-up").
Stdlib only.

usage: tests/bench/startup.py [build/analyzer/tilewave] [--repeat 30]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tilewave", nargs="?", default=os.path.join(ROOT, "build", "analyzer", "tilewave"))
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    out = os.path.join(tempfile.mkdtemp(), "out.json")
    cases = [
        ("analyze resnet152.onnx, batch 128, JSON to a file",
         ["analyze", "onnx_models/resnet152.onnx", "--gpu", "h200", "--batch", "128", "--format", "json", "-o", out]),
        ("analyze tests/data/tiny_cnn.onnx, table", ["analyze", "tests/data/tiny_cnn.onnx", "--gpu", "h200", "--batch", "1"]),
        ("gpus (all GPU files)", ["gpus"]),
        ("--version (process start-up alone)", ["--version"]),
    ]
    print(f"{'command':<52} {'min ms':>8} {'median ms':>10}")
    for name, argv in cases:
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            subprocess.run([args.tilewave] + argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            times.append((time.perf_counter() - t) * 1e3)
        print(f"{name:<52} {min(times):>8.1f} {statistics.median(times):>10.1f}")


if __name__ == "__main__":
    main()
