"""What the fits on a sweep of lone kernels share (calibrate/fit/attention_tiles.py, resample_planes.py):
a GPU file named as `--gpu` names it, tilewave's time of each kernel with candidate values in place of the
file's (the module's predict_layers on a copy written by the one GPU-file writer), and the error summary of
their tables."""
import json
import os
import statistics
import tempfile

import numpy as np

from calibrate.fit.corpus_fit import stamp_eager
from calibrate.module import ROOT


def gpu_file(name):
    """gpu_models/NAME.json where it exists, else the name (a path)."""
    path = os.path.join(ROOT, "gpu_models", name + ".json")
    return path if os.path.exists(path) else name


def layer_times(tw, layers, gpu, params, values=None):
    """tilewave's time of each layer (layer-set dicts) on GPU file `gpu`, with `values` for `params` (in the
    base set and the eager set) in place of its own."""
    if values is None:
        return [p["time_us"] for p in tw.predict_layers(layers, gpu=gpu_file(gpu))]
    g = json.load(open(gpu_file(gpu)))
    update = dict(zip(params, (float(v) for v in values)))
    g["params"].update(update)
    g.get("runtime_params", {}).get("eager", {}).get("params", {}).update(update)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "candidate.json")
        tw.write_gpu(g, path)
        return [p["time_us"] for p in tw.predict_layers(layers, gpu=path)]


def errors(predicted, measured):
    """'median | p90 | ratio': the median and 90th percentile |error| and the median ratio, for a table row."""
    ratio = [p / m for p, m in zip(predicted, measured)]
    err = [abs(x - 1) for x in ratio]
    return (f"{100 * statistics.median(err):.1f}% | {100 * float(np.percentile(err, 90)):.1f}% | "
            f"{statistics.median(ratio):.2f}")


def add_common_args(ap, folder_help):
    """The sweep folder, --tilewave, --gpu (the sweep's GPU file, default h100) and --write."""
    ap.add_argument("sweep_dir", help=folder_help)
    ap.add_argument("--tilewave", help="the CLI whose build holds the Python module (where `import tilewave` finds none)")
    ap.add_argument("--gpu", default="h100", help="the GPU file to judge and to fit over (the sweep's GPU)")
    ap.add_argument("--write", action="store_true", help="write the fitted values into gpu_models/h200.json's eager set")


def report(args, lines, params, values, provenance):
    """Prints the table's lines; with --write stamps the fitted values into gpu_models/h200.json's eager set."""
    for line in lines:
        print(line, flush=True)
    if args.write:
        stamp_eager(args.tilewave, dict(zip(params, values)), provenance)
        print("wrote gpu_models/h200.json's eager set: " + ", ".join(params))
