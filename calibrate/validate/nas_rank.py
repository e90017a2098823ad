#!/usr/bin/env python3
"""How well tilewave ranks search-space candidates (issue 10; docs/nas.md
"Validation on the H200"): per space, runtime and batch, Kendall's tau of
predicted against measured latency, beside FLOPs' tau, and the median
latency error. Predictions were written (and committed) before the
measurement: calibrate/data/h200/nas/pred_<space>_<runtime>_b<batch>.jsonl,
by `tilewave nas onnx_models/spaces/<space>.json --samples 150 --seed 1
--batch B --runtime R --format jsonl`. Also checks that each PyTorch network
has the parameter count tilewave gives its candidate (the same network), and
says what `--min-utilization` would do: with the threshold at the 25th and
50th percentile of the cell's predicted utilization, how many candidates it
drops and what share of the measured latency-vs-FLOPs Pareto front it keeps.

Measurements: bench.jsonl (runs 1-3) and completion/'s files (BENCH_FILES; session 6);
a configuration measured twice keeps its first measurement.

With --tilewave, the candidates are predicted again by that binary with the
GPU files as they are now (the same command, into a temporary folder), to
judge a later model on the same measurements.

usage: python3 -m calibrate.validate.nas_rank [--data calibrate/data/h200/nas] [--tilewave build/analyzer/tilewave]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from calibrate.stats import kendall_tau

from calibrate import harness_flags
from calibrate import jsonl

BENCH_FILES = ["bench.jsonl", "completion/eager_fill/bench.jsonl", "completion/ind_first50_from_log.jsonl",
               "completion/ind_51_100/bench.jsonl", "completion/ind_101_150/bench.jsonl",
               "completion/ind_gaps_b1_16_128/bench.jsonl", "completion/ind_gaps_b1_128/bench.jsonl",
               "completion/ind_gaps_b128/bench.jsonl", "completion/ind_gaps_b16_128/bench.jsonl"]


def predicted_us(row):
    """A nas row's predicted time: time_us, or latency_us in rows from before that name."""
    return row["time_us"] if "time_us" in row else row["latency_us"]


def pareto(points):
    """Indices of (latency, flops) points no other point beats: as fast or faster with as many FLOPs or more."""
    return {i for i, (t, f) in enumerate(points)
            if not any((t2 <= t and f2 >= f) and (t2 < t or f2 > f) for t2, f2 in points)}


def min_utilization_effect(rows, measured, quantile):
    """(threshold, dropped, share of the measured front kept) for a threshold at this quantile of predicted utilization."""
    utils = sorted(r["utilization"] for r in rows)
    threshold = utils[int(quantile * (len(utils) - 1))]
    front = pareto([(m, r["flops"]) for r, m in zip(rows, measured)])
    kept = {i for i, r in enumerate(rows) if r["utilization"] >= threshold}
    return threshold, len(rows) - len(kept), len(front & kept) / len(front)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="calibrate/data/h200/nas")
    ap.add_argument("--tilewave", help="predict again with this binary instead of reading the committed predictions")
    args = ap.parse_args()
    pred_dir = args.data
    tmp = tempfile.TemporaryDirectory() if args.tilewave else None
    if tmp:
        pred_dir = tmp.name
        for space in ("mobilenetv2", "regnet", "resnet"):
            for runtime in ("eager", "inductor"):
                for batch in (1, 16, 128):
                    with open(os.path.join(pred_dir, "pred_%s_%s_b%d.jsonl" % (space, runtime, batch)), "w") as f:
                        subprocess.run([args.tilewave, "nas", "onnx_models/spaces/%s.json" % space, "--samples", "150",
                                        "--seed", "1", "--batch", str(batch), "--runtime", runtime, "--format", "jsonl", *harness_flags.flags(harness_flags.CUDA_GRAPH)],
                                       stdout=f, stderr=subprocess.DEVNULL, check=True)
    header = json.loads(open(os.path.join(args.data, "bench.jsonl")).readline())
    measured = {}
    params = {}
    for name in BENCH_FILES:
        path = os.path.join(args.data, name)
        if not os.path.exists(path):
            print("(missing: %s)" % path)
            continue
        for r in jsonl.read(path):
            if r.get("status") != "ok" or not r["model"].startswith("space/"):
                continue
            _, space, enc = r["model"].split("/", 2)
            measured.setdefault((space, r["runtime"], r["batch"], enc), r["latency_ms"] * 1e3)
            if "params" in r:
                params.setdefault((space, enc), r["params"])
    print("measured on %s, torch %s, %s; predictions %s" % (
        header.get("gpu"), header.get("torch"), header.get("date"),
        "made now by " + args.tilewave if args.tilewave else "as committed before the measurement"))
    print("%-12s %-9s %5s %4s %9s %9s %11s %10s  %s" % ("space", "runtime", "batch", "n", "tau pred", "tau FLOPs",
                                                          "median err", "params ok",
                                                          "min-util at p25 / p50: dropped, front kept"))
    for space in ("mobilenetv2", "regnet", "resnet"):
        for runtime in ("eager", "inductor"):
            for batch in (1, 16, 128):
                path = os.path.join(pred_dir, "pred_%s_%s_b%d.jsonl" % (space, runtime, batch))
                rows = jsonl.read(path)[1:]
                pairs = [(r, measured[(space, runtime, batch, r["encoding"])]) for r in rows
                         if (space, runtime, batch, r["encoding"]) in measured]
                if len(pairs) < 3:
                    print("%-12s %-9s %5d %4d   (not measured)" % (space, runtime, batch, len(pairs)))
                    continue
                meas = [m for _, m in pairs]
                tau = kendall_tau([predicted_us(r) for r, _ in pairs], meas)
                tau_flops = kendall_tau([r["flops"] for r, _ in pairs], meas)
                err = statistics.median(abs(predicted_us(r) / m - 1) for r, m in pairs)
                checked = [(r, _) for r, _ in pairs if (space, r["encoding"]) in params]
                same = sum(params[(space, r["encoding"])] == r["params"] for r, _ in checked)
                drops = [min_utilization_effect([r for r, _ in pairs], meas, q) for q in (0.25, 0.5)]
                print("%-12s %-9s %5d %4d %9.3f %9.3f %10.1f%% %6d/%-3d  %s" % (
                    space, runtime, batch, len(pairs), tau, tau_flops, 100 * err, same, len(checked),
                    " / ".join("U>=%.4f: %d, %.0f%%" % (u, d, 100 * k) for u, d, k in drops)))


if __name__ == "__main__":
    main()
