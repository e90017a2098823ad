#!/usr/bin/env python3
"""Is a GPU file made by the two commands as good as the shipped one? (issue 30's
proof; docs/calibration.md "Calibrating a GPU in two commands")

Compares, on networks neither file was fitted on, the shipped
gpu_models/h200.json (with its host h200-vm) against a GPU file and host file
written by calibrate/fit/fit_all.py, under both harnesses users time with:

  CUDA graph  `.half()` channels_last forwards replayed in a CUDA graph
              (calibrate/data/h200/runtimes/: held-out families, fresh, fresh2)
  plain loop  timm's benchmark.py: fp32 weights under AMP, NCHW and
              channels_last, the whole step (calibrate/data/h200/timm_harness/:
              held-out families, fresh)

The networks left out are the shipped file's fit families (onnx_models/zoo.py
runtime_split) and every family of the run folder the new file was fitted on.
The plain loop was timed on the machine h200-vm.json describes, not the run
folder's, so it is also shown with the new GPU file under h200-vm.

usage: python3 -m calibrate.validate.newcomer build/analyzer/tilewave --gpu NEW.json --host NEW_HOST.json
       --run-dir calibrate/data/h200/measure_run
"""
import argparse
import sys
import os
import statistics

from calibrate.cli import print_lines
from calibrate.fit import fit_all
from calibrate.pair.harness_runs import ROOT, zoo_split
from calibrate import jsonl

RUNTIMES = ["calibrate/data/h200/runtimes/" + s + "/bench.jsonl" for s in
            ("fit_heldout", "fit_heldout_remainder", "fresh", "fresh2")]
HARNESS = ["calibrate/data/h200/timm_harness/" + s + "/bench.jsonl.gz" for s in ("fit_heldout", "fresh")]


def ok_rows(path):
    return [r for r in jsonl.read(os.path.join(ROOT, path)) if not r.get("header") and r.get("status") == "ok"]


def heldout_rows(run_families):
    """The settings of both harnesses whose network neither file was fitted on (the docstring's sets)."""
    shipped_fit, _ = zoo_split()
    keep = lambda r: r["model"] not in shipped_fit and r.get("family", r["model"]) not in run_families
    graph = {}
    for path in RUNTIMES:  # later files win, as select_runs.py reads them
        for r in ok_rows(path):
            if r.get("runtime") == "eager" and keep(r):
                graph[(r["model"], r["batch"])] = {"model": r["model"], "layout": "channels_last", "batch": r["batch"],
                                                   "precision": "half", "graph_ms": r["latency_ms"]}
    loop = [{k: r[k] for k in ("model", "layout", "batch", "precision", "step_ms", "host_ms")}
            for path in HARNESS for r in ok_rows(path) if keep(r) and r.get("precision", "amp_fp16") == "amp_fp16"]
    return list(graph.values()), loop


ROWS = ((("runtime set", ".half() channels_last, CUDA graph"), "eager PyTorch, CUDA graph, `.half()` channels_last, batch 1/16/64/256"),
        (("whole step", "AMP NCHW, plain loop"), "eager PyTorch, timm's plain loop, AMP NCHW, batch 1/16/256"),
        (("whole step", "AMP channels_last, plain loop"), "eager PyTorch, timm's plain loop, AMP channels_last, batch 1/16/256"),
        (("host", "forward call, AMP NCHW, batch 1 and 16"), "host issue time, AMP NCHW, batch 1/16"),
        (("host", "forward call, AMP channels_last, batch 1 and 16"), "host issue time, AMP channels_last, batch 1/16"))


def comparison(tilewave, gpu, host, run_dir):
    """Markdown lines: the held-out sets, then per harness the median |error| of the shipped files, the new
    files and the new GPU file under h200-vm, and the difference new - shipped in points."""
    run_families = {r.get("family", r["model"]) for r in fit_all.read_rows(run_dir, "bench_median")}
    graph, loop = heldout_rows(run_families)
    files = [("shipped `h200.json` + `h200-vm`", "h200", "h200-vm"), ("new files", gpu, host),
             ("new GPU file + `h200-vm`", gpu, "h200-vm")]
    errs = [fit_all.setting_errors(tilewave, g, h, graph + loop) for _, g, h in files]
    lines = ["| harness (networks neither file was fitted on) | settings | " +
             " | ".join("%s: median error" % label for label, _, _ in files) + " | new − shipped |",
             "| --- | ---: |" + " ---: |" * (len(files) + 1)]
    for key, name in ROWS:
        med = [100 * fit_all.median_error(e[key]) for e in errs]
        lines.append("| %s | %d | %s | %+.1f points |" % (name, len(errs[0][key]), " | ".join("%.1f%%" % m for m in med),
                                                         med[1] - med[0]))
    lines += ["", "Held out: %d CUDA-graph settings of %d networks and %d plain-loop settings of %d networks "
              "(left out: the shipped file's fit families and the %d families of `%s`). Median predicted / measured "
              "on the CUDA graph: %s." % (len(graph), len({r["model"] for r in graph}), len(loop),
                                          len({r["model"] for r in loop}), len(run_families), fit_all.portable(run_dir),
                                          ", ".join("%.2f (%s)" % (statistics.median(e[ROWS[0][0]]), label)
                                                    for e, (label, _, _) in zip(errs, files)))]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tilewave")
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--run-dir", required=True, help="the run.py folder the new files were fitted on")
    args = ap.parse_args()
    return print_lines("newcomer.py", lambda: comparison(args.tilewave, args.gpu, args.host, args.run_dir))


if __name__ == "__main__":
    sys.exit(main())
