#!/usr/bin/env python3
"""The H200 corpus network by network (issue 31 item 6; docs/validation.md
"The corpus, network by network"): every network of a calibrate/measure/run.py
folder held against tilewave's prediction of the same harness setting, one
row per (split, configuration, batch):

  n             networks measured in the setting (and tilewave could analyse)
  median, p90   of |predicted - measured| / measured step (step_ms_median:
                the median of the passes)
  ratio         median of predicted / measured step
  tau (FLOPs)   Kendall tau-b of the predicted order of the steps against the
                measured one, beside the FLOPs' order's
  GPU median, GPU ratio  the same forward replayed in a CUDA graph
                (graph_ms) against tilewave's prediction with a CUDA graph
  GPU tau       tau of the GPU times
  host ratio    median of tilewave's host issue time of one forward over the
                measured forward call alone (host_ms): where the small
                batches' steps miss, whether the host is why
  in N%, GPU in N%  the share of the step's and of the GPU time's
                measurements inside the GPU file's N% interval (docs/model.md
                "Prediction intervals"; N from the module's interval_coverage); the H200's were fitted on held_out,
                so only the fit rows and a fresh set judge them here
                (calibrate.fit.intervals judges held_out family by family)

Splits are the corpus's (calibrate/data/h200/corpus/networks.json): whole
families, fixed before anything was fitted. The issue's targets are read on
held_out (and on the fresh set, measured after the model is frozen).

usage: python3 -m calibrate.validate.corpus_networks RUN_DIR [--tilewave build/analyzer/tilewave]
       [--gpu h200] [--misses N] [--networks A,B,...] [--calls A-B] [--kind cnn|transformer]
--calls keeps the rows that those run.py calls measured (each row's `call`): a folder resumed on another
machine is judged machine by machine, since host-bound steps move between machines.
--kind keeps the corpus's networks of that kind (networks.json's `kind`; transformer: hybrid and vit), which
issue 31's step targets name apart.
--networks prints, instead of the table, each setting of those networks: predicted / measured step and GPU
time per configuration and batch.
Predicted in process by the Python module's analyze(), the calls spread over
the cores; ONNX files as calibrate/validate/kernel_classes.py finds them.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile

import numpy

from calibrate import harness_flags, jsonl
from calibrate.module import tilewave_module
from calibrate.stats import kendall_tau
from calibrate.cli import InputError, add_tilewave_option, print_lines
from calibrate.validate.kernel_classes import CORPUS, onnx_files

BATCHES = (1, 16, 64, 256)
# --kind's names over networks.json's kinds.
KINDS = {"cnn": {"cnn"}, "transformer": {"hybrid", "vit"}}
# tilewave's totals and 80% interval (docs/model.md "Prediction intervals") of one setting, in a plain loop
# and replayed in a CUDA graph.
Prediction = collections.namedtuple("Prediction", "loop graph loop_interval graph_interval")


def parse_calls(text):
    """"4-6" or "1,2,3" -> {4, 5, 6} or {1, 2, 3}; InputError for anything else."""
    calls = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if (not (first.isdigit() and (last.isdigit() if dash else True)) or int(last or first) < int(first)
                or int(last or first) - int(first) > 10000):  # a range no folder has, not a set of 10^9
            raise InputError("--calls: %r is not a call number or a range A-B (as 4-6 or 1,2,3)" % text[:40])
        calls.update(range(int(first), int(last or first) + 1))
    return calls


def measured_rows(folder, calls=None):
    """bench_median.jsonl[.gz]'s rows that ran (status ok, a step and a CUDA-graph time); with `calls`, only
    those the run.py calls of that set measured."""
    path = jsonl.in_folder(folder, "bench_median.jsonl")
    try:
        rows = jsonl.read(path)
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as e:
        raise InputError("%s: not a readable JSON-lines file (%s)" % (path, e))
    out = []
    for i, r in enumerate(rows, 1):
        if isinstance(r, dict) and r.get("header"):
            continue
        if not (isinstance(r, dict) and isinstance(r.get("model"), str) and isinstance(r.get("batch"), int)
                and (r.get("precision"), r.get("layout")) in harness_flags.CONFIGURATIONS):
            raise InputError("%s: row %d is not a run.py network row (model, batch, precision, layout)" % (path, i))
        if r.get("status") == "ok" and r.get("step_ms_median", 0) > 0 and (calls is None or r.get("call") in calls):
            out.append(r)
    if not out:
        raise InputError("%s: no network row that ran (status ok, a step time)%s" % (
            path, " in calls %s" % ",".join(map(str, sorted(calls))) if calls is not None else ""))
    return out


def predictions(tilewave, rows, onnx, gpu):
    """{(model, precision, layout, batch): Prediction} and the networks left out as {model: error}."""
    module = tilewave_module(tilewave)

    def one(r):
        keywords = harness_flags.timm_row(r)
        try:
            loop = module.analyze(onnx[r["model"]], batch=r["batch"], gpu=gpu, **keywords)
            graph = module.analyze(onnx[r["model"]], batch=r["batch"], gpu=gpu, **dict(keywords, graph=True))
        except module.InputError as e:
            return r, None, str(e).replace(onnx[r["model"]], os.path.basename(onnx[r["model"]]))
        return r, Prediction(loop["total"], graph["total"], loop["interval"], graph["interval"]), None
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = list(pool.map(one, rows))
    predicted = {(r["model"], r["precision"], r["layout"], r["batch"]): p for r, p, _ in done if p}
    return predicted, {r["model"]: e for r, p, e in done if e}


def p90(values):
    """The 90th percentile, linear between ranks (numpy's default)."""
    return float(numpy.percentile(values, 90))


def table(rows, predicted, split):
    """The table's rows: (split, configuration, batch, cells), and every network's step error."""
    groups = {}
    for r in rows:
        p = predicted.get((r["model"], r["precision"], r["layout"], r["batch"]))
        s = split.get(r["model"])
        if p is None or s is None:
            continue
        groups.setdefault((s, harness_flags.CONFIGURATIONS[(r["precision"], r["layout"])], r["batch"]), []).append(
            (r, p))
    out, misses = [], []
    for (s, config, batch) in sorted(groups, key=lambda k: (k[0] != "fit", k[1], k[2])):
        g = groups[(s, config, batch)]
        step = [(p[0]["time_us"], r["step_ms_median"] * 1e3) for r, p in g]
        gpu = [(p[1]["time_us"], r["graph_ms"] * 1e3) for r, p in g if r.get("graph_ms", 0) > 0]
        err = [abs(a - b) / b for a, b in step]
        gerr = [abs(a - b) / b for a, b in gpu]
        misses += [(a / b - 1, r["model"], config, batch, s) for (a, b), (r, _) in zip(step, g)]
        out.append([s, config, str(batch), str(len(g)), "%.1f%%" % (100 * statistics.median(err)),
                    "%.1f%%" % (100 * p90(err)), "%.2f" % statistics.median(a / b for a, b in step),
                    "%.2f (%.2f)" % (kendall_tau([a for a, _ in step], [b for _, b in step]),
                                     kendall_tau([p[0]["flops"] for _, p in g], [b for _, b in step])),
                    "%.1f%%" % (100 * statistics.median(gerr)) if gerr else "-",
                    "%.2f" % statistics.median(a / b for a, b in gpu) if gpu else "-",
                    "%.2f" % kendall_tau([a for a, _ in gpu], [b for _, b in gpu]) if gpu else "-",
                    "%.2f" % statistics.median(p[0]["host_busy_us"] / (r["host_ms"] * 1e3) for r, p in g),
                    coverage([(p.loop_interval, r["step_ms_median"] * 1e3) for r, p in g]),
                    coverage([(p.graph_interval, r["graph_ms"] * 1e3) for r, p in g if r.get("graph_ms", 0) > 0])])
    return out, misses


def head(coverage):
    """The table's column labels; `coverage`: the intervals' share (the module's interval_coverage)."""
    inside = "in %.0f%%" % (100 * coverage)
    return ["split", "configuration", "batch", "n", "median", "p90", "ratio", "tau (FLOPs)", "GPU median",
            "GPU ratio", "GPU tau", "host ratio", inside, "GPU " + inside]


def coverage(settings):
    """The share of (interval, measured us) whose measured time falls inside the GPU file's interval, over
    the settings that have one; "-" where none has."""
    inside = [i["low_us"] <= m <= i["high_us"] for i, m in settings if i and i["measured"]]
    return "%.0f%%" % (100 * sum(inside) / len(inside)) if inside else "-"


def corpus_predictions(folder, tilewave, gpu="h200", calls=None, kind=None):
    """The folder's rows of corpus networks (of `calls` and of KINDS[kind] only, if given), their Predictions
    and the networks left out ({model: error}): the one pass over the corpus that this table and
    calibrate.fit.intervals both read."""
    names = {n["name"] for n in json.load(open(CORPUS))["networks"] if kind is None or n["kind"] in KINDS[kind]}
    rows = [r for r in measured_rows(folder, calls) if r["model"] in names]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        predicted, failed = predictions(tilewave, rows, onnx, gpu)
    return rows, predicted, failed


def lines_of(folder, tilewave, gpu="h200", misses=0, predicted_corpus=None, calls=None, kind=None):
    """The table's lines; `predicted_corpus`: corpus_predictions(folder, tilewave, gpu, calls, kind) already
    made."""
    rows, predicted, failed = predicted_corpus or corpus_predictions(folder, tilewave, gpu, calls, kind)
    split = {n["name"]: n["split"] for n in json.load(open(CORPUS))["networks"]}
    body, worst = table(rows, predicted, split)
    labels = head(tilewave_module(tilewave).interval_coverage)
    networks = {r["model"] for r in rows if r["model"] not in failed}
    splits = [s for s in ("fit", "held_out", "fresh") if any(split[m] == s for m in networks)]
    out = ["%d %snetworks of the corpus (%s), %d settings measured and predicted%s%s" % (
        len(networks), "" if not kind else kind + " " if KINDS[kind] == {kind} else "%s (%s) " % (
            kind, ", ".join(sorted(KINDS[kind]))),
        ", ".join("%d %s" % (sum(split[m] == s for m in networks), s) for s in splits),
        len(predicted), ", those run.py calls %s measured" % ",".join(map(str, sorted(calls))) if calls is not None else "",
        "; %d networks left out (tilewave could not analyse them)" % len(failed) if failed else ""),
        "", "| " + " | ".join(labels) + " |", "|" + " --- |" * len(labels)]
    out += ["| " + " | ".join(cells) + " |" for cells in body]
    out += ["  left out: %s: %s" % (m, e) for m, e in sorted(failed.items())]
    if misses:
        out.append("largest step misses (predicted / measured - 1):")
        for s in splits:
            w = sorted((x for x in worst if x[4] == s), key=lambda x: -abs(x[0]))[:misses]
            out.append("  %s: " % s + ", ".join("%s %s b%d %+.0f%%" % (m, c, b, 100 * e) for e, m, c, b, _ in w))
    return out


def network_lines(folder, tilewave, names, gpu="h200", calls=None):
    """Each setting of the named networks: predicted / measured step and GPU time (CUDA graph), per
    configuration and batch, one line per network and configuration."""
    rows = [r for r in measured_rows(folder, calls) if r["model"] in names]
    missing = sorted(set(names) - {r["model"] for r in rows})
    if missing:
        raise InputError("%s: no measured row of %s" % (folder, ", ".join(missing)))
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        predicted, failed = predictions(tilewave, rows, onnx, gpu)
    batches = sorted({r["batch"] for r in rows})
    out = ["predicted / measured, step and GPU time (CUDA graph), on %s:" % gpu, "",
           "| network | configuration | " + " | ".join("b%d step, GPU" % b for b in batches) + " |",
           "| --- | --- |" + " ---: |" * len(batches)]
    cells = collections.defaultdict(dict)
    for r in rows:
        p = predicted.get((r["model"], r["precision"], r["layout"], r["batch"]))
        if p:
            gpu_ratio = "%.2f" % (p.graph["time_us"] / 1e3 / r["graph_ms"]) if r.get("graph_ms", 0) > 0 else "-"
            cells[(r["model"], harness_flags.CONFIGURATIONS[(r["precision"], r["layout"])])][r["batch"]] = (
                "%.2f, %s" % (p.loop["time_us"] / 1e3 / r["step_ms_median"], gpu_ratio))
    for (model, config), by_batch in sorted(cells.items()):
        out.append("| %s | %s | " % (model, config) + " | ".join(by_batch.get(b, "-") for b in batches) + " |")
    out += ["  left out: %s: %s" % (m, e) for m, e in sorted(failed.items())]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", help="a calibrate/measure/run.py folder of the corpus (calibrate/data/h200/corpus/run)")
    add_tilewave_option(ap, os.path.join("build", "analyzer", "tilewave"))
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--misses", type=int, default=0, help="also list each split's N largest step misses")
    ap.add_argument("--networks", help="A,B,...: instead of the table, each setting of these networks")
    ap.add_argument("--calls", help="A-B or A,B,...: only the rows these run.py calls measured (each row's call)")
    ap.add_argument("--kind", choices=sorted(KINDS), help="only the corpus's networks of this kind")
    a = ap.parse_args()
    if a.misses < 0:
        ap.error("--misses: %d is negative" % a.misses)
    try:
        calls = parse_calls(a.calls) if a.calls is not None else None
    except InputError as e:
        ap.error(str(e))
    if a.networks:
        return print_lines("corpus_networks.py",
                           lambda: network_lines(a.run_dir, a.tilewave, a.networks.split(","), a.gpu, calls))
    return print_lines("corpus_networks.py",
                       lambda: lines_of(a.run_dir, a.tilewave, a.gpu, a.misses, calls=calls, kind=a.kind))


if __name__ == "__main__":
    sys.exit(main())
