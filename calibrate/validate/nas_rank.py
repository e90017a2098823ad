#!/usr/bin/env python3
"""How well tilewave ranks search-space candidates (issue 10; docs/nas.md
"Validation on the H200"): per space, runtime and batch, Kendall's tau of
predicted against measured latency, beside FLOPs' tau, and the median
latency error. Predictions were written (and committed) before the
measurement: calibrate/data/h200/nas/pred_<space>_<runtime>_b<batch>.jsonl,
by `tilewave nas onnx_models/spaces/<space>.json --samples 150 --seed 1
--batch B --runtime R --format json`. Also checks that each PyTorch network
has the parameter count tilewave gives its candidate (the same network).

usage: python3 calibrate/validate/nas_rank.py [--data calibrate/data/h200/nas]
"""
import argparse
import json
import os
import statistics

from compare_networks import kendall_tau  # tau-b, as the network validation computes it


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="calibrate/data/h200/nas")
    args = ap.parse_args()
    bench = [json.loads(l) for l in open(os.path.join(args.data, "bench.jsonl"))]
    header = bench[0]
    measured = {}
    params = {}
    for r in bench[1:]:
        if r.get("status") != "ok" or not r["model"].startswith("space/"):
            continue
        _, space, enc = r["model"].split("/", 2)
        measured[(space, r["runtime"], r["batch"], enc)] = r["latency_ms"] * 1e3
        params[(space, enc)] = r["params"]
    print("measured on %s, torch %s, %s" % (header.get("gpu"), header.get("torch"), header.get("date")))
    print("%-12s %-9s %5s %4s %9s %9s %12s %10s" % ("space", "runtime", "batch", "n", "tau pred", "tau FLOPs",
                                                    "median err", "params ok"))
    for space in ("mobilenetv2", "regnet", "resnet"):
        for runtime in ("eager", "inductor"):
            for batch in (1, 16, 128):
                path = os.path.join(args.data, "pred_%s_%s_b%d.jsonl" % (space, runtime, batch))
                rows = [json.loads(l) for l in open(path)][1:]
                pairs = [(r, measured[(space, runtime, batch, r["encoding"])]) for r in rows
                         if (space, runtime, batch, r["encoding"]) in measured]
                if len(pairs) < 3:
                    print("%-12s %-9s %5d %4d   (not measured)" % (space, runtime, batch, len(pairs)))
                    continue
                meas = [m for _, m in pairs]
                tau = kendall_tau([r["latency_us"] for r, _ in pairs], meas)
                tau_flops = kendall_tau([r["flops"] for r, _ in pairs], meas)
                err = statistics.median(abs(r["latency_us"] / m - 1) for r, m in pairs)
                same = sum(params.get((space, r["encoding"])) == r["params"] for r, _ in pairs)
                print("%-12s %-9s %5d %4d %9.3f %9.3f %11.1f%% %6d/%d" % (space, runtime, batch, len(pairs), tau,
                                                                         tau_flops, 100 * err, same, len(pairs)))


if __name__ == "__main__":
    main()
