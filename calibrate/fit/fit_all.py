#!/usr/bin/env python3
"""Fits every scope of a GPU file and a host file from one calibrate/measure/run.py
folder (docs/calibration.md "Calibrating a GPU in two commands"), in order:

  1. layers         `tilewave calibrate fit` on the runner's layers (measured.jsonl), fp16,
                    20% of the layers held out (the layer scope's own check)
  2. network terms  `tilewave calibrate fit-networks`: the launch gap and L2 terms of the base
                    set, on the fit families' `.half()` channels_last forwards replayed in a
                    CUDA graph (graph_ms)
  3. runtime set    `tilewave calibrate fit-runtime --runtime eager` on the same forwards and
                    their profiled kernels summed per class (pair/class_times.py's classes)
  4. kernel paths   the runtime set's terms of single kernel paths, on the fit families'
                    profiled forwards paired kernel by kernel: fit/strided_eltwise.py (PyTorch's
                    two elementwise paths), fit/row_moments.py (GroupNorm's moments kernel),
                    fit/softmax_rows.py (the short-row softmax), fit/narrow_convs.py
                    (convolutions over fewer channels than a vector), fit/layer_norm_rows.py
                    (LayerNorm's rows in fp32) and fit/special_functions.py (activations' arithmetic),
                    each when the folder's networks run such kernels
  5. layout and precision sets   fit/harness_passes.py's fit_sets: "eager nchw amp" and
                    "eager nhwc amp" on the fit families' AMP forwards and their kernels
  6. host           fit/harness_host.py's fit: the folder's single ops (host_micro.jsonl) and
                    the fit families' forward calls (host_ms) at batch 1 and 16

Whole families are held out before anything is fitted (--holdout, seeded). After the
fit it prints, per scope, the held-out families' median error with the start file and
with the new one (and with --compare's files), and writes both files through tilewave's
one GPU-file and host-file writers, each fitted set stamped with this command, the data
folder and the commit. Nothing is written when a stage fails.

usage: python3 -m calibrate.fit.fit_all RUN_DIR --gpu START.json -o NEW.json --host-out HOST.json
       [--tilewave build/analyzer/tilewave] [--holdout 0.34] [--seed 1]
       [--compare GPU.json[,HOST.json]]
"""
import argparse
import collections
import datetime
import json
import os
import random
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
from calibrate.parallel import pmap
from calibrate.fit import harness_host
from calibrate.fit import (corpus_fit, harness_passes, layer_norm_rows, narrow_convs, row_moments, softmax_rows,
                           special_functions, strided_eltwise)
from calibrate.pair.class_times import kernel_class
from calibrate.pair.harness_runs import commit, param_table, predict
from calibrate import jsonl, module
from calibrate.cli import InputError
from calibrate.log import log as log_line

MODELS_DIR = "onnx_models/runtime"


class StageError(InputError):
    """A stage that cannot run on the folder it was given (so a caller's print_lines reports it as one line)."""


def log(msg):
    """The stages' progress, on stdout: it is what this command reports."""
    log_line(None, msg, stream=sys.stdout)


# What each file's rows must hold (run.py writes them so); a row without them is the file's error, not a KeyError.
FIELDS = {"bench_median": {"model": str, "layout": str, "batch": int, "precision": str},
          "kernels": {"model": str, "layout": str, "batch": int, "list": list},
          "measured": {}}


def regular_file(path):
    """A file of the folder as a regular file, or the stage's error: a folder, a FIFO or a device in its
    place would fail late or block."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise StageError("%s: %s" % (path, e.strerror))
    if not stat.S_ISREG(mode):
        raise StageError("%s: not a regular file" % path)


def read_rows(folder, name, required=True):
    """The rows of NAME.jsonl or NAME.jsonl.gz in a run folder (headers and failed rows left out)."""
    for path in (os.path.join(folder, name + ".jsonl"), os.path.join(folder, name + ".jsonl.gz")):
        if os.path.lexists(path):
            regular_file(path)
            try:
                out = jsonl.read(path)
            except (OSError, ValueError, EOFError, UnicodeDecodeError) as e:
                raise StageError("%s: not a JSON-lines file (%s)" % (path, e))
            if not all(isinstance(r, dict) for r in out):
                raise StageError("%s: a line is not a JSON object" % path)
            out = [r for r in out if not r.get("header") and r.get("status", "ok") == "ok"]
            for i, r in enumerate(out):
                for key, kind in FIELDS.get(name, {}).items():
                    if not isinstance(r.get(key), kind) or isinstance(r.get(key), bool):
                        raise StageError("%s: row %d has no %s (%s)" % (path, i + 1, key, kind.__name__))
                if name == "bench_median" and not (0 < r["batch"] <= 1 << 20):
                    raise StageError("%s: row %d: batch %d is not a batch" % (path, i + 1, r["batch"]))
                for key in ("graph_ms", "step_ms", "host_ms"):
                    v = r.get(key)
                    if v is not None and (not isinstance(v, (int, float)) or not 0 < v < 1e7):
                        raise StageError("%s: row %d: %s %r is not a time in ms" % (path, i + 1, key, v))
            if not out and name != "measured":
                raise StageError("%s: no measured rows" % path)
            return out
    if required:
        raise StageError("%s: no %s.jsonl or %s.jsonl.gz (is it a calibrate/measure/run.py folder?)" % (folder, name, name))
    return []


def portable(path):
    """A path as provenance names it: relative to the repository when inside it, else its name alone."""
    full = os.path.abspath(path)
    if full.startswith(ROOT + os.sep):
        return os.path.relpath(full, ROOT)
    return os.path.basename(full.rstrip(os.sep))


def run_tool(cmd, stage, report=None):
    """Runs a tilewave command; its report lines go to our output, a failure is the stage's error."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    text = (r.stdout + r.stderr).strip()
    if report:
        with open(report, "w") as f:
            f.write(text + "\n")
    if r.returncode != 0:
        last = text.splitlines()[-1] if text else "exit %d" % r.returncode
        raise StageError("%s: %s" % (stage, last))
    return text.splitlines()


def split_families(bench, holdout, seed):
    """(fit families, held-out families): a seeded shuffle of the folder's families, `holdout` of them held out."""
    families = sorted({r.get("family", r["model"]) for r in bench})
    random.Random(seed).shuffle(families)
    n = max(1, round(len(families) * holdout)) if holdout > 0 else 0
    if len(families) - n < 2:
        raise StageError("only %d families in the folder: too few to hold %d out and fit on the rest" % (len(families), n))
    return set(families[n:]), set(families[:n])


def half_runs(bench, kernels):
    """The `.half()` channels_last CUDA-graph forwards as fit-networks / fit-runtime read them."""
    out = []
    for r in bench:
        if r.get("precision") == "half" and r.get("graph_ms"):
            k = kernels.get((r["model"], r["layout"], r["batch"], "half"))
            out.append({"model": r["model"], "runtime": "eager", "batch": r["batch"], "latency_ms": r["graph_ms"],
                        "status": "ok", **({"kernels": k["kernels"]} if k else {})})
    return out


def class_time_rows(profiles):
    """pair/class_times.py's per-class sums of each profiled `.half()` forward."""
    out = []
    for p in profiles:
        us, count = collections.defaultdict(float), collections.Counter()
        for name, t in p["list"]:
            c = kernel_class(name)
            us[c] += t
            count[c] += 1
        out += [{"model": p["model"], "runtime": "eager", "batch": p["batch"], "class": c,
                 "measured_us": round(us[c], 2), "kernels": count[c]} for c in sorted(us)]
    return out


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


# --- held-out networks ------------------------------------------------------------------------------------

def setting_errors(tilewave, gpu, host, rows, paths=None):
    """{(scope, setting): [predicted / measured]} of timm-harness rows: `.half()` rows give the CUDA-graph time
    (runtime set and network terms); AMP rows their CUDA-graph time (layout and precision sets), their forward
    call at batch 1 and 16 (host) and their whole step in a plain loop. paths: {model: ONNX file} where a model
    is not in onnx_models/runtime/."""
    jobs = []
    for r in rows:
        half = r.get("precision") == "half"
        if r.get("graph_ms"):
            jobs.append((r, "graph", not half))
        if not half and r.get("step_ms"):
            jobs.append((r, "loop", True))

    def one(job):
        r, launch, amp = job
        return predict(tilewave, r["model"], r["layout"], r["batch"], launch, amp=amp, gpu=gpu, host=host,
                       path=(paths or {}).get(r["model"]))

    out = collections.defaultdict(list)
    for (r, launch, amp), pred in zip(jobs, pmap(one, jobs)):
        layout = "NCHW" if r["layout"] == "nchw" else "channels_last"
        if launch == "graph" and not amp:
            out[("runtime set", ".half() channels_last, CUDA graph")].append(
                pred["total"]["time_us"] / (1e3 * r["graph_ms"]))
        elif launch == "graph":
            out[("layout and precision sets", "AMP %s, CUDA graph" % layout)].append(
                pred["total"]["time_us"] / (1e3 * r["graph_ms"]))
        else:
            out[("whole step", "AMP %s, plain loop" % layout)].append(pred["total"]["time_us"] / (1e3 * r["step_ms"]))
            if r["batch"] in (1, 16) and r.get("host_ms"):
                out[("host", "forward call, AMP %s, batch 1 and 16" % layout)].append(
                    pred["schedule"]["host_busy_us"] / (1e3 * r["host_ms"]))
    return out


def median_error(ratios):
    return statistics.median(abs(x - 1) for x in ratios)


def heldout_table(tilewave, files, rows):
    """Markdown lines: per scope and setting, the median |error| (and median ratio) of each (label, gpu, host)."""
    errs = [(label, setting_errors(tilewave, gpu, host, rows)) for label, gpu, host in files]
    keys = sorted({k for _, e in errs for k in e}, key=lambda k: (["runtime set", "layout and precision sets", "host",
                                                                    "whole step"].index(k[0]), k[1]))
    lines = ["| scope | setting | n | " + " | ".join("%s: median error (ratio)" % label for label, _ in errs) + " |",
             "| --- | --- | ---: |" + " ---: |" * len(errs)]
    for k in keys:
        n = len(errs[0][1].get(k, []))
        cells = ["%.1f%% (%.2f)" % (100 * median_error(e[k]), statistics.median(e[k])) if e.get(k) else "–"
                 for _, e in errs]
        lines.append("| %s | %s | %d | %s |" % (k[0], k[1], n, " | ".join(cells)))
    return lines


# --- the stages --------------------------------------------------------------------------------------------

def kernel_paths(args, profiles, fit_fam, family_of, start, path, report):
    """Stage 4: the eager set's kernel-path terms fitted on the fit families' profiled forwards (every
    harness configuration), written as `path` from `start`; each fit's report lines go to `report`."""
    split_of = {m: "fit" if f in fit_fam else "held_out" for m, f in family_of.items()}
    rows = [p for p in profiles if split_of.get(p["model"]) == "fit"]
    log("4/6 kernel paths: fit/strided_eltwise.py, fit/row_moments.py, fit/softmax_rows.py, fit/narrow_convs.py, "
        "fit/layer_norm_rows.py and fit/special_functions.py on %d profiled forwards of the fit families" % len(rows))
    gpu = json.load(open(start))
    eager = gpu["runtime_params"]["eager"]
    lines = []
    for fit, what in ((strided_eltwise.fit, "elementwise kernel pairs (strided and vectorised paths)"),
                      (row_moments.fit, "GroupNorm moments kernels"),
                      (softmax_rows.fit, "short-row softmax kernels (softmax_warp_forward)"),
                      (narrow_convs.fit, "narrow-channel convolution kernels (implicit GEMMs without vector loads)"),
                      (layer_norm_rows.fit, "fp32 LayerNorm kernels (vectorized_layer_norm_kernel)"),
                      (special_functions.fit, "elementwise kernels with special functions (GELU's erf, SiLU's sigmoid)")):
        try:
            values = fit(args.tilewave, rows, start, split_of, out=lines.append, tables=False,
                         source=portable(args.run_dir))
        except corpus_fit.NoPairs as e:
            print("    %s; they keep the start file's values" % e)
            continue
        eager["params"].update(values)
        eager.setdefault("fitted_on", {})[", ".join(sorted(values))] = "the fit families' %s" % what
        print("    %s: %s" % (what, json.dumps(values, sort_keys=True)))
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")
    args.tw_module.write_gpu(gpu, path)
    return path


def fit_all(args, work):
    tw = args.tilewave
    log("reading %s" % portable(args.run_dir))
    bench = read_rows(args.run_dir, "bench_median")
    profiles = read_rows(args.run_dir, "kernels")
    kernels = {(p["model"], p["layout"], p["batch"], p.get("precision", "amp_fp16")): p for p in profiles}
    micro_path = os.path.join(args.run_dir, "host_micro.jsonl")
    if not os.path.lexists(micro_path):
        raise StageError("%s: no host_micro.jsonl (is it a calibrate/measure/run.py folder?)" % args.run_dir)
    regular_file(micro_path)
    micro = harness_host.micro_costs(micro_path)  # read before any stage runs: a bad file costs no fit
    layers = read_rows(args.run_dir, "measured")
    layers_path = os.path.join(work, "measured.jsonl")
    write_jsonl(layers_path, layers)
    fit_fam, held_fam = split_families(bench, args.holdout, args.seed)
    fit_rows = [r for r in bench if r.get("family", r["model"]) in fit_fam]
    held_rows = [r for r in bench if r.get("family", r["model"]) in held_fam]
    log("%d layers, %d timm-harness settings of %d networks, %d profiled forwards; families held out (seed %d): %s"
        % (len(layers), len(bench), len({r["model"] for r in bench}), len(profiles), args.seed,
           ", ".join(sorted(held_fam))))
    stamp = {"command": "python3 -m calibrate.fit.fit_all " + " ".join(args.argv), "data": portable(args.run_dir),
             "commit": commit(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "families_held_out": sorted(held_fam)}

    log("1/6 layers: tilewave calibrate fit, fp16, 20%% of the layers held out (seed %d)" % args.seed)
    step1 = os.path.join(work, "1_layers.json")
    out = run_tool([tw, "calibrate", "fit", layers_path, "--gpu", args.gpu, "--dtype", "fp16", "--seed",
                    str(args.seed), "-o", step1], "layers",
                   os.path.join(work, "1_layers.txt"))
    held = out[out.index("held-out layers, after the fit:"):] if "held-out layers, after the fit:" in out else out[-6:]
    for line in held:
        print("    " + line)

    runs = half_runs(fit_rows, kernels)
    runs_path = os.path.join(work, "fit_runs.jsonl")
    write_jsonl(runs_path, runs)
    log("2/6 network terms: tilewave calibrate fit-networks on %d `.half()` CUDA-graph forwards of the fit families"
        % len(runs))
    step2 = os.path.join(work, "2_networks.json")
    out = run_tool([tw, "calibrate", "fit-networks", runs_path, "--gpu", step1, "--runtime", "eager", "--holdout", "0",
                    "--models-dir", MODELS_DIR, "--seed", str(args.seed), "-o", step2], "network terms",
                   os.path.join(work, "2_networks.txt"))
    for line in out[-4:]:
        print("    " + line)

    classes_path = os.path.join(work, "class_times.jsonl")
    fit_models = {r["model"] for r in fit_rows}
    write_jsonl(classes_path, class_time_rows([p for p in profiles
                                               if p.get("precision") == "half" and p["model"] in fit_models]))
    log("3/6 runtime set: tilewave calibrate fit-runtime --runtime eager (class times, then the launch gap)")
    step3 = os.path.join(work, "3_runtime.json")
    out = run_tool([tw, "calibrate", "fit-runtime", runs_path, "--gpu", step2, "--runtime", "eager", "--class-times",
                    classes_path, "--params", "launch_gap_us", "--models-dir", MODELS_DIR, "-o", step3], "runtime set",
                   os.path.join(work, "3_runtime.txt"))
    for line in out:
        if "median |error|" in line or "network stage" in line:
            print("    " + line.strip())

    step4 = kernel_paths(args, profiles, fit_fam, {r["model"]: r.get("family", r["model"]) for r in bench}, step3,
                         os.path.join(work, "4_kernel_paths.json"), os.path.join(work, "4_kernel_paths.txt"))

    amp = [(r, kernels.get((r["model"], r["layout"], r["batch"], "amp_fp16"))) for r in fit_rows
           if r.get("precision") == "amp_fp16"]
    amp = [(r, k) for r, k in amp if k]
    log("5/6 layout and precision sets: fit/harness_passes.py's fit on %d AMP forwards" % len(amp))
    sets = harness_passes.fit_sets(tw, amp, step4, pmap, out=lambda line: None)
    gpu = json.load(open(step4))
    for key, params in sets.items():
        gpu["runtime_params"][key] = {"params": params, "fitted_on": dict(stamp, scope="layout and precision set",
                                                                          harness="timm benchmark.py, AMP")}
        print("    %s: %s" % (key, json.dumps(params, sort_keys=True)))

    log("6/6 host: fit/harness_host.py's fit on the single ops and the fit families' forward calls")
    _, host_fit_runs = harness_host.host_runs(tw, fit_rows, pmap)
    if len(host_fit_runs) < 4:
        raise StageError("host: %d forward calls at batch 1 and 16 in the fit families, at least 4 needed" % len(host_fit_runs))
    scale, host_params, errs = harness_host.fit(micro, host_fit_runs, param_table(tw))
    print("    scale of the single ops inside networks %.3f; fitted forward calls: median error %.1f%%"
          % (scale, 100 * statistics.median(errs)))

    # Provenance: the C++ fits name this command's temporary files; say what they were made from instead.
    gpu["runtime_params"]["eager"]["fitted_on"].update(stamp, scope="runtime set", data=stamp["data"],
                                                       class_times="kernels of the `.half()` forwards, by class")
    for key in ("calibration", "network_calibration"):
        if isinstance(gpu.get(key), dict):
            gpu[key]["data"] = stamp["data"]
            if isinstance(gpu[key].get("kernel_stage"), dict):
                gpu[key]["kernel_stage"].pop("data", None)
            gpu[key].update({k: stamp[k] for k in ("command", "commit")})
    gpu["fit_all"] = dict(stamp, scopes={"layers": "calibration", "network terms": "network_calibration",
                                         "runtime set": "runtime_params.eager",
                                         "layout and precision sets": sorted(sets), "host": portable(args.host_out)})
    host = {"name": "the host of %s (fitted)" % stamp["data"], "trust": "calibrated", "params": host_params,
            "sources": {"params": "fitted by %s on %s, commit %s" % (stamp["command"], stamp["data"], stamp["commit"]),
                        "spread": "one machine: no machine_spread"}}
    new_gpu = os.path.join(work, "new_gpu.json")
    new_host = os.path.join(work, "new_host.json")
    args.tw_module.write_gpu(gpu, new_gpu)
    args.tw_module.write_host(host, new_host)

    log("held-out families (%s): %d settings of %d networks" % (", ".join(sorted(held_fam)), len(held_rows),
                                                                len({r["model"] for r in held_rows})))
    files = [("start file", args.gpu, "builtin"), ("fitted", new_gpu, new_host)]
    if args.compare:
        files.append(("compared: %s" % os.path.basename(args.compare[0]), *args.compare))
    for line in heldout_table(tw, files, held_rows):
        print(line)
    # Both outputs appear together or not at all.
    args.tw_module.write_gpu(gpu, args.output)
    args.tw_module.write_host(host, args.host_out)
    log("wrote %s and %s" % (args.output, args.host_out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", help="a calibrate/measure/run.py folder")
    ap.add_argument("--gpu", required=True, help="the GPU file to start from (datasheet facts are enough)")
    ap.add_argument("-o", "--output", required=True, help="the GPU file to write")
    ap.add_argument("--host-out", required=True, help="the host file to write")
    ap.add_argument("--tilewave", default=os.path.join("build", "analyzer", "tilewave"))
    ap.add_argument("--holdout", type=float, default=0.34, help="fraction of the families held out (default 0.34)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compare", default="", help="GPU.json[,HOST.json]: also in the held-out table")
    ap.add_argument("--keep", default="", help="a new folder to keep each stage's files and reports in")
    args = ap.parse_args()
    args.argv = [a if not os.path.isabs(a) else portable(a) for a in sys.argv[1:]]
    if not 0 <= args.holdout < 1:
        ap.error("--holdout must be in [0, 1)")
    if not os.path.isdir(args.run_dir):
        ap.error("%s: not a folder" % args.run_dir)
    if not os.path.isfile(args.tilewave) or not os.access(args.tilewave, os.X_OK):
        ap.error("%s: not an executable tilewave (build it, or pass --tilewave)" % args.tilewave)
    if args.compare:
        parts = args.compare.split(",")
        args.compare = (parts[0], parts[1] if len(parts) > 1 else "h200-vm")
    try:
        args.tw_module = module.tilewave_module(args.tilewave)
    except ImportError as e:
        print("fit_all.py: %s" % e, file=sys.stderr)
        return 1
    if args.keep:
        try:
            os.mkdir(args.keep)
        except OSError as e:
            ap.error("--keep %s: %s (it must be a new folder)" % (args.keep, e.strerror))
    work = args.keep or tempfile.mkdtemp(prefix="tilewave-fit-all-")
    try:
        fit_all(args, work)
    except (InputError, RuntimeError, ValueError, KeyError, OSError) as e:
        msg = str(e).replace(work + os.sep, "")
        print("fit_all.py: %s: %s" % (args.run_dir, msg), file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
