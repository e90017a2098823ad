#!/usr/bin/env python3
"""Merges the two export runs (README "Merging and packing") into OUT:
legacy/*.onnx (hard links), manifest.jsonl (one line per models.csv row, the
latest run's line, with "run"), failures.jsonl (the non-ok lines' failures of
that same run), versions.json (shared package versions, both runs' settings,
merged counts).

usage: python3 onnx_models/timm_results/merge_runs.py RUN1 RUN2 OUT
  RUN1: run 1's returned files, unpacked (manifest.jsonl, failures.jsonl, legacy/)
  RUN2: run 2's (manifest.jsonl, failures.jsonl, and its legacy/ under full/)
"""
import csv, json, os, shutil, sys

if len(sys.argv) != 4:
    sys.exit(__doc__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN1, RUN2, OUT = sys.argv[1:4]
RUNS = [(1, RUN1), (2, RUN2)]
FILES = {1: RUN1, 2: os.path.join(RUN2, "full")}
KIND_ORDER = ("cnn", "hybrid", "vit")


def jl(p):
    return [json.loads(l) for l in open(p) if l.strip()]


rows = list(csv.DictReader(open(os.path.join(ROOT, "onnx_models", "timm_results", "models.csv"))))
keys = [(r["model"], int(r["img_size"])) for r in rows]
man, fail, vers = {}, {}, []
for run, d in RUNS:
    m = {(r["model"], r["img_size"]): r for r in jl(os.path.join(d, "manifest.jsonl"))}
    f = {}
    for r in jl(os.path.join(d, "failures.jsonl")):
        f.setdefault((r["model"], r["img_size"]), []).append(r)
    for k, r in m.items():
        man[k] = dict(r, run=run)
        fail[k] = [dict(x, run=run) for x in f.get(k, [])]
    vers.append(dict(json.load(open(os.path.join(d, "versions.json"))), run=run))
assert sorted(man) == sorted(keys), (len(man), len(keys))

shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(os.path.join(OUT, "legacy"))
recs = [man[k] for k in sorted(man)]
for r in recs:
    if r["status"] == "ok":
        src = os.path.join(FILES[r["run"]], r["file"])
        assert os.path.getsize(src) == r["bytes"], src
        os.link(src, os.path.join(OUT, r["file"]))
    else:
        assert fail[(r["model"], r["img_size"])], r
    if r["status"] == "ok":
        assert not fail[(r["model"], r["img_size"])]
files = sorted(os.listdir(os.path.join(OUT, "legacy")))
assert len(files) == sum(r["status"] == "ok" for r in recs)

with open(os.path.join(OUT, "manifest.jsonl"), "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
with open(os.path.join(OUT, "failures.jsonl"), "w") as f:
    for k in sorted(fail):
        for r in fail[k]:
            f.write(json.dumps(r) + "\n")
counts, by_kind = {}, {k: 0 for k in KIND_ORDER}
for r in recs:
    counts[r["status"]] = counts.get(r["status"], 0) + 1
    if r["status"] == "ok":
        by_kind[r["kind"]] += 1
pk = ("torch", "timm", "onnx", "numpy", "protobuf", "python")
for p in pk:
    assert len({v.get(p) for v in vers}) == 1, p
merged = {p: vers[0][p] for p in pk}
merged.update(status_counts=counts, ok_by_kind=by_kind, files=len(files),
              runs=[{k: v for k, v in x.items() if k not in pk} for x in vers])
with open(os.path.join(OUT, "versions.json"), "w") as f:
    json.dump(merged, f, indent=1, sort_keys=True)
print(json.dumps(counts), json.dumps(by_kind), len(files),
      sum(r["bytes"] for r in recs if r["status"] == "ok"))
