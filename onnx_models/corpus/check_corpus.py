#!/usr/bin/env python3
"""Analyses every corpus model (manifest.jsonl) with tilewave at batch 1 and
16 under each runtime, and checks what issue 8 asks of each: exit 0 (so no
unmodelled compute node), and tilewave's FLOPs within 1% of the count
torch.utils.flop_counter recorded at export. Prints one line per failure and
a summary table; exits 1 if any check fails. Stdlib only.

usage: onnx_models/corpus/check_corpus.py [--tilewave build/analyzer/tilewave] [--runtimes eager,inductor,tensorrt]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# The dynamo and legacy exports travel packed (the tree the GPU machine gets
# is limited in size); ort/ and the fuzz seeds stay as files.
PACKED = os.path.join(HERE, "corpus.tar.xz")


def unpack(into):
    """The packed exports, unpacked under `into` (regular files with plain relative names only)."""
    with tarfile.open(PACKED, "r:xz") as t:
        for m in t.getmembers():
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/"):
                sys.exit(f"{PACKED}: unexpected member {m.name!r}")
        t.extractall(into)
    return into


def corpus_path(base, name):
    """A manifest file: in this folder if it is here, else in the unpacked copy."""
    here = os.path.join(HERE, name)
    return here if os.path.exists(here) else os.path.join(base, name)


# torch.utils.flop_counter has no formula for cuDNN's fused RNN kernels, so
# its count leaves recurrent layers out: no reference for those models.
def reference_gap(row):
    return row.get("family") == "sequencer"


# Differences understood and left in place (docs/validation.md "Real-world ONNX corpus"): reported,
# not failed. Anything else outside the tolerance fails.
KNOWN_FLOP_DIFFERENCES = {
    "edgenext_xx_small": "its positional encoding is a 1x1 conv over a constant grid; tilewave folds it as a "
                         "load-time constant (as TensorRT does), PyTorch runs it every forward",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tilewave", default=os.path.join(ROOT, "build", "analyzer", "tilewave"))
    ap.add_argument("--runtimes", default="eager,inductor,tensorrt")
    ap.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tilewave_corpus_") as tmp:
        return check(args, unpack(tmp))


def check(args, base):
    rows = [json.loads(line) for line in open(os.path.join(HERE, "manifest.jsonl"))]
    stats = collections.defaultdict(lambda: collections.Counter())
    worst = []
    known = set()
    failures = 0
    for r in rows:
        path = corpus_path(base, r["file"])
        for runtime in args.runtimes.split(","):
            for batch in (1, 16):
                key = (r["exporter"], runtime)
                stats[key]["runs"] += 1
                p = subprocess.run([args.tilewave, "analyze", path, "--gpu", "h200", "--batch", str(batch),
                                    "--runtime", runtime, "--format", "json"], capture_output=True, text=True)
                if p.returncode != 0:
                    failures += 1
                    stats[key]["errors"] += 1
                    print(f"FAIL {r['file']} {runtime} b{batch}: {p.stderr.strip().splitlines()[-1][:300]}")
                    continue
                j = json.loads(p.stdout)
                ref = r.get(f"flops_b{batch}")
                if ref is None or r.get("static_batch") and batch != 1 or reference_gap(r):
                    stats[key]["no reference"] += 1
                    continue
                err = j["total"]["flops"] / ref - 1 if ref else 0.0
                worst.append((abs(err), r["file"], runtime, batch, err))
                if abs(err) > args.tolerance and r["model"] in KNOWN_FLOP_DIFFERENCES:
                    stats[key]["flops off, known"] += 1
                    known.add((r["model"], f"{100 * err:+.2f}%", KNOWN_FLOP_DIFFERENCES[r["model"]]))
                elif abs(err) > args.tolerance:
                    failures += 1
                    stats[key]["flops off"] += 1
                    print(f"FLOPS {r['file']} {runtime} b{batch}: tilewave {j['total']['flops']:.4g}, "
                          f"flop_counter {ref:.4g} ({100 * err:+.2f}%)")
                else:
                    stats[key]["flops within"] += 1
    print()
    print("| exporter | runtime | runs | errors | FLOPs within 1% | FLOPs off | off, known | no reference |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (exporter, runtime), c in sorted(stats.items()):
        print(f"| {exporter} | {runtime} | {c['runs']} | {c['errors']} | {c['flops within']} | {c['flops off']} | "
              f"{c['flops off, known']} | {c['no reference']} |")
    for model, err, why in sorted(known):
        print(f"known: {model} {err}: {why}")
    inside = sorted(w for w in worst if w[1].split("/")[-1][:-5] not in KNOWN_FLOP_DIFFERENCES)
    if inside:
        w = inside[-1]
        print(f"largest FLOP difference outside the known ones: {100 * w[4]:+.3f}% ({w[1]}, {w[2]}, batch {w[3]})")
    print(f"{len(rows)} files, {failures} failed checks")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
