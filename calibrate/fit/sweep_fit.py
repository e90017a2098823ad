"""What the fits on a sweep of lone kernels share (calibrate/fit/attention_tiles.py, resample_planes.py):
a GPU file named as `--gpu` names it, tilewave's time of each kernel with candidate values in place of the
file's (the module's predict_layers on a copy written by the one GPU-file writer), and the error summary of
their tables."""
import argparse
import json
import os
import sys
import statistics
import tempfile

import numpy as np

from calibrate import jsonl
from calibrate.cli import InputError, add_tilewave_option
from calibrate.fit.corpus_fit import stamp_eager
from calibrate.module import ROOT, tilewave_module
from calibrate.pair.harness_runs import commit


def gpu_file(name):
    """gpu_models/NAME.json where it exists, else the name (a path)."""
    path = os.path.join(ROOT, "gpu_models", name + ".json")
    return path if os.path.exists(path) else name


def read_sweep(path, header_keys, row_keys):
    """The header and the rows of a sweep's JSON-lines file, through calibrate/jsonl.py's one reader. A file that
    cannot be read (missing, a folder, a FIFO, not UTF-8, not JSON lines), holds no header, or has a row that is not
    an object with `row_keys` (a header without `header_keys`) is an InputError naming it."""
    try:
        found = jsonl.read(path)
    except UnicodeDecodeError:
        raise InputError("%s: not UTF-8 text" % path) from None
    except ValueError as e:
        raise InputError(str(e)) from None
    except OSError as e:
        raise InputError("%s: %s" % (path, e.strerror) if e.strerror else str(e)) from None
    if not found:
        raise InputError("%s: no header row (an empty sweep)" % path)
    for n, (row, keys) in enumerate(zip(found, [header_keys] + [row_keys] * (len(found) - 1)), 1):
        missing = [k for k in keys if not isinstance(row, dict) or k not in row]
        if missing:
            raise InputError("%s: row %d is not a sweep row: no %r" % (path, n, missing[0]))
    return found[0], found[1:]


def measured_gemms(path, dtypes):
    """[(M, N, K, batch, dtype, measured µs)] of a layer sweep's GEMMs of `dtypes` that ran; a row out of range, or
    one that is not a measured GEMM, is an InputError naming the file and the row."""
    _, rows = read_sweep(path, (), ())
    out = []
    for n, r in enumerate(rows, 2):
        if not (isinstance(r, dict) and r.get("op") == "gemm" and r.get("dtype") in dtypes and r.get("status") == "ok"):
            continue
        try:
            m, k, nn, us, batch = int(r["M"]), int(r["K"]), int(r["N"]), float(r["measured_us"]), int(r.get("batch", 1))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError("%s: row %d is not a measured GEMM (%s)" % (path, n, e)) from None
        if not (m > 0 and k > 0 and nn > 0 and batch > 0 and 0 < us < 1e9):
            raise InputError("%s: row %d has a size or time out of range" % (path, n))
        out.append((m, nn, k, batch, r["dtype"], us))
    return out


def read_gpu(name):
    """A GPU file named as `--gpu` names it, as JSON; InputError where it cannot be read."""
    path = gpu_file(name)
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            raise OSError("not a regular file")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise InputError("%s: not a readable GPU file (%s)" % (path, getattr(e, "strerror", None) or e)) from None


def layer_times(tw, layers, gpu, params, values=None, eager=False):
    """tilewave's time of each layer (layer-set dicts) on GPU file `gpu`, with `values` for `params` (in the
    base set and the eager set) in place of its own; `eager`: the file's eager set over its base parameters, as
    layers PyTorch eager launches are timed."""
    if values is None and not eager:
        return [p["time_us"] for p in tw.predict_layers(layers, gpu=gpu_file(gpu))]
    g = read_gpu(gpu)
    if eager:
        g["params"].update(g.get("runtime_params", {}).get("eager", {}).get("params", {}))
    update = dict(zip(params, (float(v) for v in (values if values is not None else ()))))
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
    add_tilewave_option(ap)
    ap.add_argument("--gpu", default="h100", help="the GPU file to judge and to fit over (the sweep's GPU)")
    ap.add_argument("--write", action="store_true", help="write the fitted values into gpu_models/h200.json's eager set")


def report(args, lines, params, values, provenance):
    """Prints the table's lines; with --write stamps the fitted values into gpu_models/h200.json's eager set."""
    for line in lines:
        print(line, flush=True)
    if args.write:
        stamp_eager(args.tilewave, dict(zip(params, values)), provenance)
        print("wrote gpu_models/h200.json's eager set: " + ", ".join(params))


def one_value_main(doc, script, param, table_lines, provenance):
    """The command line of a fit of one parameter: --tilewave and --write, the table, the value stamped with
    `provenance` (where the commit is filled in) into gpu_models/h200.json's eager set."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    add_tilewave_option(ap)
    ap.add_argument("--write", action="store_true", help="write the fitted value into gpu_models/h200.json's eager set")
    args = ap.parse_args()
    try:
        lines, value = table_lines(tilewave_module(args.tilewave))
    except InputError as e:
        sys.exit("%s: %s" % (script, e))
    report(args, lines, [param], [value], provenance.format(commit=commit()))
