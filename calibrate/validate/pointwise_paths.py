#!/usr/bin/env python3
"""Which path cuDNN took for each pointwise convolution of a
calibrate/measure/pointwise_paths.py sweep: a grid per layout, batch and map
side, C down and K across (64 to 2048), `T` where the call ran through
layout transforms (nchwToNhwc / nhwcToNchw) and `.` where it did not, then
the share of NCHW cases that transformed and what their transforms took of
the call (docs/model.md "Layout pass").

usage: python3 -m calibrate.validate.pointwise_paths calibrate/data/h100/pointwise_paths
"""
import argparse
import collections
import os

from calibrate import jsonl
from calibrate.cli import InputError, print_lines
from calibrate.pair.kernel_names import kernel_class

FIELDS = ("layout", "batch", "side", "C", "K", "kernels")


def read_rows(folder):
    path = jsonl.in_folder(folder, "pointwise_paths.jsonl")
    try:
        rows = jsonl.read(path)
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as e:
        raise InputError("%s: not a readable JSON-lines file (%s)" % (path, e))
    out = []
    for i, r in enumerate(rows, 1):
        if isinstance(r, dict) and r.get("header"):
            continue
        if not (isinstance(r, dict) and all(f in r for f in FIELDS) and isinstance(r["kernels"], list)
                and all(isinstance(k, list) and len(k) == 2 and isinstance(k[0], str)
                        and isinstance(k[1], (int, float)) for k in r["kernels"])):
            raise InputError("%s: row %d is not a pointwise_paths row (%s)" % (path, i, ", ".join(FIELDS)))
        if not r.get("error"):
            out.append(r)
    if not out:
        raise InputError("%s: no case that ran" % path)
    return out


def lines_of(folder):
    rows = read_rows(folder)
    grid = collections.defaultdict(dict)
    channels = sorted({r["C"] for r in rows} | {r["K"] for r in rows})
    transform_us = collections.Counter()
    for r in rows:
        moved = [us for name, us in r["kernels"] if kernel_class(name, "layout_transform") != "other"]
        grid[(r["layout"], r["batch"], r["side"])][(r["C"], r["K"])] = "T" if moved else "."
        if r["layout"] == "nchw":
            transform_us["cases"] += 1
            transform_us["moved"] += bool(moved)
            transform_us["moved_us"] += sum(moved)
            transform_us["call_us"] += sum(us for _, us in r["kernels"]) if moved else 0
    out = ["T: the call ran through layout transforms; rows C = %s, each row's K the same from left to right" % (
        ", ".join(map(str, channels))), ""]
    for (layout, batch, side), cells in sorted(grid.items()):
        out.append("%-13s b%-4d %3dx%-3d %s" % (layout, batch, side, side, " ".join(
            "".join(cells.get((c, k), "?") for k in channels) for c in channels)))
    if transform_us["cases"]:
        out.append("NCHW: %d of %d cases transformed; their transforms took %.0f%% of those calls' kernel time" % (
            transform_us["moved"], transform_us["cases"],
            100 * transform_us["moved_us"] / transform_us["call_us"] if transform_us["call_us"] else 0))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="a calibrate/measure/pointwise_paths.py output folder")
    a = ap.parse_args()
    return print_lines(os.path.basename(__file__), lambda: lines_of(a.folder))


if __name__ == "__main__":
    raise SystemExit(main())
