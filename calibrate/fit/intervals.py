#!/usr/bin/env python3
"""The 80% prediction intervals of the H200's eager set (issue 31 item 5;
docs/model.md "Prediction intervals"): per regime (a CUDA-graph replay, a
plain loop that the GPU bounds, one that the host bounds) and network class
(with attention: a softmax or an attention kernel; without), the 10th and
90th percentiles of measured / predicted over the corpus's held-out families,
every configuration of timm's harness and batch a setting.

It judges them before anyone relies on them:
  held_out, family by family  each held-out family's settings against the
                percentiles of the other held-out families (leave one family
                out): the share inside is what a network of a family never
                measured can expect
  fit           the fit families' settings against the held-out percentiles,
                which never saw them
A fresh set, measured after the model is frozen, is the last judge
(calibrate.validate.corpus_networks's "in N%" columns on its folder).

With --carried it measures instead how a GPU file carried from the H200
misses: the same percentiles over the networks measured on the H100 with
gpu_models/h100.json, carried from the H200 alone and fitted on none of
them (CARRIED_RUN; every network there is fresh to the model), judged family
by family. The H200 file keeps them as carried_interval_*, and `tilewave
calibrate carry` gives them to every file carried from it as its interval_*.

usage: python3 -m calibrate.fit.intervals build/analyzer/tilewave [--carried] [--write]
(--write: the twelve percentiles into gpu_models/h200.json's eager set with
their provenance, through tilewave.write_gpu, as interval_* or with --carried
as carried_interval_*; then carry the carried files again
(calibrate/reproduce_runtimes.sh step 2b); PYTHONPATH=build/analyzer/python)
"""
import collections
import json
import os
import sys

import numpy as np

from calibrate import module
from calibrate.fit.corpus_fit import GPU, RUN, stamp_eager
from calibrate.pair.harness_runs import commit
from calibrate.validate import corpus_networks
from calibrate.cli import InputError
from calibrate.validate.kernel_classes import CORPUS, ROOT

COMMAND = "python3 -m calibrate.fit.intervals build/analyzer/tilewave --write"
# The carried GPU measured here: its folder, and its file as `tilewave calibrate carry --gpu h200` wrote it.
CARRIED_RUN = "calibrate/data/h100/corpus/fresh"
CARRIED_GPU = "h100"
REGIMES = ("graph", "loop_gpu", "loop_host")
CLASSES = ("no_attention", "attention")
# Fewer held-out settings than this in a regime and class leave its interval unstated (0 in the file).
MIN_SETTINGS = 20

# One measured setting against its prediction: measured / predicted, and what the interval is keyed by.
Setting = collections.namedtuple("Setting", "model family split configuration batch regime network_class ratio")


def settings_of(rows, predicted, networks):
    """Every measured setting with a prediction: the step in a plain loop and the GPU time in a CUDA graph."""
    out = []
    for r in rows:
        p = predicted.get((r["model"], r["precision"], r["layout"], r["batch"]))
        n = networks.get(r["model"])
        if p is None or n is None:
            continue
        config = corpus_networks.harness_flags.CONFIGURATIONS[(r["precision"], r["layout"])]
        measured = [(p.loop, p.loop_interval, r["step_ms_median"] * 1e3)]
        if r.get("graph_ms", 0) > 0:
            measured.append((p.graph, p.graph_interval, r["graph_ms"] * 1e3))
        for total, interval, us in measured:
            if interval and total["time_us"] > 0:
                out.append(Setting(r["model"], n["family"], n["split"], config, r["batch"], interval["regime"],
                                   interval["network_class"], us / total["time_us"]))
    return out


def quantiles(coverage):
    """The percentiles an interval of this coverage spans: (10, 90) for tilewave's 0.8
    (the module's interval_coverage, PredictionInterval::coverage in C++)."""
    return round(100 * (1 - coverage) / 2, 9), round(100 * (1 + coverage) / 2, 9)


def percentiles(ratios, coverage):
    """The interval's low and high percentile of measured / predicted, numpy's linear rule; None below
    MIN_SETTINGS."""
    if len(ratios) < MIN_SETTINGS:
        return None
    low, high = np.percentile(ratios, quantiles(coverage))
    return round(float(low), 4), round(float(high), 4)


def fit(settings, coverage):
    """{(regime, class): (low, high) or None} over the held-out settings."""
    held = [s for s in settings if s.split == "held_out"]
    return {(g, c): percentiles([s.ratio for s in held if (s.regime, s.network_class) == (g, c)], coverage)
            for g in REGIMES for c in CLASSES}


def leave_family_out(settings, coverage):
    """Each held-out setting with the interval the other held-out families give its regime and class: a list
    of (setting, inside or None where too few remain)."""
    held = [s for s in settings if s.split == "held_out"]
    by_key = collections.defaultdict(list)
    for s in held:
        by_key[(s.regime, s.network_class)].append(s)
    out, cache = [], {}
    for s in held:
        key = (s.regime, s.network_class, s.family)
        if key not in cache:
            cache[key] = percentiles([o.ratio for o in by_key[key[:2]] if o.family != s.family], coverage)
        q = cache[key]
        out.append((s, None if q is None else q[0] <= s.ratio <= q[1]))
    return out


def share(flags):
    flags = [f for f in flags if f is not None]
    return ("%.0f%% of %d" % (100 * sum(flags) / len(flags), len(flags))) if flags else "-"


def report(settings, fitted, coverage, out=print):
    judged = leave_family_out(settings, coverage)
    stated = "%.0f%%" % (100 * coverage)
    fit_rows = [(s, None if fitted[(s.regime, s.network_class)] is None
                 else fitted[(s.regime, s.network_class)][0] <= s.ratio <= fitted[(s.regime, s.network_class)][1])
                for s in settings if s.split == "fit"]
    out("| regime | class | held-out settings (networks) | median | %s interval | held_out inside, family left out "
        "| fit inside |" % stated)
    out("| --- | --- | --- | --- | --- | --- | --- |")
    for g in REGIMES:
        for c in CLASSES:
            mine = [s for s in settings if s.split == "held_out" and (s.regime, s.network_class) == (g, c)]
            q = fitted[(g, c)]
            out("| %s | %s | %d (%d) | %s | %s | %s | %s |" % (
                g, c, len(mine), len({s.model for s in mine}),
                "%.2f" % float(np.median([s.ratio for s in mine])) if mine else "-",
                "%.2f-%.2fx" % q if q else "not stated (fewer than %d)" % MIN_SETTINGS,
                share(f for s, f in judged if (s.regime, s.network_class) == (g, c)),
                share(f for s, f in fit_rows if (s.regime, s.network_class) == (g, c))))
    out("")
    out("inside the interval, by configuration and batch (held_out: family left out; fit: the held-out interval)")
    out("| configuration | batch | held_out | fit |")
    out("| --- | --- | --- | --- |")
    for config, batch in sorted({(s.configuration, s.batch) for s in settings}):
        out("| %s | %d | %s | %s |" % (config, batch,
                                       share(f for s, f in judged if (s.configuration, s.batch) == (config, batch)),
                                       share(f for s, f in fit_rows if (s.configuration, s.batch) == (config, batch))))
    out("all: held_out %s, fit %s (stated: %s; issue 31's target 75-85%%)" % (
        share(f for _, f in judged), share(f for _, f in fit_rows), stated))


def values_of(fitted, prefix="interval"):
    """The GPU file's twelve parameters: 0 where the interval is not stated."""
    values = {}
    for (g, c), q in sorted(fitted.items()):
        values["%s_%s_%s_low" % (prefix, g, c)] = q[0] if q else 0.0
        values["%s_%s_%s_high" % (prefix, g, c)] = q[1] if q else 0.0
    return values


def fitted_and_reported(tilewave, settings, failed, head, out):
    """The percentiles of `settings`, after a first line (`head` and the networks tilewave could not analyse)
    and the report that judges them."""
    out(head + ("; left out (tilewave could not analyse them): " + ", ".join(sorted(failed)) if failed else ""))
    coverage = module.tilewave_module(tilewave).interval_coverage
    fitted = fit(settings, coverage)
    report(settings, fitted, coverage, out)
    return fitted


def run(tilewave, out=print, predicted_corpus=None):
    """The percentiles; `predicted_corpus`: corpus_networks.corpus_predictions of RUN already made."""
    networks = {n["name"]: n for n in json.load(open(CORPUS))["networks"]}
    rows, predicted, failed = predicted_corpus or corpus_networks.corpus_predictions(os.path.join(ROOT, RUN), tilewave)
    settings = settings_of(rows, predicted, networks)
    head = "%d settings of %d corpus networks (%s), each measured / predicted by %s" % (
        len(settings), len({s.model for s in settings}), RUN, os.path.relpath(GPU, ROOT))
    return values_of(fitted_and_reported(tilewave, settings, failed, head, out))


def run_carried(tilewave, out=print, predicted_corpus=None):
    """The carried percentiles (carried_interval_*): every setting measured on the carried GPU counts as
    held out, since the model was fitted on none of them; `predicted_corpus` as in run()."""
    networks = {n["name"]: n for n in json.load(open(CORPUS))["networks"]}
    rows, predicted, failed = predicted_corpus or corpus_networks.corpus_predictions(
        os.path.join(ROOT, CARRIED_RUN), tilewave, CARRIED_GPU)
    settings = [s._replace(split="held_out") for s in settings_of(rows, predicted, networks)]
    head = "%d settings of %d networks measured on the %s (%s), each measured / predicted by gpu_models/%s.json, " \
        "carried from the H200" % (len(settings), len({s.model for s in settings}), CARRIED_GPU.upper(), CARRIED_RUN,
                                   CARRIED_GPU)
    return values_of(fitted_and_reported(tilewave, settings, failed, head, out), "carried_interval")


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        raise SystemExit(__doc__.strip().split("\n\n")[-1])
    carried = "--carried" in sys.argv
    try:
        values = (run_carried if carried else run)(sys.argv[1])
    except (InputError, ImportError) as e:
        raise SystemExit("intervals.py: %s" % e)
    if "--write" in sys.argv and carried:
        stamp_eager(sys.argv[1], values, "%s --carried (commit %s): %s/bench_median.jsonl.gz predicted by "
                    "gpu_models/%s.json as carried from the H200, every network fresh to the model, timm's harness: "
                    "every configuration and batch, the step in a plain loop and the GPU time of a CUDA-graph replay"
                    % (COMMAND, commit(), CARRIED_RUN, CARRIED_GPU))
    elif "--write" in sys.argv:
        stamp_eager(sys.argv[1], values, "%s (commit %s): %s/bench_median.jsonl.gz, the held-out families "
                    "(calibrate/data/h200/corpus/networks.json split), timm's harness: every configuration and batch, "
                    "the step in a plain loop and the GPU time of a CUDA-graph replay" % (COMMAND, commit(), RUN))


if __name__ == "__main__":
    main()
