#!/usr/bin/env python3
"""Reprints the figures the README and docs/ (calibration, report, validation, cli, nas, model)
quote from `tilewave` commands (and from the committed measured data), and
checks the docs against them.

usage: python3 -m calibrate.validate.doc_figures [--tilewave PATH] [NAME ...]
       python3 -m calibrate.validate.doc_figures [--tilewave PATH] --check [--figures all|short|long] FILE ...

A figure in a doc sits between `<!-- doc_figures.py NAME -->` and
`<!-- /doc_figures.py -->`; the lines between are exactly what this script
prints for NAME. --check exits 1 naming each block that differs (ctest
`doc_figures`, and `doc_figures_corpus` for the figures over the whole
measured corpus, labelled long: they take a minute and grow with the
corpus). Runs from the repository root, CPU only.
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

from calibrate.parallel import pmap
from calibrate.pair import harness_runs  # (calibrate/pair/harness_runs.py: the timm-harness bench rows and predictions)
from calibrate import harness_flags
from calibrate.stats import kendall_tau
from calibrate.validate import runtimes  # (calibrate/validate/runtimes.py: the network validation per runtime)
from calibrate.validate.figures_common import DATA, FENCE, Runs, bias, fitted_layers, pct
from calibrate.validate import figures_calibration, figures_model, figures_nas, figures_readme, figures_validation

CLASS_LABEL = {"softmax": "softmax (LayerNorm)"}


def heldout_fp16(runs):
    """docs/calibration.md: `calibrate validate` on the fitted layer set, fp16, per class."""
    stats = runs.stats(fitted_layers(runs.tmp))
    lines = ["| op class | layers | median APE | p90 APE | within \u00b125% | Spearman | bias |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for cls, r in stats.items():
        cells = [CLASS_LABEL.get(cls, cls), str(r["n"]), pct(r["median_ape"]), pct(r["p90_ape"]),
                 pct(r["within_25"]), f"{r['spearman']:.3f}", bias(r)]
        if cls == "all":
            cells = [f"**{c}**" for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def heldout_datasheet(runs):
    """docs/calibration.md: `calibrate validate` of the fitted layer set with the datasheet-default parameters."""
    s = runs.stats(fitted_layers(runs.tmp), gpu=os.path.join(DATA, "h200_datasheet.json"))
    return [f"With the starting (datasheet-default) parameters the same layers are off by a median "
            f"{pct(s['all']['median_ape'])} (conv {pct(s['conv']['median_ape'])})."]


def heldout_precisions(runs):
    """docs/calibration.md: `calibrate validate` of the fitted layer set per precision."""
    lines = ["| precision | layers | median APE, all | conv | conv bias | gemm |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for dt in ("bf16", "tf32", "fp32", "int8"):
        s = runs.stats(fitted_layers(runs.tmp), dtype=dt)
        lines.append(f"| {dt} | {s['all']['n']} | {pct(s['all']['median_ape'])} | {pct(s['conv']['median_ape'])} | "
                     f"{bias(s['conv'])} | {pct(s['gemm']['median_ape'])} |")
    return lines


def runner_only(runs):
    """docs/calibration.md: `calibrate validate calibrate/data/h200/measured.jsonl --gpu h200`."""
    s = runs.stats([os.path.join(DATA, "measured.jsonl")])
    return [f"`tilewave calibrate validate calibrate/data/h200/measured.jsonl --gpu h200` holds out "
            f"{s['all']['n']} layers of the runner's file alone, median {pct(s['all']['median_ape'])}, "
            f"and its pooling and row-kernel layers are off by a median {pct(s['pool']['median_ape'])} "
            f"(pool, bias {bias(s['pool'])}) and {pct(s['softmax']['median_ape'])} "
            f"(softmax, bias {bias(s['softmax'])})."]


def readme_layers(runs):
    """README.md: `calibrate validate` on the fitted layer set, all classes."""
    s = runs.stats(fitted_layers(runs.tmp))
    return [f"On single layers ({s['all']['n']} held out) the median error is {pct(s['all']['median_ape'])}."]


GRAPH = ("--gpu", "h200", "--batch", "16", *harness_flags.flags(harness_flags.CUDA_GRAPH))


def report_analyze_b1(runs):
    """docs/report.md: the summary `tilewave analyze onnx_models/resnet50.onnx --gpu h200 --batch 1` starts with."""
    out = runs.text("analyze", "onnx_models/resnet50.onnx", "--gpu", "h200", "--batch", "1")
    return [FENCE, *out.split("\n\n")[0].split("\n"), FENCE]


def report_schedule_b1(runs):
    """docs/report.md: the schedule line of `analyze onnx_models/resnet50.onnx --gpu h200 --batch 1`, and the step the fresh bench.jsonl.gz measured."""
    t = runs.analyze("resnet50", "--gpu", "h200", "--batch", "1")["total"]
    m = next(r for r in harness_runs.rows(harness_runs.RUNS[1]) if (r["model"], r["layout"], r["batch"]) == ("resnet50", "nchw", 1))
    return ["The schedule line says who sets the step: here the host, which issues ops",
            f"for {t['host_busy_us'] / 1e3:.1f} ms against {t['gpu_busy_us'] / 1e3:.2f} ms of GPU work "
            "(docs/model.md \"Schedule\"). On the",
            "H200, after the model was frozen, timm's harness measured this step at",
            f"{m['step_ms']:.2f} ms, and the same forward replayed in a CUDA graph at {m['graph_ms']:.2f} ms",
            "(calibrate/data/h200/timm_harness/fresh/bench.jsonl.gz)."]


def bound_kernels(a, bound):
    """(kernels, share of the step) of one bound, as `analyze`'s "kernels by bound" line."""
    ks = [k for k in a["layers"] if k.get("bound") == bound]
    return len(ks), sum(k["time_us"] for k in ks) / a["total"]["time_us"]


def report_splits(runs):
    """docs/report.md: ResNet-50's and EfficientNet-B0's splits, `analyze ... --batch 16 --layout nhwc --no-amp --graph`."""
    r, e = runs.analyze("resnet50", *GRAPH), runs.analyze("efficientnet_b0", *GRAPH)
    eop, rop = ({o["name"]: o for o in a["by_op"]} for a in (e, r))
    lat, rc = bound_kernels(e, "latency"), bound_kernels(r, "compute")
    dw = eop["Conv (depthwise)"]
    return [f"ResNet-50 uses {pct(r['total']['utilization'])} of the H200's fp16 peak at batch 16, "
            f"EfficientNet-B0 {pct(e['total']['utilization'])}. `tilewave analyze",
            "onnx_models/efficientnet_b0.onnx --batch 16 --layout nhwc --no-amp --graph`",
            "(and the same for `resnet50.onnx`) prints the splits behind the pages:",
            f"{lat[0]} of EfficientNet-B0's {e['total']['kernels']} kernels are latency-bound ({pct(lat[1])} of the step),",
            f"and its per-op summary puts its {dw['kernels']} depthwise convolutions at {pct(dw['step_share'])} of the",
            f"step at {pct(dw['utilization'])} utilization, beside {eop['bias']['kernels']} `bias` kernels, "
            f"{eop['Sigmoid']['kernels']} sigmoids of",
            f"squeeze-excitation and SiLU and {eop['bn_prep']['kernels']} `bn_prep` kernels (eager PyTorch's",
            f"BatchNorm passes); its loss split is {pct(e['total']['loss']['fixed'])} fixed per-kernel cost. ResNet-50",
            f"has {r['total']['kernels']} kernels; its {rc[0]} compute-bound kernels take {pct(rc[1])} of the step, and",
            f"its dense convolutions run at {pct(rop['Conv']['utilization'])} utilization."]


def report_findings(runs):
    """docs/report.md: the findings of `tilewave compare onnx_models/resnet50.onnx onnx_models/efficientnet_b0.onnx --gpu h200 --batch 16 --layout nhwc --no-amp --graph`."""
    out = runs.text("compare", "onnx_models/resnet50.onnx", "onnx_models/efficientnet_b0.onnx", "--gpu", "h200",
                    "--batch", "16", "--layout", "nhwc", "--no-amp", "--graph")
    return [FENCE, *out[out.index("Which is faster"):].rstrip("\n").split("\n"), FENCE]


def report_host_bound(runs):
    """docs/report.md: both networks in timm's harness, `tilewave analyze onnx_models/efficientnet_b0.onnx --gpu h200 --batch 16`."""
    e, r = (runs.analyze(m, "--gpu", "h200", "--batch", "16") for m in ("efficientnet_b0", "resnet50"))
    t, both = e["total"], "both steps are" if r["schedule"]["host_bound"] else "EfficientNet-B0's step is"
    assert e["schedule"]["host_bound"], "the sentence assumes EfficientNet-B0's step is host-bound"
    return ["In timm's harness (the default: a plain loop, NCHW,",
            f"autocast) {both} host-bound at batch 16, and the findings say so:",
            f"the host issues EfficientNet-B0's {t['kernels']} kernels in {t['host_busy_us'] / 1e3:.1f} ms against",
            f"{t['gpu_busy_us'] / 1e3:.1f} ms of GPU work."]


def report_compare_gpus(runs):
    """docs/report.md: `tilewave compare onnx_models/resnet50.onnx --gpu h200,a100,l4 --batch 16 --layout nhwc --no-amp --graph`."""
    out = runs.text("compare", "onnx_models/resnet50.onnx", "--gpu", "h200,a100,l4", "--batch", "16",
                    "--layout", "nhwc", "--no-amp", "--graph")
    return [FENCE, *out.rstrip("\n").split("\n"), FENCE]


TRACE_FLAGS = ("--layout", "nhwc", "--no-amp")
# The shipped torch.profiler traces (tests/data/traces/README.md): model, batch, runtime, trace file stem.
SHIPPED_TRACES = [("resnet18", 1, "eager", "resnet18_b1_eager_h200"),
                  ("efficientnet_b0", 1, "eager", "efficientnet_b0_b1_eager_h200"),
                  ("resnet50", 16, "eager", "resnet50_b16_eager_h200"),
                  ("resnet18", 16, "inductor", "resnet18_b16_inductor_h200"),
                  ("efficientnet_b0", 1, "inductor", "efficientnet_b0_b1_inductor_h200")]


def check_args(model, batch, runtime, stem):
    return ("check", f"onnx_models/runtime/{model}.onnx", "--batch", str(batch), "--runtime", runtime,
            "--trace", f"tests/data/traces/{stem}.profiler.json.gz", *TRACE_FLAGS)


def report_check_resnet18(runs):
    """docs/report.md: `tilewave check onnx_models/runtime/resnet18.onnx --trace tests/data/traces/resnet18_b1_eager_h200.profiler.json.gz --batch 1 --layout nhwc --no-amp --top 6`, abridged: two of the six furthest pairs, no closing note."""
    out = runs.text(*check_args("resnet18", 1, "eager", "resnet18_b1_eager_h200"), "--top", "6").rstrip("\n").split("\n")
    far = next(i for i, line in enumerate(out) if line.startswith("The 6 pairs furthest apart"))
    rest = next(i for i, line in enumerate(out) if i > far and not line.strip())
    closing = next(i for i, line in enumerate(out) if line.startswith("Pairs follow launch order"))
    return [FENCE, *out[:far + 6], "...", *out[rest + 1:closing - 1], FENCE]


def report_check_traces(runs):
    """docs/report.md: `tilewave check ... --format json` on each shipped trace (flags --layout nhwc --no-amp): shapes paired, total kernel time and the error per predicted kernel kind."""
    kinds = ("compute", "norm", "elementwise", "reduce", "pool")
    lines = ["| trace | convolutions and GEMMs paired by shape | total kernel time | "
             + " | ".join(kinds) + " |", "| --- | ---: | ---: | " + " | ".join("---:" for _ in kinds) + " |"]
    for model, batch, runtime, stem in SHIPPED_TRACES:
        c = json.loads(runs.text(*check_args(model, batch, runtime, stem), "--format", "json"))
        by_kind = {k["kind"]: k for k in c["by_kind"]}
        cells = [f"{100 * (by_kind[k]['predicted_us'] / by_kind[k]['measured_us'] - 1):+.0f}%"
                 if k in by_kind and by_kind[k]["measured_us"] > 0 else "–" for k in kinds]
        total = 100 * (c["predicted_kernel_us"] / c["measured_kernel_us"] - 1)
        lines.append(f"| {model}, batch {batch}, {runtime} | {c['shape_matched']} of {c['shape_compared']} | "
                     f"{total:+.1f}% | " + " | ".join(cells) + " |")
    return lines


def readme_harness(runs):
    """README.md: timm's harness on the fresh set, calibrate/validate/harness.py's median, p90 and tau per layout."""
    rows = harness_runs.rows(harness_runs.RUNS[1])
    preds = pmap(lambda r: harness_runs.predict(runs.tw, r["model"], r["layout"], r["batch"])["total"], rows)
    groups = {}
    for r, p in zip(rows, preds):
        groups.setdefault((r["layout"], r["batch"]), []).append((p["time_us"], r["step_ms"] * 1e3, p["flops"]))
    batches = sorted({b for _, b in groups})
    lines = [f"| layout | median error, batch {' / '.join(map(str, batches))} | p90 | Kendall tau (FLOPs' tau) |",
             "| --- | --- | --- | --- |"]
    for layout, label in (("nchw", "NCHW"), ("channels_last", "channels_last")):
        med, p90, tau, ftau = [], [], [], []
        for b in batches:
            g = groups[(layout, b)]
            err = sorted(abs(p - m) / m for p, m, _ in g)
            med.append(pct(statistics.median(err)))
            p90.append(pct(err[min(len(err) - 1, int(round(0.9 * (len(err) - 1))))]))
            tau.append(f"{kendall_tau([x[0] for x in g], [x[1] for x in g]):.2f}".replace("-", "\u2212"))
            ftau.append(f"{kendall_tau([x[2] for x in g], [x[1] for x in g]):.2f}".replace("-", "\u2212"))
        lines.append(f"| {label} | {' / '.join(med)} | {' / '.join(p90)} | {' / '.join(tau)} ({' / '.join(ftau)}) |")
    return lines

RT = "calibrate/data/h200/runtimes"
RT_RUNS = ("fit_heldout", "fit_heldout_remainder", "fresh", "fresh2")  # calibrate/reproduce_runtimes.sh step 3: fit and held-out, fresh, fresh2


def runtime_cells(lines):
    """{(runtime, set, batch): cells} of a runtimes.py summary table (printed now, or kept in a report file)."""
    out = {}
    for line in lines:
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 10 and c[2].isdigit():
            out[(c[0], c[1], int(c[2]))] = c
    return out


def readme_runtimes(runs):
    """README.md: calibrate/validate/runtimes.py on runs 7-10 now, and the one-shot tables the fresh sets got at each freeze."""
    if "runtimes" not in runs.cache:
        bench = ",".join(f"{RT}/{r}/bench.jsonl" for r in RT_RUNS)
        kern = ",".join(f"{RT}/{r}/kernels.jsonl.gz" for r in RT_RUNS)
        runs.cache["runtimes"] = runtime_cells(runtimes.evaluate(runs.tw, bench, kern)[2])
    now = runs.cache["runtimes"]
    first = runtime_cells(open(f"{RT}/report/networks_first_freeze.md"))
    second = runtime_cells(open(f"{RT}/report/fresh2_second_freeze.md").read().split("## Networks, the model before")[0].split("\n"))
    batches = (1, 16, 128)
    rows = [("eager", "heldout", now, "{n} held-out networks"), ("eager", "fresh", first, "{n} fresh, one-shot at the first freeze"),
            ("eager", "fresh2", second, "{n} fresh, one-shot at the second freeze"), ("inductor", "heldout", now, "{n} held-out"),
            ("inductor", "fresh", first, "{n} fresh, one-shot at the first freeze")]
    lines = ["| runtime | set | median error, batch 1 / 16 / 128 | p90 | Kendall tau (FLOPs' tau) | kernel count within 10% |",
             "| --- | --- | --- | --- | --- | --- |"]
    cells = {}
    for rt, which, src, label in rows:
        c = [src[(rt, which, b)] for b in batches]
        cells[(rt, which)] = c
        ns = sorted({int(x[3]) for x in c})
        kc = sorted({int(x[9].split("%")[0]) for x in c})
        n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}\u2013{ns[-1]}"
        k = f"{kc[0]}% of networks" if len(kc) == 1 else f"{kc[0]}\u2013{kc[-1]}%"
        j = lambda i: " / ".join(x[i] for x in c)
        lines.append(f"| {rt} | {label.format(n=n)} | {j(4)} | {j(5)} | {j(7)} ({j(8)}) | {k} |")
    v = lambda x: float(x.rstrip("%"))
    eager = [x for w in ("heldout", "fresh", "fresh2") for x in cells[("eager", w)]]
    names = {"heldout": "the held-out set", "fresh": "the first fresh set", "fresh2": "the second fresh set"}
    miss = [f"{names[w]} at batch {x[2]} ({x[4]}{'' if v(x[5]) <= 30 else ', p90 ' + x[5]})"
            for w in ("heldout", "fresh", "fresh2") for x in cells[("eager", w)] if v(x[4]) > 12 or v(x[5]) > 30]
    taus = sorted(float(x[7]) for x in eager)
    meeting = sum(t >= 0.9 for t in taus)
    ind = [x for w in ("heldout", "fresh") for x in cells[("inductor", w)]]
    return lines + ["", f"eager meets a 12% median and 30% p90 target in all but {len(miss)} of its {len(eager)} cells:",
                    "; ".join(miss) + ". Its ranking (Kendall tau",
                    f"{taus[0]:.2f}\u2013{taus[-1]:.2f}) is short of 0.9 in all but {'one cell' if meeting == 1 else f'{meeting} cells'}. "
                    f"`inductor` misses both",
                    f"(median {min(v(x[4]) for x in ind):.0f}\u2013{max(v(x[4]) for x in ind):.0f}%, "
                    f"p90 up to {max(v(x[5]) for x in ind):.0f}%), mostly where torch.compile or cuDNN launch"]


def readme_corpus(runs):
    """README.md: the ONNX files the tests and validations load, counted in onnx_models/ (corpus manifest, runtime/, heldout_*/)."""
    import glob
    corpus = sum(1 for line in open("onnx_models/corpus/manifest.jsonl") if line.strip())
    runtime = len(glob.glob("onnx_models/runtime/*.onnx"))
    unseen = len(glob.glob("onnx_models/heldout_*/*.onnx"))
    return [f"The test suite analyses a corpus of {corpus} real-world files from timm and transformers",
            "under every runtime ([validation.md](docs/validation.md) \"Real-world ONNX corpus\");",
            f"`onnx_models/runtime/` holds the {runtime} networks of the runtime validation and",
            f"`onnx_models/heldout_*/` {unseen} more of runs 1\u20136."]


def fit_report(runtime):
    """calibrate/data/h200/runtimes/report/fit_RUNTIME.txt, what `calibrate fit-runtime` printed: class losses,
    network stage (used, runs), median error per batch (before, after)."""
    text = open(f"{RT}/report/fit_{runtime}.txt").read()
    losses = {c: float(v) for c, v in re.findall(r"class (\w+)\s+train loss ([\d.]+)", text)}
    stage = tuple(map(int, re.search(r"network stage: (\d+) of (\d+) runs", text).groups()))
    err = {int(b): (x, y) for b, x, y in re.findall(r"batch\s+(\d+): median \|error\|\s+([\d.]+%) before,\s+([\d.]+%) after", text)}
    return losses, stage, err


def calibration_runtime_params(runs):
    """docs/calibration.md: the runtime sets in gpu_models/h200.json beside its base parameters, and what `calibrate fit-runtime` printed for each (runtimes/report/fit_*.txt)."""
    g = json.load(open("gpu_models/h200.json"))
    base, sets = g["params"], {rt: g["runtime_params"][rt]["params"] for rt in ("eager", "inductor")}
    defaults = runs.param_table()
    lines = ["| parameter | base (layers, runs 1\u20136) | eager | inductor |", "| --- | ---: | ---: | ---: |"]
    for name in sorted(set(sets["eager"]) | set(sets["inductor"])):
        if name in base:
            b = f"{base[name]:.4g}"
        else:
            d, _, hi = defaults[name]
            b = f"(default {d:g}{': no limit' if d == hi and name.startswith('norm_max') else ''}, not fitted)"
        lines.append(f"| `{name}` | {b} | " + " | ".join(f"{sets[rt][name]:.4g}" if name in sets[rt] else "\u2013"
                                                        for rt in ("eager", "inductor")) + " |")
    rep = {rt: fit_report(rt) for rt in ("eager", "inductor")}
    for rt in rep:
        assert rep[rt][1][0] == g["runtime_params"][rt]["fitted_on"]["network_runs_fitted"], f"fit_{rt}.txt is not h200.json's fit"
    err = lambda rt: ", ".join(f"{x} \u2192 {y}" for _, (x, y) in sorted(rep[rt][2].items()))
    loss = lambda rt: ", ".join(f"{v:#.2g} `{c}`" for c, v in sorted(rep[rt][0].items(), key=lambda kv: kv[1]))
    batches = ", ".join(map(str, sorted(rep["eager"][2])))
    return lines + ["", f"Median |error| of the fitted runs before \u2192 after, at batch {batches}: eager {err('eager')};",
                    f"inductor {err('inductor')}. The network stage used {rep['eager'][1][0]} of {rep['eager'][1][1]} eager runs "
                    f"and {rep['inductor'][1][0]} of {rep['inductor'][1][1]}",
                    "inductor runs (the others' kernel counts differ from the profile's by more",
                    "than 10%). The class fits' train losses (soft-L1 of the log ratio, scale 0.1)",
                    f"are, for eager, {loss('eager')}; for inductor {loss('inductor')}."]


FIGURES = {"heldout-fp16": heldout_fp16, "heldout-datasheet": heldout_datasheet,
           "heldout-precisions": heldout_precisions, "runner-only": runner_only, "readme-layers": readme_layers,
           "report-analyze-b1": report_analyze_b1, "report-schedule-b1": report_schedule_b1,
           "report-splits": report_splits,
           "report-findings": report_findings, "report-host-bound": report_host_bound,
           "report-compare-gpus": report_compare_gpus, "report-check-resnet18": report_check_resnet18,
           "report-check-traces": report_check_traces, "readme-harness": readme_harness,
           "readme-runtimes": readme_runtimes,
           "readme-corpus": readme_corpus,
           "calibration-runtime-params": calibration_runtime_params}
# Figures of one doc each live in their own module beside this one, each with a FIGURES dict.
# and a LONG set of the figures over the whole measured corpus.
for _module in (figures_readme, figures_calibration, figures_validation, figures_nas, figures_model):
    FIGURES.update(_module.FIGURES)
LONG = set().union(*(getattr(_module, "LONG", set()) for _module in (figures_readme, figures_calibration,
                                                                      figures_validation)))
BLOCK = re.compile(r"^<!-- doc_figures\.py (\S+) -->\n(.*?)^<!-- /doc_figures\.py -->$", re.M | re.S)


def check(files, runs, which="all"):
    """Exit status 1 naming each block of the files that differs from its figure; `which` keeps the
    figures over the whole corpus ("long", LONG), the others ("short") or all."""
    bad = 0
    for path in files:
        text = open(path).read()
        blocks = BLOCK.findall(text)
        if not blocks:
            print(f"{path}: no doc_figures.py block")
            bad += 1
        for name, body in blocks:
            if name not in FIGURES:
                print(f"{path}: unknown figure '{name}'")
                bad += 1
                continue
            if which != "all" and (name in LONG) != (which == "long"):
                continue
            if "<!-- doc_figures.py" in body:
                print(f"{path}: figure '{name}' has no end line of its own (<!-- /doc_figures.py -->)")
                bad += 1
                continue
            want = FIGURES[name](runs)
            got = body.rstrip("\n").split("\n")
            if got != want:
                bad += 1
                print(f"{path}: figure '{name}' differs from what `doc_figures.py {name}` prints now "
                      f"({FIGURES[name].__doc__.split(chr(10))[0]}):")
                for line in want:
                    print("  want: " + line)
                for line in got:
                    print("  doc:  " + line)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilewave", default="build/analyzer/tilewave")
    ap.add_argument("--check", action="store_true", help="compare the blocks of the given docs")
    ap.add_argument("--figures", choices=("all", "short", "long"), default="all",
                    help="with --check: only the figures over the whole measured corpus (long) or the others (short)")
    ap.add_argument("names", nargs="*", help="figures to print (default: all), or docs with --check")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = Runs(a.tilewave, tmp)
        if a.check:
            return check(a.names, runs, a.figures)
        for name in a.names or FIGURES:
            if name not in FIGURES:
                print(f"doc_figures.py: unknown figure '{name}'; known: {', '.join(FIGURES)}", file=sys.stderr)
                return 2
            print(f"<!-- doc_figures.py {name} -->")
            print("\n".join(FIGURES[name](runs)))
            print("<!-- /doc_figures.py -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
