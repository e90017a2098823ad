"""What a profiled kernel's name says it is, by the rules of
analyzer/data/kernel_names.json: the one file of kernel-name patterns that
tilewave's C++ (`check`) and these scripts share. tests/python's
test_kernel_names.py holds this reader and the C++ one to the same answers.

    from calibrate.pair.kernel_names import kernel_class
    kernel_class("sm80_xmma_fprop_implicit_gemm_...", "runtime_fit")  # "library"
"""
import collections
import functools
import glob
import gzip
import json
import os
import sys

from calibrate import jsonl

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PATH = os.path.join(ROOT, "analyzer", "data", "kernel_names.json")


@functools.lru_cache(maxsize=None)
def vocabularies():
    """{vocabulary: (rules, otherwise)} of analyzer/data/kernel_names.json."""
    data = json.load(open(PATH))["vocabularies"]
    return {name: (v["rules"], v["otherwise"], v.get("case", "sensitive")) for name, v in data.items()}


def _matches(rule, name, lowered, default_case):
    n = lowered if rule.get("case", default_case) == "insensitive" else name
    fold = (lambda s: s.lower()) if n is lowered else (lambda s: s)
    if "prefix" in rule and not any(n.startswith(fold(p)) for p in rule["prefix"]):
        return False
    if "any" in rule and not any(fold(s) in n for s in rule["any"]):
        return False
    if not all(fold(s) in n for s in rule.get("all", ())):
        return False
    return not any(fold(s) in n for s in rule.get("none", ()))


@functools.lru_cache(maxsize=65536)
def kernel_class(name, vocabulary):
    """The class of kernel `name` in `vocabulary` (check, runtime_fit, harness)."""
    rules, otherwise, case = vocabularies()[vocabulary]
    lowered = name.lower()
    for rule in rules:
        if _matches(rule, name, lowered, case):
            return rule["class"]
    return otherwise


def profiled_names(root=ROOT):
    """Every kernel name in the committed profiles (calibrate/data/**/*kernels*.jsonl[.gz]) and test traces."""
    names = set()
    for path in glob.glob(os.path.join(root, "calibrate", "data", "**", "*kernels*.jsonl*"), recursive=True):
        for row in jsonl.read(path):
            names.update(k[0] for k in row.get("list", ()) if isinstance(k, list) and k and isinstance(k[0], str))
    for path in glob.glob(os.path.join(root, "tests", "data", "traces", "*.json*")):
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
            names.update(e["name"] for e in json.load(f).get("traceEvents", ()) if e.get("cat") == "kernel")
    return sorted(names)


def main():
    """Prints how the committed profiles' kernel names fall into each vocabulary's classes."""
    names = profiled_names()
    print(f"{len(names):,} distinct kernel names in the committed profiles and test traces")
    for vocabulary in vocabularies():
        counts = collections.Counter(kernel_class(n, vocabulary) for n in names)
        print(f"{vocabulary}: " + ", ".join(f"{c} {n:,}" for c, n in counts.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
