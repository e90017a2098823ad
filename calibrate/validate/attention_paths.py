#!/usr/bin/env python3
"""How PyTorch ran each network's attention, against what tilewave predicts
(issue 31 item 3; docs/validation.md "Attention: the fused kernel or the math
path").

Under eager, tilewave costs an attention chain written by
scaled_dot_product_attention as one fused kernel when its shapes allow one
(docs/model.md "Attention"); otherwise PyTorch runs its math fallback:
batched GEMMs, a softmax that checks for rows of -inf (one `isneginf` pass
per call) and the casts around them, and tilewave costs the chain op by op. Per network of the folders' profiled forwards
(`.half()` channels_last at batch 1: one forward per network), this prints the
attention kernels tilewave predicts, the fused kernels the profile holds, and
its math-path softmaxes, by kernel_names.json's `sdpa_path` vocabulary. A
network whose predicted fused kernels differ from the measured ones is one
tilewave fuses where PyTorch did not, or the other way round.

With --cases, the same vocabulary judges calibrate/measure/sdpa_paths.py's
single calls instead: which path each input shape took.

usage: python3 -m calibrate.validate.attention_paths RUN_DIR [RUN_DIR ...] [--tilewave build/analyzer/tilewave]
       python3 -m calibrate.validate.attention_paths --cases calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl
"""
import argparse
import collections
import os
import sys
import tempfile

from calibrate import harness_flags, jsonl
from calibrate.module import tilewave_module
from calibrate.pair.kernel_names import kernel_class
from calibrate.cli import InputError, print_lines
from calibrate.validate.kernel_classes import kernel_rows, onnx_files


def paths(tilewave, folders):
    """[(network, attention chains in the export, of them predicted fused under eager, measured fused kernels,
    measured math-path softmaxes)] of the networks with attention, and the networks tilewave cannot analyse."""
    rows = [r for folder in folders for r in kernel_rows(folder)
            if r["batch"] == 1 and (r.get("precision"), r["layout"]) == ("half", "channels_last")]
    measured = {}
    for r in rows:
        count = collections.Counter(kernel_class(name, "sdpa_path") for name, _ in r["list"])
        measured[r["model"]] = (count["fused"], count["math softmax"])
    tw = tilewave_module(tilewave)
    out, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted(measured), tmp)
        for r in rows:
            try:
                doc = tw.analyze(onnx[r["model"]], batch=1, gpu="h200", **harness_flags.timm_row(r))
            except tw.InputError:
                failed.append(r["model"])
                continue
            # The chains of the export: inductor fuses hand-written attention as well.
            chains = tw.analyze(onnx[r["model"]], batch=1, gpu="h200", **dict(harness_flags.timm_row(r),
                                                                               runtime="inductor"))
            written = sum(1 for k in chains["layers"] if k.get("layer", {}).get("op") == "attention")
            predicted = sum(1 for k in doc["layers"] if k.get("layer", {}).get("op") == "attention")
            fused, math = measured[r["model"]]
            if written or predicted or fused or math:
                out.append((r["model"], written, predicted, fused, math))
    return sorted(out, key=lambda x: (x[4] == 0, x[1] == x[2], x[0])), failed


def lines(result, failed):
    out = ["| network | attention chains in the export | predicted fused (eager) | measured fused kernels | "
           "measured math-path softmaxes |",
           "| --- | ---: | ---: | ---: | ---: |"]
    out += ["| `%s` | %d | %d | %d | %d |" % row for row in result]
    unfused = [m for m, w, p, _, _ in result if w > p]
    math = [m for m, _, _, _, x in result if x]
    differ = [m for m, _, p, f, _ in result if p != f]
    out += ["", "%d networks with attention. Eager tilewave costs some chains op by op in %d (%s): attention written "
            "by hand, which eager PyTorch runs op by op, or scaled_dot_product_attention calls that take its math "
            "path, which %d networks' profiles show (%s). In %d the predicted fused kernels are the measured ones, "
            "one for one%s%s." % (
                len(result), len(unfused), ", ".join("`%s`" % m for m in unfused), len(math),
                ", ".join("`%s`" % m for m in math), len(result) - len(differ),
                "; they differ in %s" % ", ".join("`%s`" % m for m in differ) if differ else "",
                "; left out, tilewave cannot analyse them: %s" % ", ".join(failed) if failed else "")]
    return out


def case_lines(path):
    """The table of sdpa_paths.py's cases: each call's shapes, the path its kernels show (`fused` when a fused
    attention kernel ran, `math` when the fallback's softmax did) and the call's time. InputError for a file
    that is not sdpa_paths.py's."""
    try:
        rows = [r for r in jsonl.read(path) if not r.get("header")]
        cases = [(r["case"], r["q"], r["k"], r["mask"], [name for name, _, _ in r["kernels"]], float(r["call_us"]))
                 for r in rows]
    except (OSError, ValueError, EOFError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as e:
        raise InputError("%s: not an sdpa_paths.py file (%s: %s)" % (path, type(e).__name__, e))
    if not cases:
        raise InputError("%s: no case rows" % path)

    def shape(dims):
        return "\u00d7".join(map(str, dims))
    out = ["| case | q | k, v | mask | path | one call, \u00b5s |", "| --- | --- | --- | --- | --- | ---: |"]
    for case, q, k, mask, names, call_us in cases:
        classes = {kernel_class(name, "sdpa_path") for name in names}
        path_taken = "fused" if "fused" in classes else "math" if "math softmax" in classes else "neither"
        out.append("| %s | %s | %s | %s | %s | %.1f |" % (case, shape(q), shape(k),
                                                          "%s %s" % (mask[0], shape(mask[1])) if mask else "-",
                                                          path_taken, call_us))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dirs", nargs="*", help="calibrate/measure/run.py folders")
    ap.add_argument("--tilewave", default=os.path.join("build", "analyzer", "tilewave"))
    ap.add_argument("--cases", help="an sdpa_paths.py file: print which path each call shape took")
    a = ap.parse_args()
    if bool(a.cases) == bool(a.run_dirs):
        ap.error("give run folders or --cases FILE")
    if a.cases:
        return print_lines("attention_paths.py", lambda: case_lines(a.cases))
    return print_lines("attention_paths.py", lambda: lines(*paths(a.tilewave, a.run_dirs)))


if __name__ == "__main__":
    sys.exit(main())
