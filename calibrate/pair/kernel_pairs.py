#!/usr/bin/env python3
"""Each profiled kernel beside the predicted kernel `tilewave check` pairs it
with, one JSON line per pair: for looking at one kind of kernel across many
networks (docs/validation.md "Runtimes", the eager BatchNorm kernels).

For every (network, runtime, batch) of the runs given (bench.jsonl lines,
e.g. calibrate/data/h200/runtimes/derived/fit_runs.jsonl) it finds the
profiled kernel list in the kernels files, writes it as a trace
(calibrate/measure/kernels_to_trace.py's format), runs
`tilewave check --format json` on the runtime's ONNX export
(onnx_models/runtime/) and `tilewave analyze --format json` for the
predicted kernels' bytes, and prints a line per paired kernel:

  model, runtime, batch, predicted (kernel name), op, kind, measured (name,
  cut to 100 characters), measured_us, predicted_us (own time, no launch
  gap), bytes, l2_hit_bytes

usage: python3 -m calibrate.pair.kernel_pairs RUNS.jsonl --kernels K1.jsonl.gz[,K2...]
       [--tilewave build/analyzer/tilewave] [--gpu h200] [--op bias] [-o OUT.jsonl]
"""
import argparse
import json
import os
import sys
import tempfile

from calibrate import harness_flags
from calibrate import jsonl
from calibrate.cli import add_tilewave_option
from calibrate.module import tilewave_module


def kernel_lists(paths):
    """(model, runtime, batch) -> kernel list [[name, us], ...]; the first file that has it wins."""
    lists = {}
    for path in paths:
        for r in jsonl.read(path):
            lists.setdefault((r["model"], r["runtime"], r["batch"]), r["list"])
    return lists


def onnx_of(model):
    return os.path.join("onnx_models", "runtime", model.replace("timm/", "timm_") + ".onnx")


def pairs(runs, lists, tilewave="build/analyzer/tilewave", gpu="h200", op=None, skipped=None, with_bytes=True):
    """Yields one dict per paired kernel of the runs (see the module doc);
    appends to `skipped` a line for each run it could not pair. Without
    with_bytes, bytes and l2_hit_bytes are 0 (no `analyze` run)."""
    module = tilewave_module(tilewave)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        for r in runs:
            key = (r["model"], r["runtime"], r["batch"])
            onnx = onnx_of(r["model"])
            if key not in lists or not os.path.exists(onnx):
                if skipped is not None:
                    skipped.append("%s %s b%d: no kernel list or no ONNX export" % key)
                continue
            events, ts = [], 0.0
            for name, us in lists[key]:
                events.append({"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": us})
                ts += us
            with open(trace, "w") as f:
                json.dump({"traceEvents": events}, f)
            keywords = dict(harness_flags.CUDA_GRAPH, gpu=gpu, runtime=r["runtime"], batch=r["batch"])
            try:
                check = module.check(onnx, trace, **keywords)
                analysis = module.analyze(onnx, **keywords) if with_bytes else {"layers": []}
            except module.InputError as e:
                if skipped is not None:
                    skipped.append("%s %s b%d: %s" % (*key, e))
                continue
            layers = {k["name"]: k for k in analysis["layers"]}
            for p in check["pairs"]:
                if "measured" not in p or "predicted" not in p:
                    continue
                if op and p.get("predicted_op") != op:
                    continue
                k = layers.get(p["predicted"], {})
                yield {"model": r["model"], "runtime": r["runtime"], "batch": r["batch"],
                       "predicted": p["predicted"], "op": p.get("predicted_op"), "kind": p.get("predicted_kind"),
                       "measured": p["measured"][:100], "measured_us": p["measured_us"],
                       "predicted_us": round(p["predicted_us"], 4),
                       "bytes": k.get("bytes", 0), "l2_hit_bytes": k.get("l2_hit_bytes", 0)}


def read_runs(path):
    return jsonl.read(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs")
    ap.add_argument("--kernels", required=True, help="comma-separated kernels.jsonl[.gz] files")
    add_tilewave_option(ap, "build/analyzer/tilewave")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--op", help="keep pairs whose predicted op is this (e.g. bias: eager's BatchNorm pass)")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    runs = read_runs(a.runs)
    skipped = []
    written = 0
    with (open(a.out, "w") if a.out else sys.stdout) as out:
        for row in pairs(runs, kernel_lists(a.kernels.split(",")), a.tilewave, a.gpu, a.op, skipped):
            out.write(json.dumps(row) + "\n")
            written += 1
    for line in skipped:
        print(line, file=sys.stderr)
    print("%d pairs from %d of %d runs" % (written, len(runs) - len(skipped), len(runs)), file=sys.stderr)


if __name__ == "__main__":
    main()
