#!/usr/bin/env python3
"""How much a host-bound measurement moves, and whether the machine or the
network sets the host's miss (issue 31; docs/validation.md "The corpus,
network by network").

At batch 1 and 16 timm's plain loop waits on the host, and run.py times
those batches in 3 whole passes of one call (one lent machine a call). Two
tables from a run.py folder:

  passes   per batch, over every setting timed in 3 passes: the median and
           the 90th percentile of max/min and of median/min of its passes,
           for the forward call alone (host_ms) and for the step
  calls    per call (one machine a call), at the host-bound batches under AMP
           NCHW: how many networks, and the median of tilewave's host issue
           time over the measured forward call (host ratio), beside the same
           for the CNNs alone

usage: python3 -m calibrate.validate.host_passes RUN_DIR [--tilewave build/analyzer/tilewave]
"""
import argparse
import collections
import json
import os
import statistics
import sys

import numpy

from calibrate import jsonl
from calibrate.fit.host_spread import HOST_BOUND_BATCHES
from calibrate.validate import corpus_networks
from calibrate.cli import InputError, print_lines
from calibrate.validate.kernel_classes import CORPUS


def pass_rows(folder):
    """{(model, precision, layout, batch): [row of each pass]} of bench.jsonl[.gz] at the host-bound batches."""
    path = jsonl.in_folder(folder, "bench.jsonl")
    try:
        rows = jsonl.read(path)
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as e:
        raise InputError("%s: not a readable JSON-lines file (%s)" % (path, e))
    settings = collections.defaultdict(list)
    for i, r in enumerate(rows, 1):
        if not isinstance(r, dict) or r.get("header") or r.get("status") != "ok" \
                or r.get("batch") not in HOST_BOUND_BATCHES or "pass" not in r:
            continue
        key = tuple(r.get(k) for k in ("model", "precision", "layout"))
        times = [r.get(k) for k in ("host_ms", "step_ms")]
        if not (all(isinstance(k, str) for k in key) and isinstance(r["pass"], int)
                and all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t < 1e7 for t in times)):
            raise InputError("%s: row %d is not a run.py pass row (model, precision, layout, pass, host_ms, step_ms)"
                             % (path, i))
        settings[key + (r["batch"],)].append(r)
    if not settings:
        raise InputError("%s: no pass rows at batch %s" % (path, " or ".join(map(str, HOST_BOUND_BATCHES))))
    return settings


def pass_lines(settings):
    """The passes table: per batch, the spread of host_ms and step_ms over the settings with 3 passes."""
    out = ["| batch | settings | forward call: max/min, median | p90 | median/min, median | p90 | "
           "step: max/min, median | p90 |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for batch in HOST_BOUND_BATCHES:
        groups = [g for k, g in settings.items() if k[3] == batch and len(g) >= 3]
        if not groups:
            continue
        cells = []
        for ratio in (lambda v: max(v) / min(v), lambda v: statistics.median(v) / min(v)):
            values = [ratio([r["host_ms"] for r in g]) for g in groups]
            cells += ["%.2f" % statistics.median(values), "%.2f" % numpy.percentile(values, 90)]
        steps = [max(r["step_ms"] for r in g) / min(r["step_ms"] for r in g) for g in groups]
        cells += ["%.2f" % statistics.median(steps), "%.2f" % numpy.percentile(steps, 90)]
        out.append("| %d | %d | %s |" % (batch, len(groups), " | ".join(cells)))
    return out


def call_lines(rows, predicted, kind_of):
    """The calls table: per call, the median host ratio (predicted host issue time / measured forward call) of
    its AMP NCHW host-bound settings, all networks and CNNs alone; then the range over calls."""
    calls = collections.defaultdict(list)
    for r in rows:
        p = predicted.get((r["model"], r["precision"], r["layout"], r["batch"]))
        if p and r["batch"] in HOST_BOUND_BATCHES and (r["precision"], r["layout"]) == ("amp_fp16", "nchw") \
                and r.get("host_ms", 0) > 0 and isinstance(r.get("call"), int):
            calls[r["call"]].append((r["model"], p.loop["host_busy_us"] / (r["host_ms"] * 1e3)))
    out = ["| call | networks | host ratio | CNNs | host ratio, CNNs |", "| ---: | ---: | ---: | ---: | ---: |"]
    medians = []
    for call in sorted(calls):
        cnn = [(m, x) for m, x in calls[call] if kind_of.get(m) == "cnn"]
        medians.append(statistics.median(x for _, x in calls[call]))
        out.append("| %d | %d | %.2f | %d | %s |" % (call, len({m for m, _ in calls[call]}), medians[-1],
                                                   len({m for m, _ in cnn}),
                                                   "%.2f" % statistics.median(x for _, x in cnn) if cnn else "-"))
    if medians:
        out += ["", "%d calls; their median host ratios run from %.2f to %.2f (median %.2f)." % (
            len(medians), min(medians), max(medians), statistics.median(medians))]
    return out


def lines_of(folder, tilewave, predicted_corpus=None):
    """Both tables; `predicted_corpus`: corpus_networks.corpus_predictions(folder, tilewave) already made."""
    rows, predicted, _ = predicted_corpus or corpus_networks.corpus_predictions(folder, tilewave)
    with open(CORPUS) as f:
        kind_of = {n["name"]: n["kind"] for n in json.load(f)["networks"]}
    return (["Spread of the 3 passes of one call (one machine), at the host-bound batches:", ""]
            + pass_lines(pass_rows(folder))
            + ["", "Host ratio per call (one machine a call; calls in a row may share one), AMP NCHW at batch 1 and 16:", ""]
            + call_lines(rows, predicted, kind_of))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", help="a calibrate/measure/run.py folder of the corpus")
    ap.add_argument("--tilewave", default=os.path.join("build", "analyzer", "tilewave"))
    a = ap.parse_args()
    return print_lines("host_passes.py", lambda: lines_of(a.run_dir, a.tilewave))


if __name__ == "__main__":
    sys.exit(main())
