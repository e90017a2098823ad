#!/usr/bin/env python3
"""cuDNN's layout transforms under AMP NCHW, kernel by kernel, against tilewave's
(docs/model.md "Memory time", "Layout pass"; docs/validation.md "Layout
transforms: one rate, no ramp").

Every AMP NCHW forward profiled in a calibrate/measure/run.py folder of the
corpus is analysed, and its transforms paired with tilewave's as
calibrate/fit/harness_passes.py pairs them for its fit (`paired_transforms`:
each direction one to one in launch order, where the profile has as many of
that direction as tilewave predicts). Per split of the corpus and size of the
transform (bytes read and written): the paired kernels, the median of
|predicted / measured - 1|, the median ratio and the ratio of the summed
times; then what did not pair: the profile's transforms in directions whose
counts disagree, and how many more the profiles hold than tilewave predicts
(cuDNN's choice for some pointwise convolutions).

usage: python3 -m calibrate.validate.layout_transforms calibrate/data/h200/corpus/run [--tilewave T] [--gpu h200]
"""
import argparse
import collections
import json
import os
import tempfile

import numpy as np

from calibrate.parallel import pmap
from calibrate import harness_flags
from calibrate.cli import add_tilewave_option, print_lines
from calibrate.fit.harness_passes import paired_transforms, predicted_class
from calibrate.module import tilewave_module
from calibrate.pair.kernel_names import kernel_class
from calibrate.validate import kernel_classes

# Sizes of a transform's traffic (read + written), MB: the H200's L2 holds 60.
BINS_MB = ((0, 1), (1, 4), (4, 16), (16, 64), (64, float("inf")))


def forwards(tilewave, run_dir, gpu):
    """[(split, pairs, unpaired measured us, measured kernels, predicted kernels)] per AMP NCHW forward of the
    corpus's networks, and {model: error} of those tilewave cannot analyse."""
    split = {n["name"]: n["split"] for n in json.load(open(kernel_classes.CORPUS))["networks"]}
    rows = [r for r in kernel_classes.kernel_rows(run_dir) if r["layout"] == "nchw"
            and r.get("precision", "amp_fp16") == "amp_fp16" and r["model"] in split]
    module = tilewave_module(tilewave)
    with tempfile.TemporaryDirectory() as tmp:
        onnx = kernel_classes.onnx_files(sorted({r["model"] for r in rows}), tmp)

        def one(r):
            try:  # the module releases the GIL while it analyses
                a = module.analyze(onnx[r["model"]], batch=r["batch"], gpu=gpu, **harness_flags.timm_row(r))
            except module.InputError as e:
                return r, None, str(e).replace(onnx[r["model"]], os.path.basename(onnx[r["model"]]))
            layers = [k for k in a["layers"] if "time_us" in k]
            pairs = paired_transforms(r["list"], layers)
            measured = [us for name, us in r["list"] if kernel_class(name, "layout_transform") != "other"]
            predicted = sum(predicted_class(k) == "transform" for k in layers)
            return r, (split[r["model"]], pairs, sum(measured) - sum(us for _, us in pairs), len(measured),
                       predicted), None
        done = pmap(one, rows)
    return [f for _, f, _ in done if f], {r["model"]: e for r, f, e in done if e}


def lines_of(tilewave, run_dir, gpu="h200"):
    found, failed = forwards(tilewave, run_dir, gpu)
    out = ["%d AMP NCHW forwards; tilewave's transforms on %s beside the profiled ones they pair with" % (
        len(found), gpu)]
    out += ["", "| split | traffic | paired | median error | median ratio | summed ratio |",
            "| --- | --- | ---: | ---: | ---: | ---: |"]
    for s in ("fit", "held_out", "fresh"):
        pairs = [(layer["bytes"], layer["time_us"], us) for split, ps, _, _, _ in found if split == s
                 for layer, us in ps]
        if not pairs:
            continue
        for low, high in BINS_MB + ((0, float("inf")),):
            cell = [(p, m) for b, p, m in pairs if low <= b / 1e6 < high]
            if not cell:
                continue
            ratio = np.array([p / m for p, m in cell])
            label = "all" if (low, high) == (0, float("inf")) else (
                "%g MB and more" % low if high == float("inf") else "%g-%g MB" % (low, high))
            out.append("| %s | %s | %d | %.1f%% | %.2f | %.2f |" % (
                s, label, len(cell), 100 * np.median(np.abs(ratio - 1)), np.median(ratio),
                sum(p for p, _ in cell) / sum(m for _, m in cell)))
    totals = collections.Counter()
    for split, pairs, unpaired_us, measured, predicted in found:
        totals["measured"] += measured
        totals["predicted"] += predicted
        totals["paired"] += len(pairs)
        totals["unpaired_us"] += unpaired_us
        totals["measured_us"] += sum(us for _, us in pairs) + unpaired_us
    out.append("profiled transforms %d, predicted %d, paired %d; the unpaired hold %.1f of %.1f ms of profiled "
               "transform time" % (totals["measured"], totals["predicted"], totals["paired"],
                                   totals["unpaired_us"] / 1e3, totals["measured_us"] / 1e3))
    out += ["  left out: %s: %s" % (m, e) for m, e in sorted(failed.items())]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", help="a calibrate/measure/run.py folder of the corpus (calibrate/data/h200/corpus/run)")
    add_tilewave_option(ap, os.path.join("build", "analyzer", "tilewave"))
    ap.add_argument("--gpu", default="h200")
    a = ap.parse_args()
    return print_lines("layout_transforms.py", lambda: lines_of(a.tilewave, a.run_dir, a.gpu))


if __name__ == "__main__":
    raise SystemExit(main())
