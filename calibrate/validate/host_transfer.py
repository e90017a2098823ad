#!/usr/bin/env python3
"""Does a host file made for one machine predict that machine? (docs/calibration.md "Your own host")

On calibrate/data/h200/measure_run (an H200 machine other than the one
gpu_models/hosts/h200-vm.json was fitted on), the networks are split in two
by name: the first REFERENCE_COUNT make this machine's host file the way
calibrate/fit/host_file.py does (the median ratio of their forward-call
times to the calibration machine's), the others are predicted with it and
with h200-vm.json unchanged. Printed per host file, over the held-out
networks at batch 1 and 16, NCHW and channels_last under AMP: the median
|error| of the host's issue time (the forward call, host_ms) and of the
step (timm's step_ms, median over the run's passes), and how many measured
steps fall inside h200-vm's machine-spread range (time_low_us..time_high_us;
that range was measured on this machine among others, so this is in-sample).

usage: python3 -m calibrate.validate.host_transfer build/analyzer/tilewave
"""
import json
import os
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

from calibrate.pair import harness_runs
from calibrate.jsonl import read_all
from calibrate.fit import host_file
from calibrate.fit import host_spread

# (run, its reference rows' source): measure_run's first REFERENCE_COUNT networks by name
# (a full run's rows); host_check's host_networks.jsonl (what --host-only records).
CASES = (("calibrate/data/h200/measure_run", "first networks"), ("calibrate/data/h200/host_check", "host_networks.jsonl"))
REFERENCE_COUNT = 4


def rows_of(run):
    """The run's median rows over passes: AMP, batch 1 and 16."""
    rows = read_all(os.path.join(harness_runs.ROOT, run, "bench_median.jsonl.gz"))
    return [r for r in rows if not r.get("header") and r.get("status") == "ok" and r["precision"] == "amp_fp16"
            and r["batch"] in host_spread.HOST_BOUND_BATCHES]


def case(tw, run, reference_source, calibration_rows):
    """Table rows for one machine: h200-vm.json and the host file scaled from its reference rows."""
    folder = os.path.join(harness_runs.ROOT, run)
    rows = rows_of(run)
    models = sorted({r["model"] for r in rows})
    if reference_source == "first networks":
        reference = models[:REFERENCE_COUNT]
        ref_rows = [r for r in host_file.machine_rows(folder)
                    if r["model"] in reference and r.get("precision", "amp_fp16") == "amp_fp16"]
    else:
        ref_rows = [r for r in read_all(os.path.join(folder, reference_source)) if r.get("status") == "ok"]
        reference = sorted({r["model"] for r in ref_rows})
    scale, n = host_file.scale_of(ref_rows, calibration_rows)
    calibrated = json.load(open(os.path.join(harness_runs.ROOT, host_file.REFERENCE)))
    scaled = dict(calibrated, params=host_file.scaled_params(calibrated["params"], scale))
    scaled.pop("machine_spread", None)
    test = [r for r in rows if r["model"] not in reference]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "this_machine.json")
        with open(path, "w") as f:
            json.dump(scaled, f)
        hosts = {"`h200-vm.json` as shipped": "h200-vm", "scaled to this machine (%.3f)" % scale: path}
        jobs = [(h, r) for h in hosts.values() for r in test]
        with ThreadPoolExecutor(4) as pool:
            got = pool.map(lambda job: harness_runs.predict(tw, job[1]["model"], job[1]["layout"], job[1]["batch"],
                                                            host=job[0])["total"], jobs)
            totals = dict(zip([(h, id(r)) for h, r in jobs], got))
    lines = []
    for label, h in hosts.items():
        issue = [abs(totals[(h, id(r))]["host_busy_us"] / (1e3 * r["host_ms"]) - 1) for r in test]
        step = [abs(totals[(h, id(r))]["time_us"] / (1e3 * r["step_ms"]) - 1) for r in test]
        inside = sum(totals[(h, id(r))]["time_low_us"] <= 1e3 * r["step_ms"] <= totals[(h, id(r))]["time_high_us"]
                     for r in test)
        ranged = any(totals[(h, id(r))]["time_high_us"] > totals[(h, id(r))]["time_low_us"] for r in test)
        lines.append("| `%s/` | %s (%s: %d settings) | %d networks, %d settings | %s | %.1f%% | %.1f%% | %s |" % (
            os.path.basename(run), ", ".join(reference), reference_source, n, len({r["model"] for r in test}),
            len(test), label, 100 * statistics.median(issue), 100 * statistics.median(step),
            "%d of %d" % (inside, len(test)) if ranged else "no range"))
    micro = [{r["case"]: r["host_us_median"] for r in read_all(os.path.join(d, "host_micro.jsonl"))}
             for d in (folder, os.path.join(harness_runs.ROOT, host_spread.CALIBRATION))]
    ratios = sorted(micro[0][c] / micro[1][c] for c in micro[0] if c in micro[1])
    whole = host_file.scale_of(host_file.machine_rows(folder), calibration_rows)[0]
    note = ("`%s/`: single ops took %.2f\u2013%.2f\u00d7 the calibration machine's time (median %.2f\u00d7 over %d "
            "ops, `host_micro.jsonl` of both); whole forwards, %.2f\u00d7 (median over every setting both timed)."
            % (os.path.basename(run), ratios[0], ratios[-1], statistics.median(ratios), len(ratios), whole))
    return lines, note


def table(tw):
    """The lines main() prints."""
    calibration_rows = host_spread.bench_rows(host_spread.CALIBRATION)
    lines = ["| machine | reference networks | held out | host file | host issue time: median error | "
             "step: median error | measured step inside the range |", "| --- | --- | --- | --- | ---: | ---: | ---: |"]
    notes = []
    for run, source in CASES:
        rows, note = case(tw, run, source, calibration_rows)
        lines += rows
        notes.append(note)
    return lines + [""] + notes


def main():
    print("\n".join(table(sys.argv[1])))


if __name__ == "__main__":
    main()
