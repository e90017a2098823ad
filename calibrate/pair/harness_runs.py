"""Shared by the timm-harness scripts (docs/validation.md "timm's harness";
pair/harness_kernel_classes.py, fit/harness_host.py, fit/harness_passes.py,
validate/harness.py, validate/harness_repeatability.py): the measured rows,
the fit/held-out split and tilewave's predictions."""
import json
import os
import subprocess

from calibrate import harness_flags, jsonl, module
from calibrate.cli import InputError

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RUNS = ["calibrate/data/h200/timm_harness/fit_heldout", "calibrate/data/h200/timm_harness/fresh"]


def zoo_split():
    """(fit networks, held-out networks) of onnx_models/zoo.py, by family, without importing torch."""
    src = open(os.path.join(ROOT, "onnx_models", "zoo.py")).read()
    start = src.index("RUNTIME_FAMILIES = {")
    families = eval(src[start + len("RUNTIME_FAMILIES = "):src.index("}", start) + 1])
    import random
    names = sorted(families)
    random.Random(7).shuffle(names)       # zoo.RUNTIME_SPLIT_SEED, zoo.runtime_split()
    held = set(names[:round(len(names) * 0.4)])
    fit = [m for f in sorted(families) if f not in held for m in families[f]]
    out = [m for f in sorted(held) for m in families[f]]
    return set(fit), set(out)


def rows(run):
    path = os.path.join(ROOT, run, "bench.jsonl.gz")
    if not os.path.exists(path):
        return []
    return [r for r in jsonl.read(path) if r.get("status") == "ok"]


def kernel_lists(run):
    path = os.path.join(ROOT, run, "kernels.jsonl.gz")
    if not os.path.exists(path):
        return {}
    return {(r["model"], r["layout"], r["batch"]): r for r in jsonl.read(path)}


def onnx_path(model):
    return os.path.join(ROOT, "onnx_models", "runtime", model.replace("/", "_") + ".onnx")


def base_gpu_dir(tmp):
    """A GPU folder in `tmp` whose h200.json has no layout and precision sets
    (runtime_params "<runtime> <layout> <amp|half>"): the base the fits start from."""
    src = os.path.join(ROOT, "gpu_models")
    g = json.load(open(os.path.join(src, "h200.json")))
    g["runtime_params"] = {k: v for k, v in g["runtime_params"].items() if " " not in k}
    with open(os.path.join(tmp, "h200.json"), "w") as f:
        json.dump(g, f)
    for sub in ("arch", "hosts"):
        os.symlink(os.path.join(src, sub), os.path.join(tmp, sub))
    return tmp


def predict(tilewave, model, layout, batch, launch="loop", amp=True, gpu="h200", host=None, path=None):
    """tilewave's analysis (`analyze --format json`'s document) for the harness setting: eager, fp16 (amp:
    over fp32 weights), the layout and launch, on `gpu` (an id or a GPU file) and `host` (a host id or
    file; None: the default host), in process through the module built beside the CLI `tilewave`.
    path: the model's ONNX file, if not onnx_models/runtime/'s."""
    tw = module.tilewave_module(tilewave)
    path = path or onnx_path(model)
    try:
        return tw.analyze(path, batch=batch, gpu=gpu, host=host, **harness_flags.timm(layout, amp, launch))
    except tw.InputError as e:
        raise InputError("%s: %s" % (os.path.relpath(path, ROOT) if path.startswith(ROOT) else path, e)) from None


def commit():
    """The checkout's commit, as the provenance of a written file names it (as tilewave's build_commit())."""
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True)
    if r.returncode != 0:
        return "unknown (not a git checkout)"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return r.stdout.strip() + (" with uncommitted changes" if dirty else "")


def param_table(tilewave):
    """{name: entry} of tilewave.params() (`tilewave params`), from the module built beside the CLI
    `tilewave`: the one definition of every GPU and host parameter (unit, bounds, default, scope,
    owner), which the fits read rather than restate."""
    return {t["name"]: t for t in module.tilewave_module(tilewave).params()}


def gpu_params(tilewave, gpu_file, runtime):
    """{parameter: value} that a GPU file gives `runtime`: `tilewave params`' defaults, under the file's base
    set, under its runtime set (GpuModel::for_runtime), with the file's DRAM bandwidth as `dram_bandwidth_gbs`."""
    table = param_table(tilewave).values()
    g = json.load(open(gpu_file))
    p = {t["name"]: t["default"] for t in table if t["file"] == "gpu"}
    p.update(g.get("params", {}))
    p.update(g.get("runtime_params", {}).get(runtime, {}).get("params", {}))
    p["dram_bandwidth_gbs"] = g["dram_bandwidth_gbs"]
    return p
