#!/usr/bin/env python3
"""A host file for your own machine (docs/calibration.md "Your own host").

`calibrate/measure/run.py --out DIR --host-only` times, on your machine, the
forward call of a few networks at batch 1 (DIR/host_networks.jsonl) that the
machine the calibrated host was fitted on timed too
(calibrate/data/h200/timm_harness/fit_heldout). A full run's host-bound
settings (DIR/bench.jsonl[.gz], batch 1 and 16) count as well. The median
ratio of your machine's issue time to that machine's, setting by setting, is
your host's scale: every per-op cost of the reference host file (default
gpu_models/hosts/h200-vm.json), its further-launch and per-step costs are
multiplied by it; the launch latency and the synchronize are kept.

Single-op timings (host_micro.jsonl) are not used for the scale: on the one
machine where both were measured they said 0.6x where whole forwards said
0.9x (docs/calibration.md "Your own host").

The file goes through tilewave's one host-file writer (tilewave.write_host),
which holds every value to `tilewave params`' bounds.

usage: PYTHONPATH=build/analyzer/python python3 -m calibrate.fit.host_file DIR -o HOST.json [--name TEXT]
"""
import argparse
import json
import os
import statistics
import sys

from calibrate.fit import harness_host, host_spread
from calibrate.pair.harness_runs import commit
from calibrate import jsonl, module

ROOT = host_spread.ROOT
REFERENCE = "gpu_models/hosts/h200-vm.json"
# The machine's time for what it does per op and per step; the launch latency and the synchronize are the GPU's.
SCALED = tuple(harness_host.PARAM.values()) + ("host_step_us",)


def machine_rows(folder):
    """The folder's host-bound rows: host_networks.jsonl and bench.jsonl[.gz], whichever it has."""
    rows = []
    for name in ("host_networks.jsonl", "bench.jsonl"):
        path = jsonl.in_folder(folder, name)
        if os.path.exists(path):
            rows += jsonl.read(path)
    return [r for r in rows if not r.get("header") and r.get("status") == "ok"
            and r.get("batch") in host_spread.HOST_BOUND_BATCHES and r.get("host_ms")]


def scale_of(rows, calibration_rows):
    """(median ratio of this machine's host_ms to the calibration machine's, settings paired)."""
    base = host_spread.calibration_medians(calibration_rows)
    ratios = [r["host_ms"] / base[host_spread.setting(r)] for r in rows if host_spread.setting(r) in base]
    return (statistics.median(ratios) if ratios else None), len(ratios)


def scaled_params(params, scale):
    """A host file's parameters with the issue costs (SCALED) times `scale`; latency and sync kept."""
    return {k: v * scale if k in SCALED else v for k, v in params.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="calibrate/measure/run.py's output folder on your machine")
    ap.add_argument("-o", "--output", required=True, help="host file to write")
    ap.add_argument("--name", default=None, help="what the machine is")
    ap.add_argument("--like", default=REFERENCE, help="the calibrated host file to scale")
    a = ap.parse_args()
    try:
        tilewave = module.tilewave_module()
    except ImportError as e:
        print("host_file.py: %s" % e, file=sys.stderr)
        return 1
    if not os.path.isdir(a.folder):
        print("%s: not a folder" % a.folder, file=sys.stderr)
        return 1
    try:
        scale, n = scale_of(machine_rows(a.folder), host_spread.bench_rows(host_spread.CALIBRATION))
        reference = json.load(open(os.path.join(ROOT, a.like) if not os.path.isabs(a.like) else a.like))
    except (KeyError, ValueError, TypeError, OSError) as e:
        print("%s: not an output folder of calibrate/measure/run.py (%s)" % (a.folder, e), file=sys.stderr)
        return 1
    if scale is None:
        print("%s: no forward-call times the calibration machine also took (run calibrate/measure/run.py "
              "--host-only there)" % a.folder, file=sys.stderr)
        return 1
    params = {k: round(v, 2) for k, v in scaled_params(reference["params"], scale).items()}
    where = os.path.relpath(os.path.abspath(a.folder), ROOT)
    host = {"name": a.name or "the machine of %s" % where, "trust": "calibrated", "params": params,
            "sources": {"params": "%s's values times %.3f, the median ratio of this machine's forward-call time to "
                                  "the calibration machine's over %d settings (%s): PYTHONPATH=build/analyzer/python "
                                  "python3 -m calibrate.fit.host_file %s -o %s, commit %s"
                                  % (a.like, scale, n, where, where, os.path.relpath(os.path.abspath(a.output), ROOT),
                                     commit())}}
    try:
        tilewave.write_host(host, a.output)
    except Exception as e:  # the writer's own one-line error: a bound, a path it cannot write
        print(str(e), file=sys.stderr)
        return 1
    # Said once the file is written: a refused file leaves only its one error line.
    print("this machine issues a forward in %.2fx the calibration machine's time (median of %d settings)"
          % (scale, n), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
