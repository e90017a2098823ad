#!/usr/bin/env python3
"""Pick the deterministic subset of a full export_corpus.py output that is
kept in the repository (the full corpus is about 120 MB; the repo keeps < 40 MB).

Usage: python3 onnx_models/corpus/sample_for_repo.py FULL_DIR [DEST_DIR]
Without DEST_DIR it only prints the choice. With it, it copies the chosen
files into DEST_DIR/{legacy,dynamo,ort} and writes DEST_DIR/manifest.jsonl
(kept files) and DEST_DIR/manifest_all.jsonl (every produced file, with
"in_repo"). Rule, in this order, each model with all its files or none:
  1. every transformers model and every model with ORT variants;
  2. the smallest model (legacy+dynamo bytes) of each timm family;
  3. models the corpus brief named (NAMED below);
  4. then round-robin over families, smallest first;
greedily while the total stays under BUDGET bytes (4 KiB blocks).
"""
import collections
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_corpus as ec  # noqa: E402  (no torch needed)

BUDGET = 38.3 * 2**20 - 1_150_000      # leaves room for manifests, logs, README
NAMED = ["tf_efficientnet_b0", "tf_mobilenetv3_large_minimal_100", "efficientnet_b3_pruned",
         "vit_small_patch16_224", "vit_base_patch16_224", "deit_tiny_patch16_224",
         "deit_small_patch16_224", "swin_tiny_patch4_window7_224", "efficientformer_l1",
         "mobilevit_s", "levit_128s", "convit_tiny", "pit_ti_224", "crossvit_tiny_240"]


def main(src, dst=None):
    M = [json.loads(l) for l in open(os.path.join(src, "manifest.jsonl"))]
    by_model = collections.defaultdict(list)
    for m in M:
        by_model[m["model"]].append(m)
    size = {n: sum((m["bytes"] + 4095) // 4096 * 4096 for m in ms) for n, ms in by_model.items()}
    specials = set(ec.QUANTIZE) | set(ec.ORT_OPTIMIZE)
    must = [n for n in by_model if n.startswith("transformers:") or n in specials]
    fams = collections.defaultdict(list)
    famorder = []
    for name, fam, _ in ec.TIMM_MODELS:
        if fam not in famorder:
            famorder.append(fam)
        if name in by_model and name not in must:
            fams[fam].append(name)
    for f in fams:
        fams[f].sort(key=lambda n: (size[n], n))
    must_fams = {by_model[m][0]["family"] for m in must}
    order = list(must)
    order += [fams[f][0] for f in famorder if fams.get(f) and f not in must_fams]
    order += [n for n in NAMED if n in by_model and n not in order]
    r = 0
    while any(len(v) > r for v in fams.values()):
        for f in famorder:
            if len(fams.get(f, [])) > r and fams[f][r] not in order:
                order.append(fams[f][r])
        r += 1
    tot, kept = 0, []
    for n in order:
        if n in must or tot + size[n] <= BUDGET:
            kept.append(n)
            tot += size[n]
    print("%d of %d models, %.1f MiB" % (len(kept), len(by_model), tot / 2**20))
    print("\n".join(sorted(kept)))
    if dst:
        kept = set(kept)
        for d in ("legacy", "dynamo", "ort"):
            os.makedirs(os.path.join(dst, d), exist_ok=True)
        with open(os.path.join(dst, "manifest.jsonl"), "w") as f, \
                open(os.path.join(dst, "manifest_all.jsonl"), "w") as g:
            for m in M:
                g.write(json.dumps(dict(m, in_repo=m["model"] in kept)) + "\n")
                if m["model"] in kept:
                    shutil.copyfile(os.path.join(src, m["file"]), os.path.join(dst, m["file"]))
                    f.write(json.dumps(m) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(*sys.argv[1:3])
