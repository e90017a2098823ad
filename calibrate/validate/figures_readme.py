"""Figures of README.md that calibrate/validate/doc_figures.py reprints and checks
(the blocks `<!-- doc_figures.py NAME -->` there)."""
import json
import os
import re
import statistics
from concurrent.futures import ThreadPoolExecutor

from calibrate import module  # calibrate/module.py: the in-process module
from calibrate.pair import harness_runs  # calibrate/pair/harness_runs.py: timm's-harness rows and predictions
from calibrate.validate import kernel_kinds  # calibrate/validate/kernel_kinds.py: `tilewave check` over profiled forwards, by kernel kind
from calibrate.validate import library_kernels  # calibrate/validate/library_kernels.py: cuDNN/cuBLAS kernels inside networks
from calibrate.validate import other_gpus  # calibrate/validate/other_gpus.py: the GPUs nobody here owns
from calibrate.validate.harness import host_spread  # calibrate/validate/harness.py
from calibrate.jsonl import read_all
from calibrate.validate.runtimes import quantile  # calibrate/validate/runtimes.py

RT = "calibrate/data/h200/runtimes"

OTHER_GPUS_TEXT = "calibrate/data/other_gpus/validate.md"  # what `other_gpus.py --write` printed when it wrote the files


def other_gpus_printed():
    """{(section title, gpu, GPU file, harness, kind): cells} of the tables other_gpus.py printed."""
    out, title = {}, None
    for line in open(OTHER_GPUS_TEXT):
        if line.rstrip().endswith(":") and not line.startswith("|"):
            title = line.strip()
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 9 and c[4].isdigit():
            out[(title, *c[:4])] = c
    return out


def from_benchmark_cells(gpu):
    """{(harness, kind): cells as other_gpus.py's table prints them} of the held-out families' errors
    gpu_models/GPU.json records (`from_benchmark`, what `calibrate from-benchmark` judged after the fit)."""
    fb = json.load(open(f"gpu_models/{gpu}.json"))["from_benchmark"]
    return {(other_gpus.harness(e["source"]), e["kind"]):
            [gpu, "fitted-from-benchmark", other_gpus.harness(e["source"]), e["kind"], str(e["n"]),
             f"{100 * e['median']:.1f}%", f"{100 * e['p90']:.1f}%", f"{e['median_ratio']:.2f}",
             f"{e['tau']:.2f} ({e['tau_gmacs']:.2f})"]
            for e in fb["errors"] if e["subset"] == "held-out"}, fb["scales"]


def kept_other_gpus_fit():
    """The printed tables of calibrate/data/other_gpus/validate.md, held to the fit gpu_models/rtx3090.json and
    rtx4090.json record (the same scales, the same held-out rows): {(title, gpu, how, harness, kind): cells} and
    each fitted GPU's held-out CNN cells {harness: cells}. AssertionError when the text is of another fit."""
    printed = other_gpus_printed()
    fitted_title = "Fitted from the GPU's own published results (calibrate from-benchmark):"
    head = open(OTHER_GPUS_TEXT).readline()
    fitted = {}
    for gpu in other_gpus.FILES:
        cells, scales = from_benchmark_cells(gpu)
        assert f"{gpu} memory-rate x{scales['memory_rate']:.2f}, main-loop x{scales['main_loop']:.2f}" in head, \
            f"{OTHER_GPUS_TEXT} is not the fit of gpu_models/{gpu}.json"
        for (title, g, _, harness, kind), c in printed.items():
            if title == fitted_title and g == gpu:
                assert cells[(harness, kind)] == c, f"{OTHER_GPUS_TEXT} is not the fit of gpu_models/{gpu}.json"
        fitted[gpu] = {h: c for (h, kind), c in cells.items() if kind == "cnn"}
    return printed, fitted


def readme_other_gpus(runs):
    """README.md: the held-out CNN errors gpu_models/rtx3090.json and rtx4090.json record (other_gpus.py --write), and the carried RTX 4090 of the text other_gpus.py printed then (calibrate/data/other_gpus/validate.md)."""
    printed, fitted = kept_other_gpus_fit()
    loo_title = "Left out of every fit: the RTX 4090 carried from the fitted RTX 3090 and the H200:"
    loo = {k[3]: c for k, c in printed.items() if k[0] == loo_title and k[4] == "cnn"}
    harnesses = ("eager NCHW", "eager channels_last", "torch.compile NCHW")
    name = lambda gpu: re.sub(r"rtx(\d+)", r"RTX \1", gpu)
    cell = lambda c: f"{c[5]} / {c[6]} / {c[8].split()[0]}" if c else "(no results file)"
    lines = ["| GPU, CNNs of held-out families | eager NCHW median / p90 / tau | eager channels_last | torch.compile |",
             "| --- | --- | --- | --- |"]
    for gpu in other_gpus.FILES:
        lines.append(f"| {name(gpu)}, fitted | " + " | ".join(cell(fitted[gpu].get(h)) for h in harnesses) + " |")
    lines.append("| RTX 4090 with no data of its own (carried from the fitted 3090 and the H200) | "
                 + " | ".join(cell(loo.get(h)) for h in harnesses) + " |")
    macs = sorted(float(c[8].split("(")[1].rstrip(")")) for f in fitted.values() for c in f.values())
    return lines + ["", f"(timm's MAC counts rank the same models with tau {macs[0]:.2f}\u2013{macs[-1]:.2f}.)"]


def minus(text):
    return text.replace("-", "\u2212")


def readme_fresh_sets(runs):
    """README.md: the networks of the two fresh runtime sets, counted in calibrate/data/h200/runtimes/fresh and fresh2/bench.jsonl."""
    models = {}
    for run in ("fresh", "fresh2"):
        for r in read_all(f"{RT}/{run}/bench.jsonl"):
            if not r.get("header") and r.get("status") == "ok":
                models.setdefault(run, {}).setdefault(r["runtime"], set()).add(r["model"])
    assert set(models["fresh2"]) == {"eager"}, "the second fresh set is said to be eager only"
    return [f"frozen ({len(set().union(*models['fresh'].values()))} networks at the first freeze, "
            f"{len(models['fresh2']['eager'])} eager networks at the second;"]


def readme_harness_set(runs):
    """README.md: the networks of timm's harness's fresh call, counted in calibrate/data/h200/timm_harness/fresh/bench.jsonl.gz."""
    return [f"\"timm's harness\"), on {len({r['model'] for r in harness_runs.rows(harness_runs.RUNS[1])})} fresh networks "
            "measured after the model was frozen"]


def readme_harness_misses(runs):
    """README.md: what calibrate/validate/harness.py prints of the host time's spread across batches, and its median predicted/measured step of the held-out and fresh sets in NCHW at batch 256."""
    spread = host_spread()[0]
    _, held = harness_runs.zoo_split()
    sel = [(name, r) for name, run in (("held-out", harness_runs.RUNS[0]), ("fresh", harness_runs.RUNS[1]))
           for r in harness_runs.rows(run) if r["layout"] == "nchw" and r["batch"] == 256 and (name == "fresh" or r["model"] in held)]
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        pred = list(pool.map(lambda x: harness_runs.predict(runs.tw, x[1]["model"], "nchw", 256)["total"]["time_us"], sel))
    ratio = sorted(statistics.median(p / (r["step_ms"] * 1e3) for (n, r), p in zip(sel, pred) if n == name)
                   for name in ("held-out", "fresh"))
    return [f"the host's own time varies by a median {spread:.2f}\u00d7 across the batches of one",
            f"network and layout, and at batch 256 NCHW networks are predicted a median {ratio[0]:.2f}\u2013{ratio[1]:.2f}",
            "of their step (held-out and fresh sets; most of the furthest short are MBConv networks)"]


def readme_kernels(runs):
    """README.md: calibrate/validate/kernel_kinds.py's norm kernels on the second fresh set (the model before its freeze, as printed then, and now), and calibrate/validate/library_kernels.py's eager cuDNN/cuBLAS kernels in held-out and fresh networks."""
    before = open(f"{RT}/report/fresh2_second_freeze.md").read().split("## Kernels by kind, the model before (a734049)")[1]
    was = {int(c[1]): c[5] for c in (line.split() for line in before.split("\n")) if c and c[0] == "norm"}
    if "kinds" not in runs.cache:
        runs.cache["kinds"] = kernel_kinds.kind_sums(kernel_kinds.paired(f"{RT}/fresh2/bench.jsonl", f"{RT}/fresh2/kernels.jsonl.gz",
                                                                         "eager", runs.tw)[1])
    now = {b: f"{v[1] / v[2] - 1:+.1%}" for (kind, b), v in runs.cache["kinds"].items() if kind == "norm"}
    batches = sorted(now)
    assert sorted(was) == batches
    kern = ",".join(f"{RT}/{r}/kernels.jsonl.gz" for r in ("fit_heldout", "fit_heldout_remainder", "fresh", "fresh2"))
    med, signed = [], []
    for which in ("heldout", "fresh"):
        errors, _ = library_kernels.paired_errors(runs.tw, kern, which, runtimes={"eager"})
        med += [quantile([abs(x) for x in e], 0.5) for e in errors.values()]
        small = quantile(errors[("eager", min(batches))], 0.5)
        assert small > 0, "the sentence says library kernels at the smallest batch are predicted too slow"
        signed.append(f"{100 * small:+.1f}%")
    join = lambda d: minus("/".join(d[b] for b in batches))
    return [f"from {join(was)} (the model before the freeze, a734049, as printed then) to",
            f"{join(now)} now, at batch {'/'.join(map(str, batches))}. Single cuDNN/cuBLAS kernels inside eager",
            f"networks are off by a median {100 * min(med):.0f}\u2013{100 * max(med):.0f}%, and at batch {min(batches)}, "
            "where they are smallest, predicted",
            f"too slow (a median {' and '.join(signed)}, held-out and fresh networks)."]



def cli_formats(runs):
    """docs/cli.md: the view registry as `tilewave.formats()` gives it, one row per command and format."""
    entries = module.tilewave_module(runs.tw).formats()
    first = {}
    for e in entries:
        first.setdefault(e["format"], len(first))
    lines = ["| format | command | what it shows |", "| --- | --- | --- |"]
    for e in sorted(entries, key=lambda e: first[e["format"]]):  # stable: commands in the order registered
        lines.append("| `%s` | %s | %s |" % (e["format"], e["command"], e["summary"].replace("|", "\\|")))
    return lines

FIGURES = {"cli-formats": cli_formats, "readme-other-gpus": readme_other_gpus, "readme-fresh-sets": readme_fresh_sets,
           "readme-harness-set": readme_harness_set, "readme-harness-misses": readme_harness_misses,
           "readme-kernels": readme_kernels}
