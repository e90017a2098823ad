#!/usr/bin/env python3
"""Is a GPU file made by the two commands as good as the shipped one? (issue 30's
proof; docs/calibration.md "Calibrating a GPU in two commands")

Compares, on networks neither file was fitted on, a shipped GPU file and host
(--shipped, default gpu_models/h200.json with its host h200-vm) against a GPU
file and host file written by calibrate/fit/fit_all.py, under both harnesses
users time with:

  CUDA graph  `.half()` channels_last forwards replayed in a CUDA graph
  plain loop  timm's benchmark.py: fp32 weights under AMP, NCHW and
              channels_last, the whole step; and the forward call's host time

The judged networks are, by default, the H200's
(calibrate/data/h200/runtimes/: held-out families, fresh, fresh2;
calibrate/data/h200/timm_harness/: held-out families, fresh); with --judge,
the networks of another calibrate/measure/run.py folder measured on the same
GPU as the run (for example the H100's calibrate/data/h100/corpus/fresh),
which also gives the AMP forwards' CUDA-graph times. Left out either way: the
shipped H200 file's fit families (onnx_models/zoo.py runtime_split; carried
files inherit them) and every family of the run folder the new file was
fitted on. The judged plain loop was timed on another machine than the run's,
so it is also shown with the new GPU file under the shipped host.

usage: python3 -m calibrate.validate.newcomer build/analyzer/tilewave --gpu NEW.json --host NEW_HOST.json
       --run-dir calibrate/data/h200/measure_run [--shipped GPU,HOST] [--judge RUN_DIR]
"""
import argparse
import collections
import json
import sys
import os
import statistics
import tempfile

from calibrate.cli import print_lines
from calibrate.fit import fit_all
from calibrate.pair.harness_runs import ROOT, zoo_split
from calibrate import jsonl
from calibrate.validate.corpus_networks import KINDS
from calibrate.validate.kernel_classes import CORPUS, onnx_files

RUNTIMES = ["calibrate/data/h200/runtimes/" + s + "/bench.jsonl" for s in
            ("fit_heldout", "fit_heldout_remainder", "fresh", "fresh2")]
HARNESS = ["calibrate/data/h200/timm_harness/" + s + "/bench.jsonl.gz" for s in ("fit_heldout", "fresh")]


def ok_rows(path):
    return [r for r in jsonl.read(os.path.join(ROOT, path)) if not r.get("header") and r.get("status") == "ok"]


def family_key(row):
    """A row's family as the sets compare it: onnx_models/zoo.py spells `mobilenet_v2` what the corpus's
    networks.json spells `mobilenetv2`, so underscores and case do not count."""
    return (row.get("family") or row["model"]).replace("_", "").lower()


def heldout_rows(run_families):
    """The settings of both harnesses whose network neither file was fitted on (the docstring's sets)."""
    shipped_fit, _ = zoo_split()
    keep = lambda r: r["model"] not in shipped_fit and family_key(r) not in run_families
    graph = {}
    for path in RUNTIMES:  # later files win, as select_runs.py reads them
        for r in ok_rows(path):
            if r.get("runtime") == "eager" and keep(r):
                graph[(r["model"], r["batch"])] = {"model": r["model"], "layout": "channels_last", "batch": r["batch"],
                                                   "precision": "half", "graph_ms": r["latency_ms"]}
    loop = [{k: r[k] for k in ("model", "layout", "batch", "precision", "step_ms", "host_ms")}
            for path in HARNESS for r in ok_rows(path) if keep(r) and r.get("precision", "amp_fp16") == "amp_fp16"]
    return list(graph.values()), loop


# (scope and setting of fit_all.setting_errors, the table's name); the batches are the judged rows'.
ROWS = ((("runtime set", ".half() channels_last, CUDA graph"), "eager PyTorch, CUDA graph, `.half()` channels_last"),
        (("layout and precision sets", "AMP NCHW, CUDA graph"), "eager PyTorch, CUDA graph, AMP NCHW"),
        (("layout and precision sets", "AMP channels_last, CUDA graph"), "eager PyTorch, CUDA graph, AMP channels_last"),
        (("whole step", "AMP NCHW, plain loop"), "eager PyTorch, timm's plain loop, AMP NCHW"),
        (("whole step", "AMP channels_last, plain loop"), "eager PyTorch, timm's plain loop, AMP channels_last"),
        (("host", "forward call, AMP NCHW, batch 1 and 16"), "host issue time, AMP NCHW"),
        (("host", "forward call, AMP channels_last, batch 1 and 16"), "host issue time, AMP channels_last"))


def judged_rows(judge, run_families):
    """The bench_median rows of the run.py folder JUDGE whose family is neither the shipped file's fit family
    nor one of the run's."""
    shipped_fit, _ = zoo_split()
    return [r for r in fit_all.read_rows(judge, "bench_median")
            if r["model"] not in shipped_fit and family_key(r) not in run_families]


def corpus_kinds():
    """{network: kind} of the corpus's networks.json (cnn, hybrid, vit)."""
    with open(CORPUS) as f:
        return {n["name"]: n["kind"] for n in json.load(f)["networks"]}


def batches_of(key, rows):
    """`batch 1/16/…`: the batches of ROWS that setting KEY of fit_all.setting_errors judges."""
    scope, setting = key
    half = scope == "runtime set"
    nchw = "NCHW" in setting
    keep = [r["batch"] for r in rows if (r.get("precision") == "half") == half
            and (half or (r["layout"] == "nchw") == nchw)
            and r.get("step_ms" if scope in ("whole step", "host") else "graph_ms")
            and (scope != "host" or (r["batch"] in (1, 16) and r.get("host_ms")))]
    return "batch " + "/".join(str(b) for b in sorted(set(keep)))


def comparison(tilewave, gpu, host, run_dir, shipped=("h200", "h200-vm"), judge=None):
    """Markdown lines: the judged sets, then per harness the median |error| of the shipped files, the new
    files and the new GPU file under the shipped host, and the difference new - shipped in points."""
    run_families = {family_key(r) for r in fit_all.read_rows(run_dir, "bench_median")}
    ship_gpu, ship_host = shipped
    name = lambda f: "`%s`" % os.path.basename(f) if f.endswith(".json") else "`%s.json`" % f
    files = [("shipped %s + `%s`" % (name(ship_gpu), ship_host), ship_gpu, ship_host), ("new files", gpu, host),
             ("new GPU file + `%s`" % ship_host, gpu, ship_host)]
    with tempfile.TemporaryDirectory() as tmp:
        if judge:
            rows = judged_rows(judge, run_families)
            graph = [r for r in rows if r.get("graph_ms") and r.get("precision") == "half"]
            loop = [r for r in rows if r.get("step_ms") and r.get("precision") != "half"]
            paths = onnx_files(sorted({r["model"] for r in rows}), tmp)
            kinds = corpus_kinds()
        else:
            graph, loop = heldout_rows(run_families)
            rows, paths, kinds = graph + loop, {}, {}
        # The run's sample is CNNs: with --judge, the `.half()` graph rows also by corpus kind. Each row is
        # predicted once, in the part it falls in; the whole set's errors are the parts' together.
        parts = {kind: [r for r in graph if kinds.get(r["model"]) in KINDS[kind]] for kind in sorted(KINDS)} if judge else {}
        in_part = {id(r) for part in parts.values() for r in part}
        parts[None] = [r for r in rows if id(r) not in in_part]
        by_part = {p: [fit_all.setting_errors(tilewave, g, h, prows, paths) for _, g, h in files]
                   for p, prows in parts.items() if prows}
    errs = [collections.defaultdict(list) for _ in files]
    for part in by_part.values():
        for i, e in enumerate(part):
            for k, ratios in e.items():
                errs[i][k] += ratios
    lines = ["| harness (networks neither file was fitted on) | settings | " +
             " | ".join("%s: median error" % label for label, _, _ in files) + " | new − shipped |",
             "| --- | ---: |" + " ---: |" * (len(files) + 1)]

    def row(label, key, errs):
        med = [100 * fit_all.median_error(e[key]) for e in errs]
        return "| %s | %d | %s | %+.1f points |" % (label, len(errs[0][key]), " | ".join("%.1f%%" % m for m in med),
                                                    med[1] - med[0])
    for key, label in ROWS:
        if not errs[0].get(key):
            continue
        lines.append(row("%s, %s" % (label, batches_of(key, rows)), key, errs))
        if key == ROWS[0][0]:
            lines += [row("… of them %ss (corpus `kind`)" % ("CNN" if kind == "cnn" else kind), key, by_part[kind])
                      for kind in sorted(KINDS) if kind in by_part]
    source = ("`%s`, less " % fit_all.portable(judge)) if judge else ""
    lines += ["", "Judged: %d CUDA-graph settings of %d networks and %d plain-loop settings of %d networks "
              "(%sthe shipped file's fit families and the %d families of `%s`). Median predicted / measured "
              "on the `.half()` CUDA graph: %s." % (len(graph), len({r["model"] for r in graph}), len(loop),
                                                   len({r["model"] for r in loop}), source or "left out: ",
                                                   len(run_families), fit_all.portable(run_dir),
                                                   ", ".join("%.2f (%s)" % (statistics.median(e[ROWS[0][0]]), label)
                                                             for e, (label, _, _) in zip(errs, files)))]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tilewave")
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--run-dir", required=True, help="the run.py folder the new files were fitted on")
    ap.add_argument("--shipped", default="h200,h200-vm", help="GPU,HOST: the files to compare against "
                    "(default h200,h200-vm)")
    ap.add_argument("--judge", help="a run.py folder of other networks on the run's GPU to judge on (default: "
                    "the H200's held-out and fresh sets)")
    args = ap.parse_args()
    shipped = args.shipped.split(",")
    if len(shipped) != 2 or not all(shipped):
        ap.error("--shipped takes GPU,HOST")
    return print_lines("newcomer.py", lambda: comparison(args.tilewave, args.gpu, args.host, args.run_dir,
                                                         tuple(shipped), args.judge))


if __name__ == "__main__":
    sys.exit(main())
