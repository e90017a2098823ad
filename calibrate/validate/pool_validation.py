#!/usr/bin/env python3
"""Pooled figures over several network comparisons (compare_networks.py --json).

usage: python3 -m calibrate.validate.pool_validation ROWS.json [ROWS.json ...]
Prints, per batch: networks, median and 90th-percentile absolute error, and
Kendall tau of predicted and of FLOPs against measured latency.
"""
import json
import statistics
import sys

from calibrate.stats import kendall_tau


def pooled_lines(rows):
    """Per batch over all ROWS: networks, median and p90 absolute error, tau of predicted and of FLOPs."""
    lines = ["| batch | networks | median abs error | p90 abs error | Kendall tau, predicted | Kendall tau, FLOPs |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b in sorted({r["batch"] for r in rows}):
        rs = [r for r in rows if r["batch"] == b]
        err = sorted(abs(r["error"]) for r in rs)
        p90 = statistics.quantiles(err, n=10, method="inclusive")[-1] if len(err) > 1 else err[0]
        meas = [r["measured_us"] for r in rs]
        lines.append(f"| {b} | {len(rs)} | {100 * statistics.median(err):.1f}% | {100 * p90:.1f}% | "
                     f"{kendall_tau([r['predicted_us'] for r in rs], meas):.3f} | "
                     f"{kendall_tau([r['flops'] for r in rs], meas):.3f} |")
    return lines


def main():
    rows = []
    for path in sys.argv[1:]:
        data = json.load(open(path))
        rows += data["rows"] if isinstance(data, dict) else data
    print("\n".join(pooled_lines(rows)))


if __name__ == "__main__":
    main()
