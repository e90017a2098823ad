#!/usr/bin/env python3
"""Before timing: the PyTorch networks built from encodings have the
parameter counts tilewave gives their candidates (the same networks).
usage: python3 -m calibrate.validate.nas_check_params [N per space]"""
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
from onnx_models.spaces import space_models

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
bad = 0
for space in ("mobilenetv2", "regnet", "resnet"):
    rows = [json.loads(l) for l in open(os.path.join(ROOT, "calibrate/data/h200/nas/pred_%s_eager_b1.jsonl" % space))][1:]
    for r in rows[:n]:
        net = space_models.build(os.path.join(ROOT, "onnx_models/spaces/%s.json" % space), r["encoding"])
        got = sum(p.numel() for p in net.parameters())
        if got != r["params"]:
            bad += 1
            print("MISMATCH %s %s: torch %d, tilewave %d" % (space, r["encoding"], got, r["params"]))
print("%d of %d candidates differ" % (bad, 3 * n))
sys.exit(1 if bad else 0)
