#!/usr/bin/env python3
"""docs/validation.md "Other GPUs": tilewave against timm's published
inference benchmarks of GPUs the project does not own (the files in
../shared/timm-results/, torch 2.4; README there).

For each GPU with results (RTX 3090, RTX 4090) it runs `tilewave calibrate
from-benchmark` on all of that GPU's torch 2.4 files together (seed 1: half
of the families fit, the other half only judge), and prints, per results
file (runtime and layout) and model kind, on the held-out families: median
and p90 |error|, the median ratio, and Kendall tau of the per-image times
beside the tau of timm's MAC counts. Three rows per file:

- carried: the GPU file carried from the H200 alone, by the owner rules
  (no data of that GPU at all);
- leave-one-out (RTX 4090 only): carried from the fitted RTX 3090 and the
  H200, never shown a 4090 time;
- fitted: after from-benchmark.

The loops are issued by `--host builtin` (the host table's starting values):
the published results come from a machine no one here measured, and at
their batches (256 to 1024) the host does not bound a step.

About 8 to 15 minutes on 2 cores (two fits side by side).

usage: python3 -m calibrate.validate.other_gpus [--tilewave build/analyzer/tilewave]
    [--results ../shared/timm-results] [--models DIR] [--write]
  --models: the unpacked exports (default: onnx_models/timm_results/timm_results_onnx.tar.xz,
            unpacked into a temporary folder)
  --write:  also write gpu_models/rtx3090.json and rtx4090.json (fitted) and
            carry rtx5090 and rtx-pro-6000-maxq from them and the H200, and
            keep what it prints in calibrate/data/other_gpus/validate.md (the
            README's table reprints its carried row: doc_figures.py readme-other-gpus)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
from calibrate.stats import kendall_tau
from calibrate import jsonl, module

ARCHIVE = os.path.join(ROOT, "onnx_models", "timm_results", "timm_results_onnx.tar.xz")
REPORT = os.path.join(ROOT, "calibrate", "data", "other_gpus", "validate.md")
# What the kept GPU files' provenance names as their maker (tilewave's --made-by):
# the paths of this script's temporary folders name nothing a reader could follow.
MADE_BY = "python3 -m calibrate.validate.other_gpus --write"
FILES = {
    "rtx3090": ["benchmark-infer-amp-nchw-pt240-cu124-rtx3090.csv", "benchmark-infer-amp-nhwc-pt240-cu124-rtx3090.csv"],
    "rtx4090": ["benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv", "benchmark-infer-amp-nhwc-pt240-cu124-rtx4090.csv",
                "benchmark-infer-amp-nchw-pt240-cu124-rtx4090-dynamo.csv"],
}


class Tee:
    """sys.stdout that also goes to a file."""

    def __init__(self, path):
        self.out, self.file = sys.stdout, open(path, "w")

    def write(self, text):
        self.out.write(text)
        self.file.write(text)

    def flush(self):
        self.out.flush()
        self.file.flush()


def harness(source):
    runtime = "torch.compile" if "dynamo" in source else "eager"
    layout = "NCHW" if "-nchw-" in source else "channels_last"
    return f"{runtime} {layout}"


def run(cmd, log):
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed; see {log}:\n" + open(log).read()[-2000:])


def datasheet_only(tw, gpu, out_dir):
    """The GPU file's datasheet facts alone (no parameters, trust datasheet), so
    that every fit starts from the H200 carried by the owner rules, whatever
    the committed file holds now."""
    j = json.load(open(os.path.join(ROOT, "gpu_models", f"{gpu}.json")))
    for key in ("params", "runtime_params", "carried_over", "from_benchmark", "calibration", "network_calibration"):
        j.pop(key, None)
    j["trust"] = "datasheet"
    path = os.path.join(out_dir, f"{gpu}.datasheet.json")
    module.tilewave_module(tw).write_gpu(j, path)  # the one GPU-file writer
    return path


def from_benchmark(tw, gpu, results, models, out_dir, tag, extra=(), gpu_file=None):
    pred = os.path.join(out_dir, f"{tag}.predictions.jsonl")
    cmd = [tw, "calibrate", "from-benchmark", *[os.path.join(results, f) for f in FILES[gpu]], "--gpu",
           gpu_file or datasheet_only(tw, gpu, out_dir), "--models", models, "--seed", "1", "--host", "builtin", "--predictions", pred, *extra]
    run(cmd, os.path.join(out_dir, f"{tag}.log"))
    return jsonl.read(pred)


def stats(rows, key):
    err = [abs(r[key] / r["measured_us"] - 1) for r in rows]
    ratio = [r[key] / r["measured_us"] for r in rows]
    pred = [r[key] / r["batch"] for r in rows]
    meas = [r["measured_us"] / r["batch"] for r in rows]
    with_macs = [r for r in rows if r["gmacs"] > 0]
    tau_macs = kendall_tau([r["gmacs"] for r in with_macs], [r["measured_us"] / r["batch"] for r in with_macs])
    q = statistics.quantiles(err, n=10, method="inclusive") if len(err) > 1 else [err[0]] * 9
    return len(rows), statistics.median(err), q[8], statistics.median(ratio), kendall_tau(pred, meas), tau_macs


def table(title, sets):
    """sets: (gpu, how, rows, key); rows of held-out families only."""
    print(f"\n{title}\n")
    print("| GPU | GPU file | harness | kind | n | median | p90 | pred/meas | tau (MACs' tau) |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
    for gpu, how, rows, key in sets:
        for source in sorted({r["source"] for r in rows}):
            for kind in ("cnn", "hybrid", "vit", "all"):
                sel = [r for r in rows if r["source"] == source and r["subset"] == "held-out" and r[key] > 0 and
                       (kind == "all" or r["kind"] == kind)]
                if not sel:
                    continue
                n, med, p90, ratio, tau, tau_macs = stats(sel, key)
                print(f"| {gpu} | {how} | {harness(source)} | {kind} | {n} | {100 * med:.1f}% | {100 * p90:.1f}% | "
                      f"{ratio:.2f} | {tau:.2f} ({tau_macs:.2f}) |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tilewave", default=os.path.join(ROOT, "build", "analyzer", "tilewave"))
    ap.add_argument("--results", default=os.path.join(ROOT, "..", "shared", "timm-results"))
    ap.add_argument("--models", help="unpacked exports with their manifest.jsonl")
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    tw = os.path.abspath(a.tilewave)
    with tempfile.TemporaryDirectory(prefix="tilewave_other_gpus_") as tmp:
        models = a.models
        if not models:
            models = os.path.join(tmp, "models")
            with tarfile.open(ARCHIVE, "r:xz") as t:
                for m in t.getmembers():
                    if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/"):
                        sys.exit(f"{ARCHIVE}: unexpected member {m.name!r}")
                t.extractall(models)
        fitted = {g: os.path.join(tmp, f"{g}.json") for g in FILES}
        # Both GPUs fitted side by side; each run's "before" is its file carried from the H200 alone.
        with ThreadPoolExecutor(2) as ex:
            jobs = {g: ex.submit(from_benchmark, tw, g, a.results, models, tmp, g,
                                 ["-o", fitted[g], "--made-by", MADE_BY]) for g in FILES}
            rows = {g: j.result() for g, j in jobs.items()}
        # The RTX 4090 from the fitted RTX 3090 and the H200 alone.
        loo_file = os.path.join(tmp, "rtx4090_from_3090.json")
        run([tw, "calibrate", "carry", "--gpu", f"{fitted['rtx3090']},h200", "--to", "rtx4090", "-o", loo_file],
            os.path.join(tmp, "carry.log"))
        loo = from_benchmark(tw, "rtx4090", a.results, models, tmp, "rtx4090_loo", ["--no-fit"], gpu_file=loo_file)
        scales = {g: json.load(open(fitted[g]))["from_benchmark"]["scales"] for g in FILES}
        if a.write:
            sys.stdout = Tee(REPORT)
        print("Held-out families only (seed 1; the other half fitted). Fitted scales: " +
              "; ".join(f"{g} memory-rate x{s['memory_rate']:.2f}, main-loop x{s['main_loop']:.2f}"
                        for g, s in scales.items()))
        table("Carried from the H200 alone (no data of the GPU):",
              [(g, "carried (H200)", rows[g], "before_us") for g in FILES])
        table("Left out of every fit: the RTX 4090 carried from the fitted RTX 3090 and the H200:",
              [("rtx4090", "carried (RTX 3090 + H200)", loo, "before_us")])
        table("Fitted from the GPU's own published results (calibrate from-benchmark):",
              [(g, "fitted-from-benchmark", rows[g], "after_us") for g in FILES])
        if a.write:
            for g in FILES:
                shutil.copyfile(fitted[g], os.path.join(ROOT, "gpu_models", f"{g}.json"))
            for target in ("rtx5090", "rtx-pro-6000-maxq"):
                # carry reads the target's datasheet from the file it replaces, and refuses to write an input.
                carried = os.path.join(tmp, f"{target}.carried.json")
                run([tw, "calibrate", "carry", "--gpu", "rtx4090,rtx3090,h200", "--to", target, "-o", carried,
                     "--made-by", MADE_BY], os.path.join(tmp, f"carry_{target}.log"))
                shutil.copyfile(carried, os.path.join(ROOT, "gpu_models", f"{target}.json"))
            print("\nwrote gpu_models/rtx3090.json, rtx4090.json (fitted), rtx5090.json, rtx-pro-6000-maxq.json (carried)")
            sys.stdout.file.close()
            sys.stdout = sys.stdout.out


if __name__ == "__main__":
    main()
