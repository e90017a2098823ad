#!/usr/bin/env python3
"""Builds the layer set measured on a GPU for calibration.

Kernels of every bundled model at several batch sizes (`tilewave layers
--extract`), de-duplicated, each tagged with the models it occurs in (so a
fit can hold whole networks out), followed by the generated sweeps in
calibrate/measure/sweeps/. Stdlib only.

usage: python3 -m calibrate.measure.build_measure_set TILEWAVE_BINARY OUT.jsonl [--batches 1,16,128] [--dtype fp16]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

from calibrate import jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Fields that describe where a layer comes from or what a run measured, not
# the problem itself.
PROBLEM_KEYS_IGNORED = {"model", "node", "onnx_op", "model_batch", "sweep", "models", "extra_bytes", "measured_us",
                        "min_us", "spread", "algo", "status", "timing", "reason", "error", "math", "backend_us",
                        "legacy_us", "backend_note", "legacy_note", "backend_error", "legacy_error"}


def problem_key(obj):
    # Two lines measure the same kernel when their problem fields agree.
    return json.dumps({k: v for k, v in obj.items() if k not in PROBLEM_KEYS_IGNORED}, sort_keys=True)


def extract(tilewave, model, batch, dtype):
    out = subprocess.run([tilewave, "layers", "--extract", model, "--batch", str(batch), "--dtype", dtype,
                          "--runtime", "eager-folded"],
                         check=True, capture_output=True, text=True).stdout
    return jsonl.parse(out, "tilewave layers --extract")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tilewave")
    ap.add_argument("out")
    ap.add_argument("--batches", default="1,16,128")
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--no-sweeps", action="store_true")
    args = ap.parse_args()

    layers = {}
    models = sorted(glob.glob(os.path.join(ROOT, "onnx_models", "*.onnx")))
    for batch in [int(b) for b in args.batches.split(",")]:
        for model in models:
            for obj in extract(args.tilewave, model, batch, args.dtype):
                key = problem_key(obj)
                entry = layers.setdefault(key, {k: v for k, v in obj.items()
                                                if k not in ("model", "node", "model_batch")})
                entry.setdefault("models", [])
                tag = f"{obj['model']}@{batch}"
                if tag not in entry["models"]:
                    entry["models"].append(tag)
            print(f"\rbatch {batch}: {os.path.basename(model):32s} {len(layers)} unique kernels", end="",
                  file=sys.stderr)
    print(file=sys.stderr)
    if not args.no_sweeps:
        for path in sorted(glob.glob(os.path.join(ROOT, "calibrate", "measure", "sweeps", "*.jsonl"))):
            for obj in jsonl.read(path):
                layers.setdefault(problem_key(obj), obj)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        for obj in layers.values():
            f.write(json.dumps(obj, separators=(",", ":")) + "\n")
    os.replace(tmp, args.out)
    print(f"{len(layers)} layers -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
