"""Lets the GPU machine's scripts (run.py, timm_harness_bench.py, and corpus.py beside them)
run as paths (`python3 calibrate/measure/run.py`, as the calls' logs, run.json and
calibrate/data/h200/corpus/README.md name them) as well as modules
(`python3 -m calibrate.measure.run`).

Run as a path, python puts the script's own folder first on sys.path, where the package's
absolute imports (calibrate.*, onnx_models.*) are not found; that entry becomes the
checkout's root and the script runs again as its module."""
import os
import runpy
import sys


def run_as_module(script):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(script))))
    sys.path[0] = root
    name = "calibrate.measure." + os.path.splitext(os.path.basename(script))[0]
    runpy.run_module(name, run_name="__main__", alter_sys=True)
