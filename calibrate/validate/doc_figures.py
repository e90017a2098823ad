#!/usr/bin/env python3
"""Reprints the figures docs/calibration.md and the README quote from
`tilewave calibrate validate`, and checks the docs against them.

usage: calibrate/validate/doc_figures.py [--tilewave PATH] [NAME ...]
       calibrate/validate/doc_figures.py [--tilewave PATH] --check FILE ...

A figure in a doc sits between `<!-- doc_figures.py NAME -->` and
`<!-- /doc_figures.py -->`; the lines between are exactly what this script
prints for NAME. --check exits 1 naming each block that differs (ctest
`doc_figures`). Runs from the repository root, CPU only, in seconds.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

DATA = "calibrate/data/h200"


def fitted_layers(tmp):
    """The layer files `calibrate fit` uses (calibrate/reproduce_h200.sh step
    0): the runner's layers and grouped-width sweep without its pooling and
    row kernels, and pooling and LayerNorm as PyTorch runs them."""
    runner = os.path.join(tmp, "measured_runner.jsonl")
    with open(runner, "w") as out:
        for name in ("measured.jsonl", "grouped_measured.jsonl"):
            for line in open(os.path.join(DATA, name)):
                if '"op":"pool"' not in line and '"op":"softmax"' not in line:
                    out.write(line)
    return [runner, os.path.join(DATA, "framework_pytorch.jsonl")]


class Runs:
    """`tilewave calibrate validate ... --format json`, each run once."""

    def __init__(self, tw, tmp):
        self.tw, self.tmp, self.cache = tw, tmp, {}

    def stats(self, files, gpu="h200", dtype="fp16"):
        key = (tuple(files), gpu, dtype)
        if key not in self.cache:
            cmd = [self.tw, "calibrate", "validate", *files, "--gpu", gpu, "--dtype", dtype, "--format", "json"]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            self.cache[key] = {r["class"]: r for r in json.loads(out)["stats"]}
        return self.cache[key]


def pct(x):
    return f"{100 * x:.1f}%"


def bias(r):
    b = 100 * (math.exp(r["median_log_ratio"]) - 1)
    return f"{b:+.1f}%".replace("-", "\u2212")


CLASS_LABEL = {"softmax": "softmax (LayerNorm)"}


def heldout_fp16(runs):
    stats = runs.stats(fitted_layers(runs.tmp))
    lines = ["| op class | layers | median APE | p90 APE | within \u00b125% | Spearman | bias |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for cls, r in stats.items():
        cells = [CLASS_LABEL.get(cls, cls), str(r["n"]), pct(r["median_ape"]), pct(r["p90_ape"]),
                 pct(r["within_25"]), f"{r['spearman']:.3f}", bias(r)]
        if cls == "all":
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def heldout_datasheet(runs):
    s = runs.stats(fitted_layers(runs.tmp), gpu=os.path.join(DATA, "h200_datasheet.json"))
    return [f"With the starting (datasheet-default) parameters the same layers are off by a median "
            f"{pct(s['all']['median_ape'])} (conv {pct(s['conv']['median_ape'])})."]


def heldout_precisions(runs):
    lines = ["| precision | layers | median APE, all | conv | conv bias | gemm |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for dt in ("bf16", "tf32", "fp32", "int8"):
        s = runs.stats(fitted_layers(runs.tmp), dtype=dt)
        lines.append(f"| {dt} | {s['all']['n']} | {pct(s['all']['median_ape'])} | {pct(s['conv']['median_ape'])} | "
                     f"{bias(s['conv'])} | {pct(s['gemm']['median_ape'])} |")
    return lines


def runner_only(runs):
    s = runs.stats([os.path.join(DATA, "measured.jsonl")])
    return [f"`tilewave calibrate validate calibrate/data/h200/measured.jsonl --gpu h200` holds out "
            f"{s['all']['n']} layers of the runner's file alone, median {pct(s['all']['median_ape'])}, "
            f"and its pooling and row-kernel layers are off by a median {pct(s['pool']['median_ape'])} "
            f"(pool, bias {bias(s['pool'])}) and {pct(s['softmax']['median_ape'])} "
            f"(softmax, bias {bias(s['softmax'])})."]


def readme_layers(runs):
    s = runs.stats(fitted_layers(runs.tmp))
    return [f"On single layers ({s['all']['n']} held out) the median error is {pct(s['all']['median_ape'])}."]


FIGURES = {"heldout-fp16": heldout_fp16, "heldout-datasheet": heldout_datasheet,
           "heldout-precisions": heldout_precisions, "runner-only": runner_only, "readme-layers": readme_layers}
BLOCK = re.compile(r"^<!-- doc_figures\.py (\S+) -->\n(.*?)^<!-- /doc_figures\.py -->$", re.M | re.S)


def check(files, runs):
    bad = 0
    for path in files:
        text = open(path).read()
        blocks = BLOCK.findall(text)
        if not blocks:
            print(f"{path}: no doc_figures.py block")
            bad += 1
        for name, body in blocks:
            if name not in FIGURES:
                print(f"{path}: unknown figure '{name}'")
                bad += 1
                continue
            if "<!-- doc_figures.py" in body:
                print(f"{path}: figure '{name}' has no end line of its own (<!-- /doc_figures.py -->)")
                bad += 1
                continue
            want = FIGURES[name](runs)
            got = body.rstrip("\n").split("\n")
            if got != want:
                bad += 1
                print(f"{path}: figure '{name}' differs from what `calibrate validate` prints now:")
                for line in want:
                    print("  want: " + line)
                for line in got:
                    print("  doc:  " + line)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilewave", default="build/analyzer/tilewave")
    ap.add_argument("--check", action="store_true", help="compare the blocks of the given docs")
    ap.add_argument("names", nargs="*", help="figures to print (default: all), or docs with --check")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = Runs(a.tilewave, tmp)
        if a.check:
            return check(a.names, runs)
        for name in a.names or FIGURES:
            if name not in FIGURES:
                print(f"doc_figures.py: unknown figure '{name}'; known: {', '.join(FIGURES)}", file=sys.stderr)
                return 2
            print(f"<!-- doc_figures.py {name} -->")
            print("\n".join(FIGURES[name](runs)))
            print("<!-- /doc_figures.py -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
