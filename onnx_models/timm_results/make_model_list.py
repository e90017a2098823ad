#!/usr/bin/env python3
"""Write models.csv: the distinct (model, infer_img_size) pairs of timm's
published pt240 inference benchmarks, with a family and a kind for each.

Usage: python3 onnx_models/timm_results/make_model_list.py
           [--results DIR] [--out onnx_models/timm_results/models.csv]

Input: the five files benchmark-infer-amp-*-pt240-*.csv in DIR (default
../shared/timm-results beside the repository root): RTX 3090 nchw + nhwc,
RTX 4090 nchw + nhwc + dynamo. No other result file is read.

Columns written (rows sorted by model, then img_size; deterministic):
  model          timm model name as in the CSVs (no pretrained tag)
  img_size       infer_img_size (square input, 3 channels)
  family         family_of(model), the name rule below
  kind           kind_of(model, family): cnn | hybrid | vit, the rule below
  param_count_m  param_count from the CSVs (millions; the files agree)
  gmacs          infer_gmacs from the CSVs (per image; blank where missing)
  in_files       how many of the five files list this (model, img_size)

Family rule (family_of):
  1. drop a pretrained tag after '.', split the name on '_';
  2. take the first token; if it is a qualifier prefix (QUALIFIERS: tf,
     legacy, dm, nf, eca, gc, ese, wide, tiny, test) join it with the
     second token (tf_efficientnet_b0 -> tf + efficientnet);
  3. from each of those tokens strip trailing "digits + up to 2 letters"
     groups repeatedly (resnet50d -> resnet, dla102x2 -> dla,
     seresnext26ts -> seresnext, deit3 -> deit), except a version suffix
     'v' + digits (efficientnetv2, swinv2, mobilenetv3 stay) and except
     where less than 3 characters would be left (cs3se stays);
  4. a later token 'hybrid' appends '_hybrid' (mobilenetv4_hybrid_medium
     -> mobilenetv4_hybrid);
  5. a 'vit_' name with a ResNet stem token (r26, r50, r, resnet50d) is
     family vit_hybrid.
Kind rule (kind_of): family in HYBRID_FAMILIES (conv + attention or conv +
LSTM) -> hybrid; family in VIT_FAMILIES (transformers and MLP mixers) ->
vit; every other family -> cnn.
"""
import argparse
import csv
import glob
import os
import re
import sys

SOURCE_GLOB = "benchmark-infer-amp-*-pt240-*.csv"
EXPECTED_FILES = [
    "benchmark-infer-amp-nchw-pt240-cu124-rtx3090.csv",
    "benchmark-infer-amp-nhwc-pt240-cu124-rtx3090.csv",
    "benchmark-infer-amp-nchw-pt240-cu124-rtx4090.csv",
    "benchmark-infer-amp-nhwc-pt240-cu124-rtx4090.csv",
    "benchmark-infer-amp-nchw-pt240-cu124-rtx4090-dynamo.csv",
]

QUALIFIERS = {"tf", "legacy", "dm", "nf", "eca", "gc", "ese", "wide", "tiny", "test"}

# conv + attention (or conv + LSTM) families
HYBRID_FAMILIES = {
    "vit_hybrid", "levit", "efficientformer", "efficientformerv2", "mobilevit", "mobilevitv2",
    "edgenext", "fastvit", "efficientvit", "coatnet", "coatnext", "maxvit", "maxxvit",
    "maxxvitv2", "tiny_vit", "botnet", "sebotnet", "halonet", "sehalonet", "halo2botnet",
    "lamhalobotnet", "lambda", "haloregnetz", "eca_botnext", "eca_halonext", "focalnet",
    "gcvit", "visformer", "coat", "sequencer", "nextvit", "vitamin", "caformer",
    "mobilenetv4_hybrid",
}
# vision transformers and MLP mixers
VIT_FAMILIES = {
    "vit", "deit", "beit", "beitv2", "eva", "cait", "xcit", "swin", "swinv2", "pit",
    "crossvit", "convit", "twins", "pvt", "nest", "davit", "mvitv2", "tnt", "mixer",
    "resmlp", "gmlp", "gmixer", "flexivit", "samvit", "sam", "hiera", "hieradet", "volo",
    "test_vit",
}

_TRAIL = re.compile(r"\d+[a-z]{0,2}$")
_VERSION = re.compile(r"v\d+$")


def _strip_digits(tok):
    while True:
        if _VERSION.search(tok):
            return tok
        new = _TRAIL.sub("", tok)
        if new == tok or len(new) < 3:
            return tok
        tok = new


def family_of(model):
    base = model.split(".", 1)[0]
    toks = base.split("_")
    if toks[0] == "vit" and any(re.fullmatch(r"r\d*", t) or t.startswith("resnet") for t in toks[1:]):
        return "vit_hybrid"
    if toks[0] in QUALIFIERS and len(toks) > 1:
        fam = toks[0] + "_" + _strip_digits(toks[1])
    else:
        fam = _strip_digits(toks[0])
    if "hybrid" in toks[1:]:
        fam += "_hybrid"
    return fam


def kind_of(model, family):
    if family in HYBRID_FAMILIES:
        return "hybrid"
    if family in VIT_FAMILIES:
        return "vit"
    return "cnn"


def read_results(results_dir):
    files = sorted(glob.glob(os.path.join(results_dir, SOURCE_GLOB)))
    names = [os.path.basename(f) for f in files]
    if sorted(names) != sorted(EXPECTED_FILES):
        raise SystemExit("expected exactly these pt240 files in %s:\n  %s\nfound:\n  %s"
                         % (results_dir, "\n  ".join(EXPECTED_FILES), "\n  ".join(names)))
    rows = {}
    for f in files:
        with open(f, newline="") as fh:
            for r in csv.DictReader(fh):
                key = (r["model"].strip(), int(r["infer_img_size"]))
                rec = rows.setdefault(key, {"param_count_m": "", "gmacs": "", "in_files": 0})
                rec["in_files"] += 1
                for col, src in (("param_count_m", "param_count"), ("gmacs", "infer_gmacs")):
                    v = (r.get(src) or "").strip()
                    if v and not rec[col]:
                        rec[col] = v
    return rows, names


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--results", default=os.path.join(os.path.dirname(root), "shared", "timm-results"))
    ap.add_argument("--out", default=os.path.join(here, "models.csv"))
    args = ap.parse_args(argv)
    rows, names = read_results(args.results)
    with open(args.out, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["model", "img_size", "family", "kind", "param_count_m", "gmacs", "in_files"])
        for (model, size) in sorted(rows):
            fam = family_of(model)
            r = rows[(model, size)]
            w.writerow([model, size, fam, kind_of(model, fam), r["param_count_m"], r["gmacs"], r["in_files"]])
    kinds = {}
    for (model, _size) in rows:
        k = kind_of(model, family_of(model))
        kinds[k] = kinds.get(k, 0) + 1
    print("%d (model, img_size) rows, %d models, %d families from %d files; kinds %s -> %s"
          % (len(rows), len({m for m, _ in rows}), len({family_of(m) for m, _ in rows}), len(names),
             dict(sorted(kinds.items())), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
