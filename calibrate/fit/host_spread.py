#!/usr/bin/env python3
"""How much the host's issue time moves between machines of one kind: the
`machine_spread` of a host description (docs/model.md "Schedule",
docs/calibration.md "Host").

The host description is fitted on one machine (the calibration run). Every
other run of timm's harness on a machine of the same kind that timed some of
the same settings (network, layout, batch, precision) at the host-bound
batches 1 and 16 is paired with it setting by setting; each run, and each
whole pass within a run, gives the median of its `host_ms` ratios (the
forward call alone, calibrate/measure/timm_harness_bench.py). The spread is
the lowest and the highest of those medians, with the calibration machine's
own 1.0 inside it: machines of this kind take `low` to `high` times the
calibrated one's issue time.

usage: python3 -m calibrate.fit.host_spread [--calibration RUN] [RUN ...]
  RUN: a folder with bench.jsonl or bench.jsonl.gz (default: the committed
  H200 harness runs). Prints one line per (run, pass) and the JSON fragment.
"""
import argparse
import json
import os
import statistics
import sys

from calibrate import jsonl

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HARNESS = "calibrate/data/h200/timm_harness"
CALIBRATION = HARNESS + "/fit_heldout"
OTHER_MACHINES = [HARNESS + "/fresh", HARNESS + "/repeat", "calibrate/data/h200/measure_run",
                  "calibrate/data/h200/host_check"]
HOST_BOUND_BATCHES = (1, 16)


def bench_rows(run):
    """The ok rows of a run's bench file, header dropped; SystemExit naming the folder when it has none."""
    path = jsonl.in_folder(os.path.join(ROOT, run), "bench.jsonl")
    if os.path.exists(path):
        return [r for r in jsonl.read(path) if not r.get("header") and r.get("status") == "ok"]
    sys.exit("%s: no bench.jsonl or bench.jsonl.gz" % run)


def setting(r):
    return (r["model"], r["layout"], r["batch"], r.get("precision", "amp_fp16"))


def calibration_medians(calibration_rows):
    """setting -> the calibration machine's median host_ms, at the host-bound batches."""
    base = {}
    for r in calibration_rows:
        if r["batch"] in HOST_BOUND_BATCHES and r.get("host_ms"):
            base.setdefault(setting(r), []).append(r["host_ms"])
    return {k: statistics.median(v) for k, v in base.items()}


def spread(calibration_rows, others):
    """[(run, pass, pairs, median ratio)] and (low, high); `others` maps a run's name to its rows."""
    base = calibration_medians(calibration_rows)
    lines = []
    for run, rows in others.items():
        by_pass = {}
        for r in rows:
            k = setting(r)
            if k in base and r.get("host_ms"):
                by_pass.setdefault(r.get("pass", 0), []).append(r["host_ms"] / base[k])
        for p in sorted(by_pass):
            lines.append((run, p, len(by_pass[p]), statistics.median(by_pass[p])))
    medians = [m for *_, m in lines]
    return lines, (min([1.0] + medians), max([1.0] + medians))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", default=OTHER_MACHINES, help="runs on other machines of the same kind")
    ap.add_argument("--calibration", default=CALIBRATION, help="the run the host description was fitted on")
    a = ap.parse_args()
    lines, (low, high) = spread(bench_rows(a.calibration), {run: bench_rows(run) for run in a.runs})
    print("host issue time (host_ms) against %s, batch %s, same network, layout, batch and precision:"
          % (a.calibration, " and ".join(map(str, HOST_BOUND_BATCHES))))
    for run, p, n, m in lines:
        print("  %-48s pass %d  %3d settings  median ratio %.2f" % (run, p, n, m))
    if not lines:
        sys.exit("no run shares a host-bound setting with %s" % a.calibration)
    print(json.dumps({"machine_spread": {"low": round(low, 2), "high": round(high, 2)}}))


if __name__ == "__main__":
    main()
