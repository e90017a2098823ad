#!/usr/bin/env python3
"""Validation against timm's harness on the H200 (issue 18; docs/validation.md
"timm's harness"): for every network timed by
calibrate/measure/timm_harness_bench.py, tilewave's prediction of the same
setting (eager, amp over fp32 weights, the layout, a plain loop) against the
measured step time, one table row per (set, layout, batch):

  median, p90   of |predicted - measured| / measured step time
  ratio         median of predicted / measured
  tau           Kendall tau of the predicted order against the measured one,
                beside FLOPs' tau
  host-bound    share of networks predicted host-bound, and measured (the
                forward call alone takes at least 80% of the step)
  GPU median    the same AMP forward replayed in a CUDA graph (graph_ms)
                against tilewave's --graph prediction: the GPU side alone
  kernels       share of networks whose predicted kernel count is within 10%
                of the profiled forward's

Sets: fit (the families the host fit saw), held-out (zoo.runtime_split()'s
held-out families), fresh (calibrate/data/h200/timm_harness/fresh/, measured
after the model was frozen).

Without --markdown it also lists each set's largest misses, and how far the
measured host time (host_ms) of one network and layout moves across batch
1, 16 and 256 (max/min, median and p90), which no single host time can follow.

usage: python3 -m calibrate.validate.harness build/analyzer/tilewave [--markdown]
"""
import statistics
import sys

from calibrate.pair.harness_runs import RUNS, kernel_lists, predict, rows, zoo_split
from calibrate.stats import kendall_tau


def pct(v):
    return "%.1f%%" % (100 * v)


def p90(values):
    """The 90th percentile, the nearest rank (as every table of this script gives it)."""
    v = sorted(values)
    return v[min(len(v) - 1, int(round(0.9 * (len(v) - 1))))]


def host_spread():
    """(median, p90, pairs) of max/min of the measured host time (the forward
    call alone, host_ms) across batch 1, 16 and 256 of one network and layout,
    over every call (fit_heldout and fresh): how far the host's own time moves
    where tilewave's host time is one number."""
    spread = []
    for run in RUNS:
        by = {}
        for r in rows(run):
            by.setdefault((r["model"], r["layout"]), {})[r["batch"]] = r["host_ms"]
        spread += [max(v.values()) / min(v.values()) for v in by.values() if len(v) == 3]
    return statistics.median(spread), p90(spread), len(spread)


HEAD = ["set", "layout", "batch", "n", "median", "p90", "ratio", "tau (FLOPs)", "host-bound pred/meas",
        "GPU median", "kernels ±10%"]
SET_ORDER = {"fit": 0, "held-out": 1, "fresh": 2, "other": 3}


def harness_groups(tilewave):
    """{(set, layout, batch): [one dict per network: measured and predicted step, GPU time, host-bound, kernels]}."""
    fit, held = zoo_split()
    groups = {}
    for run, set_name in ((RUNS[0], None), (RUNS[1], "fresh")):
        kernels = kernel_lists(run)
        for r in rows(run):
            s = set_name or ("fit" if r["model"] in fit else "held-out" if r["model"] in held else "other")
            loop = predict(tilewave, r["model"], r["layout"], r["batch"], "loop")
            graph = predict(tilewave, r["model"], r["layout"], r["batch"], "graph")
            k = kernels.get((r["model"], r["layout"], r["batch"]))
            groups.setdefault((s, r["layout"], r["batch"]), []).append({
                "model": r["model"], "measured": r["step_ms"] * 1e3, "pred": loop["total"]["time_us"],
                "flops": loop["total"]["flops"], "pred_host_bound": loop["schedule"]["host_bound"],
                "host_bound": r["host_ms"] >= 0.8 * r["step_ms"],
                "graph": r.get("graph_ms", 0) * 1e3, "pred_graph": graph["total"]["time_us"],
                "kernels": k["kernels"] if k else None, "pred_kernels": loop["total"]["kernels"]})
    return groups


def row_stats(g):
    """One group's step errors (median, p90), ratio and taus: the table's cells and the targets' numbers."""
    err = sorted(abs(x["pred"] - x["measured"]) / x["measured"] for x in g)
    measured = [x["measured"] for x in g]
    return {"median": statistics.median(err), "p90": p90(err),
            "ratio": statistics.median(x["pred"] / x["measured"] for x in g),
            "tau": kendall_tau([x["pred"] for x in g], measured),
            "tau_flops": kendall_tau([x["flops"] for x in g], measured)}


def row_cells(key, g):
    s = row_stats(g)
    hb = "%d%% / %d%%" % (100 * sum(x["pred_host_bound"] for x in g) / len(g),
                          100 * sum(x["host_bound"] for x in g) / len(g))
    gerr = [abs(x["pred_graph"] - x["graph"]) / x["graph"] for x in g if x["graph"] > 0]
    kk = [x for x in g if x["kernels"]]
    kmatch = sum(abs(x["pred_kernels"] - x["kernels"]) <= 0.1 * x["kernels"] for x in kk) / len(kk) if kk else 0
    return [key[0], key[1], str(key[2]), str(len(g)), pct(s["median"]), pct(s["p90"]), "%.2f" % s["ratio"],
            "%.2f (%.2f)" % (s["tau"], s["tau_flops"]), hb, pct(statistics.median(gerr)) if gerr else "-",
            "%d%%" % round(100 * kmatch)]


def markdown_lines(groups):
    """docs/validation.md's table: a row per set, layout and batch."""
    lines = ["| " + " | ".join(HEAD) + " |", "|" + " --- |" * len(HEAD)]
    for key in sorted(groups, key=lambda k: (SET_ORDER[k[0]], k[1], k[2])):
        lines.append("| " + " | ".join(row_cells(key, groups[key])) + " |")
    return lines


def main():
    tilewave = sys.argv[1]
    markdown = "--markdown" in sys.argv
    groups = harness_groups(tilewave)
    if markdown:
        print("\n".join(markdown_lines(groups)))
    else:
        print("%-9s %-13s %5s %3s %7s %7s %6s %14s %12s %10s %8s" % tuple(HEAD))
        for key in sorted(groups, key=lambda k: (SET_ORDER[k[0]], k[1], k[2])):
            print("%-9s %-13s %5s %3s %7s %7s %6s %14s %12s %10s %8s" % tuple(row_cells(key, groups[key])))
    if not markdown:
        print("\nlargest misses per set (predicted / measured - 1):")
        for name in ("fit", "held-out", "fresh"):
            misses = sorted(((x["pred"] / x["measured"] - 1, x["model"], key[1], key[2])
                             for key, g in groups.items() if key[0] == name for x in g), key=lambda t: -abs(t[0]))
            print("  %-9s " % name + ", ".join("%s %s b%d %+.0f%%" % (m, l, b, 100 * e) for e, m, l, b in misses[:8]))
        print("\nmeasured host time of one network and layout across batch 1, 16 and 256, max/min: "
              "median %.2f, p90 %.2f (%d networks x layouts, both calls)" % host_spread())


if __name__ == "__main__":
    main()
