#!/usr/bin/env python3
"""`tilewave check` over many profiled forwards at once: for each kernel kind
(the predicted kernel's: compute, norm, elementwise, pool, reduce, copy) and
batch, the paired kernels' summed predicted and measured time and the median
of predicted / measured per kernel (calibrate/pair/kernel_pairs.py pairs them);
then, per batch, how much longer the graph-replayed forward took than the
profiled forward's kernels, per kernel (what `launch_gap_us` stands for).

usage: python3 -m calibrate.validate.kernel_kinds BENCH.jsonl --kernels K.jsonl.gz[,...]
       [--runtime eager] [--tilewave build/analyzer/tilewave] [--gpu h200]
BENCH.jsonl: runtime_bench.py's bench.jsonl (or select_runs.py's output); its
runs of --runtime whose kernel list the kernels files hold are checked.
"""
import argparse
import os
import statistics
from concurrent.futures import ThreadPoolExecutor

from calibrate.pair import kernel_pairs


def paired(bench, kernels, runtime="eager", tilewave="build/analyzer/tilewave", gpu="h200"):
    """(runs, kernel pairs, kernel lists, skipped) of BENCH's runs of the runtime whose kernel list
    the kernels files (comma-separated) hold; each run checked by calibrate/pair/kernel_pairs.py."""
    runs = [r for r in kernel_pairs.read_runs(bench)
            if r.get("runtime") == runtime and r.get("status", "ok") == "ok" and "model" in r]
    lists = kernel_pairs.kernel_lists(kernels.split(","))
    skips = [[] for _ in runs]
    check = lambda i: list(kernel_pairs.pairs([runs[i]], lists, tilewave, gpu, skipped=skips[i], with_bytes=False))
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        per_run = list(ex.map(check, range(len(runs))))
    return runs, [p for rows in per_run for p in rows], lists, [s for skip in skips for s in skip]


def kind_sums(rows):
    """{(kind, batch): (pairs, summed predicted us, summed measured us, median predicted / measured)},
    the kinds in order of their measured time."""
    out = {}
    kinds = sorted({r["kind"] for r in rows}, key=lambda k: -sum(r["measured_us"] for r in rows if r["kind"] == k))
    for kind in kinds:
        for b in sorted({r["batch"] for r in rows}):
            v = [r for r in rows if r["kind"] == kind and r["batch"] == b and r["measured_us"] > 0]
            if v:
                out[(kind, b)] = (len(v), sum(r["predicted_us"] for r in v), sum(r["measured_us"] for r in v),
                                  statistics.median(r["predicted_us"] / r["measured_us"] for r in v))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench")
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--runtime", default="eager")
    ap.add_argument("--tilewave", default="build/analyzer/tilewave")
    ap.add_argument("--gpu", default="h200")
    a = ap.parse_args()
    runs, rows, lists, skipped = paired(a.bench, a.kernels, a.runtime, a.tilewave, a.gpu)
    print(f"{len(runs) - len(skipped)} of {len(runs)} {a.runtime} runs checked, {len(rows)} kernel pairs")
    print("kind         batch  pairs   pred_us    meas_us   sum error  median pred/meas")
    for (kind, b), (n, pred, meas, ratio) in kind_sums(rows).items():
        print(f"{kind:12s} {b:5d} {n:6d} {pred:9.0f} {meas:10.0f} {pred / meas - 1:+10.1%} {ratio:17.2f}")
    # What the launch gap stands for: graph-replay latency beyond the
    # profiled (unreplayed) forward's kernel time, per kernel.
    for b in sorted({r["batch"] for r in runs}):
        gaps = []
        for r in runs:
            kernels = lists.get((r["model"], r["runtime"], r["batch"]))
            if r["batch"] == b and kernels and "latency_ms" in r:
                gaps.append((r["latency_ms"] * 1e3 - sum(us for _, us in kernels)) / len(kernels))
        if gaps:
            print(f"batch {b}: latency minus profiled kernel time, per kernel: median {statistics.median(gaps):.2f} us "
                  f"over {len(gaps)} networks")


if __name__ == "__main__":
    main()
