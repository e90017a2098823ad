#!/usr/bin/env python3
"""Which families moved between two prediction files of the same published
results (`tilewave calibrate from-benchmark ... --predictions FILE`, made by
two commits or two GPU files): per family, the median of predicted/measured
in each file and the summed change of |error|, largest first. This is how
docs/validation.md "Other GPUs" traced a change of its held-out rows to the
families that carried it.

usage: python3 -m calibrate.validate.prediction_shift BEFORE.jsonl AFTER.jsonl
    [--key before_us] [--subset held-out] [--kind cnn] [--source SUBSTRING] [--model SUBSTRING] [--top 12]
  --key: the prediction field (before_us: the file as given or carried;
         after_us: after the fit)
"""
import argparse
import statistics
import sys
from collections import defaultdict

from calibrate import jsonl


def rows_by_run(path, key, subset, kind, source, model=""):
    out = {}
    for r in jsonl.read(path):
        if subset != "all" and r.get("subset") != subset:
            continue
        if kind != "all" and r.get("kind") != kind:
            continue
        if source and source not in r.get("source", ""):
            continue
        if model and model not in r.get("model", ""):
            continue
        if not (r.get(key, 0) > 0 and r.get("measured_us", 0) > 0):
            continue
        out[(r["source"], r["model"], r["img_size"], r["batch"])] = r
    return out


def shift(before, after, key):
    """(overall, per-family rows): runs in both files only."""
    both = sorted(set(before) & set(after))
    fams = defaultdict(list)
    for run in both:
        b, a = before[run], after[run]
        rb, ra = b[key] / b["measured_us"], a[key] / a["measured_us"]
        fams[a["family"]].append((rb, ra, abs(ra - 1) - abs(rb - 1)))
    rows = []
    for fam, v in fams.items():
        rows.append((fam, len(v), statistics.median(x[0] for x in v), statistics.median(x[1] for x in v),
                     sum(x[2] for x in v)))
    rows.sort(key=lambda r: -r[4])
    err_b = [abs(before[r][key] / before[r]["measured_us"] - 1) for r in both]
    err_a = [abs(after[r][key] / after[r]["measured_us"] - 1) for r in both]
    overall = (len(both), statistics.median(err_b) if both else 0, statistics.median(err_a) if both else 0)
    return overall, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--key", default="before_us", choices=["before_us", "after_us"])
    ap.add_argument("--subset", default="held-out", choices=["fit", "held-out", "all"])
    ap.add_argument("--kind", default="cnn", choices=["cnn", "hybrid", "vit", "all"])
    ap.add_argument("--source", default="", help="only results files whose name holds this")
    ap.add_argument("--model", default="", help="only models whose name holds this (a variant across families)")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    if a.top < 0:
        ap.error("--top must be 0 or more")
    try:
        before = rows_by_run(a.before, a.key, a.subset, a.kind, a.source, a.model)
        after = rows_by_run(a.after, a.key, a.subset, a.kind, a.source, a.model)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"prediction_shift: {e}")
    (n, med_b, med_a), rows = shift(before, after, a.key)
    if not n:
        sys.exit("prediction_shift: no run is in both files under these filters")
    print(f"{n} runs in both ({a.subset}, {a.kind}): median |error| {100 * med_b:.1f}% -> {100 * med_a:.1f}%")
    print("| family | runs | pred/meas before | after | summed change of abs(error) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    shown = rows[:a.top] + ([("...", 0, 0, 0, 0)] if len(rows) > 2 * a.top else []) + \
        (rows[-a.top:] if len(rows) > 2 * a.top else rows[a.top:])
    for fam, k, rb, ra, d in shown:
        print("| ... | | | | |" if fam == "..." else f"| {fam} | {k} | {rb:.2f} | {ra:.2f} | {d:+.2f} |")


if __name__ == "__main__":
    main()
