"""What every doc_figures module shares: the commands' outputs, each run once
(`Runs`), the fitted layer set, and the figure formats (calibrate/validate/doc_figures.py)."""
import functools
import json
import math
import os
import subprocess

from calibrate import module
from calibrate.jsonl import read_all

DATA = "calibrate/data/h200"


@functools.lru_cache(maxsize=None)
def jsonl(path):
    """The JSON lines of a file (gzip by its name), header lines included; read once per run."""
    return read_all(path)


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

    def text(self, *args):
        """What `tilewave ARGS` prints, run once."""
        if args not in self.cache:
            self.cache[args] = subprocess.run([self.tw, *args], check=True, capture_output=True, text=True).stdout
        return self.cache[args]

    def param_table(self, file="gpu"):
        """{name: (default, min, max)} of the GPU file's (or the host file's) parameters, as the
        in-process module's params() gives them from the one C++ definition (`tilewave params`)."""
        return {p["name"]: (p["default"], p["min"], p["max"])
                for p in module.tilewave_module(self.tw).params() if p["file"] == file}

    def analyze(self, model, *flags):
        """`tilewave analyze onnx_models/MODEL.onnx FLAGS --format json`."""
        return json.loads(self.text("analyze", f"onnx_models/{model}.onnx", *flags, "--format", "json"))

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


FENCE = "```"
