"""Reading what the measure step wrote, for the pair, fit and validate steps:
bench.jsonl / kernels.jsonl.gz files (comma-separated, gzip or not) and the
network sets of onnx_models/zoo.py, without importing torch."""
import gzip
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "onnx_models"))


def zoo_sets():
    """Set membership without importing torch (zoo.py imports it at the top)."""
    import types
    for mod in ("torch", "torchvision"):
        if mod not in sys.modules:
            stub = types.ModuleType(mod)
            stub.nn = types.SimpleNamespace(Module=object)
            sys.modules[mod] = stub
    import zoo
    fit, held, _, _ = zoo.runtime_split()
    return zoo, {"fit": set(fit), "heldout": set(held), "fresh": set(zoo.RUNTIME_FRESH),
                 "fresh2": set(zoo.RUNTIME_FRESH2)}


def read_jsonl(paths):
    rows = []
    for p in paths.split(","):
        opener = gzip.open if p.endswith(".gz") else open
        with opener(p, "rt") as f:
            rows += [json.loads(l) for l in f if l.strip()]
    return rows
