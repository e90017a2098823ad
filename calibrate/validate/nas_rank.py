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
import sys
import json
import os
import statistics
import subprocess
import tempfile

from calibrate.cli import print_lines
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


SPACES, RUNTIMES, BATCHES = ("mobilenetv2", "regnet", "resnet"), ("eager", "inductor"), (1, 16, 128)
HEADER = "%-12s %-9s %5s %4s %9s %9s %11s %10s  %s" % ("space", "runtime", "batch", "n", "tau pred", "tau FLOPs",
                                                       "median err", "params ok",
                                                       "min-util at p25 / p50: dropped, front kept")


def predict_again(tilewave, pred_dir):
    """The committed predictions' command, run by TILEWAVE into PRED_DIR."""
    for space in SPACES:
        for runtime in RUNTIMES:
            for batch in BATCHES:
                with open(os.path.join(pred_dir, "pred_%s_%s_b%d.jsonl" % (space, runtime, batch)), "w") as f:
                    subprocess.run([tilewave, "nas", "onnx_models/spaces/%s.json" % space, "--samples", "150",
                                    "--seed", "1", "--batch", str(batch), "--runtime", runtime, "--format", "jsonl",
                                    *harness_flags.flags(harness_flags.CUDA_GRAPH)],
                                   stdout=f, stderr=subprocess.DEVNULL, check=True)


def measurements(data):
    """The bench header, {(space, runtime, batch, encoding): latency µs} and {(space, encoding): params}."""
    header = json.loads(open(os.path.join(data, "bench.jsonl")).readline())
    measured, params, missing = {}, {}, []
    for name in BENCH_FILES:
        path = os.path.join(data, name)
        if not os.path.exists(path):
            missing.append(path)
            continue
        for r in jsonl.read(path):
            if r.get("status") != "ok" or not r["model"].startswith("space/"):
                continue
            _, space, enc = r["model"].split("/", 2)
            measured.setdefault((space, r["runtime"], r["batch"], enc), r["latency_ms"] * 1e3)
            if "params" in r:
                params.setdefault((space, enc), r["params"])
    return header, measured, params, missing


def cells(data="calibrate/data/h200/nas", tilewave=None):
    """The header line and one dict per space, runtime and batch: n, taus, median error, params, min-util."""
    header, measured, params, missing = measurements(data)
    with tempfile.TemporaryDirectory() as tmp:
        pred_dir = data
        if tilewave:
            pred_dir = tmp
            predict_again(tilewave, tmp)
        out = []
        for space in SPACES:
            for runtime in RUNTIMES:
                for batch in BATCHES:
                    rows = jsonl.read(os.path.join(pred_dir, "pred_%s_%s_b%d.jsonl" % (space, runtime, batch)))[1:]
                    pairs = [(r, measured[(space, runtime, batch, r["encoding"])]) for r in rows
                             if (space, runtime, batch, r["encoding"]) in measured]
                    cell = {"space": space, "runtime": runtime, "batch": batch, "n": len(pairs)}
                    out.append(cell)
                    if len(pairs) < 3:
                        continue
                    meas = [m for _, m in pairs]
                    checked = [r for r, _ in pairs if (space, r["encoding"]) in params]
                    cell.update(tau=kendall_tau([predicted_us(r) for r, _ in pairs], meas),
                                tau_flops=kendall_tau([r["flops"] for r, _ in pairs], meas),
                                median_error=statistics.median(abs(predicted_us(r) / m - 1) for r, m in pairs),
                                params_same=sum(params[(space, r["encoding"])] == r["params"] for r in checked),
                                params_checked=len(checked),
                                min_util=[min_utilization_effect([r for r, _ in pairs], meas, q) for q in (0.25, 0.5)])
    first = ["(missing: %s)" % path for path in missing]
    first.append("measured on %s, torch %s, %s; predictions %s" % (
        header.get("gpu"), header.get("torch"), header.get("date"),
        "made now by " + tilewave if tilewave else "as committed before the measurement"))
    return first, out


def table_lines(first, cells_):
    lines = first + [HEADER]
    for c in cells_:
        if "tau" not in c:
            lines.append("%-12s %-9s %5d %4d   (not measured)" % (c["space"], c["runtime"], c["batch"], c["n"]))
            continue
        lines.append("%-12s %-9s %5d %4d %9.3f %9.3f %10.1f%% %6d/%-3d  %s" % (
            c["space"], c["runtime"], c["batch"], c["n"], c["tau"], c["tau_flops"], 100 * c["median_error"],
            c["params_same"], c["params_checked"],
            " / ".join("U>=%.4f: %d, %.0f%%" % (u, d, 100 * k) for u, d, k in c["min_util"])))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="calibrate/data/h200/nas")
    ap.add_argument("--tilewave", help="predict again with this binary instead of reading the committed predictions")
    args = ap.parse_args()
    return print_lines("nas_rank.py", lambda: table_lines(*cells(args.data, args.tilewave)))


if __name__ == "__main__":
    sys.exit(main())
