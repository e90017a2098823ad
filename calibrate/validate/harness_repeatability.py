#!/usr/bin/env python3
"""How repeatable timm's harness is on the H200, and tilewave on `.half()`
models in a plain loop (docs/validation.md "timm's harness").

From calibrate/data/h200/timm_harness/repeat/ (10 networks, both layouts,
batch 1/16/256, AMP and `.half()`, every configuration timed twice, one whole
pass after the other):

  1. per (precision, layout, batch): the median and p90 of
     |pass 2 / pass 1 - 1| for the step time and the host time; the host
     time's spread across the batches of one network and layout; the signed
     pass-to-pass ratio, and the ratio to the same networks in fit_heldout/
     (measured on another machine of the same kind);
  2. `.half()` weights (`--no-amp`) in a plain loop: tilewave's step time
     against the first pass, median, p90 and ratio, as validate/harness.py
     reports AMP.

usage: python3 -m calibrate.validate.harness_repeatability build/analyzer/tilewave
"""
import statistics
import sys

from calibrate.pair.harness_runs import predict, rows

RUN = "calibrate/data/h200/timm_harness/repeat"
FIRST = "calibrate/data/h200/timm_harness/fit_heldout"   # another lease of the same kind


def q(values, f):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(f * (len(v) - 1))))]


def main():
    report(sys.argv[1])


def report(tilewave, print=print):
    """Both tables, each line through `print` (docs/validation.md reprints them)."""
    data = rows(RUN)
    by = {}
    for r in data:
        by[(r["precision"], r["model"], r["layout"], r["batch"], r["pass"])] = r
    print("1. pass 2 against pass 1 (10 networks each)")
    print("%-9s %-13s %5s %16s %16s" % ("precision", "layout", "batch", "step: median/p90", "host: median/p90"))
    cells = sorted({(k[0], k[2], k[3]) for k in by})
    for prec, layout, b in cells:
        step, host = [], []
        for (p, m, l, bb, i), r in by.items():
            if (p, l, bb, i) == (prec, layout, b, 0) and (p, m, l, bb, 1) in by:
                s = by[(p, m, l, bb, 1)]
                step.append(abs(s["step_ms"] / r["step_ms"] - 1))
                host.append(abs(s["host_ms"] / r["host_ms"] - 1))
        print("%-9s %-13s %5d %7.1f%%/%5.1f%% %7.1f%%/%5.1f%%" % (
            prec, layout, b, 100 * statistics.median(step), 100 * q(step, 0.9), 100 * statistics.median(host),
            100 * q(host, 0.9)))
    spread = []
    for prec in ("amp_fp16", "half"):
        for (p, m, l, bb, i), r in by.items():
            if p == prec and bb == 1 and i == 0:
                hs = [by[(p, m, l, b, k)]["host_ms"] for b in (1, 16, 256) for k in (0, 1) if (p, m, l, b, k) in by]
                spread.append(max(hs) / min(hs))
    print("host time of one network and layout across batches and passes, max/min: median %.2f, p90 %.2f (%d)" % (
        statistics.median(spread), q(spread, 0.9), len(spread)))
    small = [by[k[:4] + (1,)]["step_ms"] / r["step_ms"] for k, r in by.items() if k[4] == 0 and k[3] < 256
             and k[:4] + (1,) in by]
    print("pass 2 / pass 1 step at batch 1 and 16: median %.2f (%d)" % (statistics.median(small), len(small)))
    first = {(r["model"], r["layout"], r["batch"]): r for r in rows(FIRST)}
    other = [r["step_ms"] / first[(m, l, b)]["step_ms"] for (p, m, l, b, i), r in by.items()
             if p == "amp_fp16" and i == 0 and b < 256 and (m, l, b) in first]
    print("this call's pass 1 / the same AMP configuration in %s, batch 1 and 16: median %.2f (%d)" % (
        FIRST, statistics.median(other), len(other)))
    print("")
    print("2. .half() weights in a plain loop (--no-amp --no-graph), against pass 1")
    print("%-13s %5s %3s %7s %7s %6s" % ("layout", "batch", "n", "median", "p90", "ratio"))
    for layout in ("nchw", "channels_last"):
        for b in (1, 16, 256):
            err, ratio = [], []
            for (p, m, l, bb, i), r in by.items():
                if (p, l, bb, i) != ("half", layout, b, 0):
                    continue
                a = predict(tilewave, m, layout, b, "loop", amp=False)
                ratio.append(a["total"]["time_us"] / (r["step_ms"] * 1e3))
                err.append(abs(ratio[-1] - 1))
            print("%-13s %5d %3d %6.1f%% %6.1f%% %6.2f" % (layout, b, len(err), 100 * statistics.median(err),
                                                           100 * q(err, 0.9), statistics.median(ratio)))


if __name__ == "__main__":
    main()
