#!/usr/bin/env python3
"""SVG scatter of predicted vs measured kernel time (log-log), by op class.

Reads the JSONL that `tilewave layers MEASURED.jsonl --gpu ID` writes (each
line has measured_us and pred_us) and writes an SVG with the y = x line and
±25% bands. Stdlib only, so it runs wherever the repo builds.

usage: python3 -m calibrate.validate.plot_pred_vs_meas PREDICTED.jsonl OUT.svg [--title T] [--only-lines FILE]
  --only-lines: a file of 1-based line numbers (one per line) to plot, e.g. the held-out layers.
"""
import argparse
import json
import math

COLOURS = {"conv": "#1f77b4", "conv_depthwise": "#ff7f0e", "conv_grouped": "#9467bd", "gemm": "#2ca02c",
           "eltwise": "#d62728", "pool": "#8c564b", "reduce": "#e377c2", "softmax": "#7f7f7f", "copy": "#17becf",
           "conv_transpose": "#bcbd22"}


def op_class(obj):
    op = obj["op"]
    if op == "conv":
        g = obj.get("groups", 1)
        if g > 1 and g == obj["C"]:
            return "conv_depthwise"
        if g > 1:
            return "conv_grouped"
    return op


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("predicted")
    ap.add_argument("out")
    ap.add_argument("--title", default="predicted vs measured kernel time")
    ap.add_argument("--only-lines")
    args = ap.parse_args()
    keep = None
    if args.only_lines:
        keep = {int(x) for x in open(args.only_lines).read().split()}
    points = []
    with open(args.predicted) as f:
        for n, line in enumerate(f, 1):
            o = json.loads(line)
            if o.get("header") or o.get("status", "ok") != "ok" or "measured_us" not in o:
                continue
            if keep is not None and n not in keep:
                continue
            points.append((o["measured_us"], o["pred_us"], op_class(o)))
    lo = math.floor(math.log10(min(min(p[0], p[1]) for p in points)))
    hi = math.ceil(math.log10(max(max(p[0], p[1]) for p in points)))
    size, margin = 640, 70
    span = size - 2 * margin

    def xy(us_x, us_y):
        fx = (math.log10(us_x) - lo) / (hi - lo)
        fy = (math.log10(us_y) - lo) / (hi - lo)
        return margin + fx * span, size - margin - fy * span

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size + 170}" height="{size}" font-family="sans-serif" font-size="12">',
           f'<rect width="{size + 170}" height="{size}" fill="white"/>',
           f'<text x="{size / 2}" y="24" text-anchor="middle" font-size="15">{args.title}</text>']
    for d in range(lo, hi + 1):
        x, _ = xy(10 ** d, 10 ** lo)
        _, y = xy(10 ** lo, 10 ** d)
        out.append(f'<line x1="{x}" y1="{margin}" x2="{x}" y2="{size - margin}" stroke="#eee"/>')
        out.append(f'<line x1="{margin}" y1="{y}" x2="{size - margin}" y2="{y}" stroke="#eee"/>')
        out.append(f'<text x="{x}" y="{size - margin + 16}" text-anchor="middle">{10 ** d:g}</text>')
        out.append(f'<text x="{margin - 6}" y="{y + 4}" text-anchor="end">{10 ** d:g}</text>')
    for factor, style in ((1.0, 'stroke="black"'), (1.25, 'stroke="#999" stroke-dasharray="4 3"'),
                          (0.75, 'stroke="#999" stroke-dasharray="4 3"')):
        x1, y1 = xy(10 ** lo, 10 ** lo * factor)
        x2, y2 = xy(10 ** hi, 10 ** hi * factor)
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" {style}/>')
    for meas, pred, cls in points:
        x, y = xy(meas, pred)
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.2" fill="{COLOURS.get(cls, "black")}" fill-opacity="0.55"/>')
    out.append(f'<text x="{size / 2}" y="{size - 22}" text-anchor="middle">measured time (µs)</text>')
    out.append(f'<text x="18" y="{size / 2}" text-anchor="middle" transform="rotate(-90 18 {size / 2})">predicted time (µs)</text>')
    classes = sorted({p[2] for p in points})
    for i, cls in enumerate(classes):
        n = sum(1 for p in points if p[2] == cls)
        out.append(f'<circle cx="{size + 10}" cy="{margin + 18 * i}" r="5" fill="{COLOURS.get(cls, "black")}"/>')
        out.append(f'<text x="{size + 20}" y="{margin + 18 * i + 4}">{cls} ({n})</text>')
    out.append(f'<text x="{size + 10}" y="{margin + 18 * len(classes) + 14}">dashed: ±25%</text>')
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"{len(points)} points -> {args.out}")


if __name__ == "__main__":
    main()
