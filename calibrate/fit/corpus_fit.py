#!/usr/bin/env python3
"""What every kernel-path fit on the H200 corpus shares (calibrate/fit/row_moments.py,
softmax_rows.py, strided_eltwise.py, narrow_convs.py; docs/validation.md's sections on
them): the corpus folder and its fit/held-out split, a GPU file with candidate values in
its eager set, the command line (`--write` stamps the fitted values into
gpu_models/h200.json's eager set through the one GPU-file writer), and the lines saying
what the file holds. A fit is fit_of(tilewave, rows, gpu_file, split_of, out, tables,
source) returning {parameter: value}, NoPairs when the rows have nothing to fit.
"""
import json
import os
import sys

from calibrate import module
from calibrate.pair.harness_runs import commit
from calibrate.validate.kernel_classes import CORPUS, ROOT, kernel_rows

RUN = "calibrate/data/h200/corpus/run"
GPU = os.path.join(ROOT, "gpu_models", "h200.json")


def splits():
    return {n["name"]: n["split"] for n in json.load(open(CORPUS))["networks"]}


def with_params(tilewave, gpu_file, values, path):
    """A copy of the GPU file at `path` with `values` in its eager set, through the one GPU-file writer."""
    g = json.load(open(gpu_file))
    g["runtime_params"]["eager"]["params"].update(values)
    module.tilewave_module(tilewave).write_gpu(g, path)
    return path


class NoPairs(ValueError):
    """The rows hold no fit-family kernel of the kind a fit needs: nothing to fit, the start values stand."""


def on_corpus(fit_of, tilewave, out=print):
    """A kernel-path fit, fit_of(tilewave, rows, gpu_file, split_of, out), on the H200 corpus (RUN) against
    gpu_models/h200.json, split as networks.json splits it."""
    return fit_of(tilewave, list(kernel_rows(os.path.join(ROOT, RUN))), GPU, splits(), out)


def portable(path):
    """A GPU file as the reports name it: relative to the repository when inside it, else its name."""
    full = os.path.abspath(path)
    return os.path.relpath(full, ROOT) if full.startswith(ROOT + os.sep) else os.path.basename(full)


def held_line(held, values, gpu_file=GPU):
    """Whether the GPU file's eager set `held` holds the fitted `values`, and what it holds if not."""
    if all(held.get(n) == v for n, v in values.items()):
        return "%s's eager set holds these values" % portable(gpu_file)
    return "%s's eager set holds %s (rerun with --write to replace them)" % (
        portable(gpu_file), json.dumps({n: held.get(n) for n in values}))


def write_eager(tilewave, values, command, kernels, shared_with=None):
    """`values` into gpu_models/h200.json's eager set through the one GPU-file writer, stamped with the
    command, its commit and the corpus kernels (`kernels`: which) they were fitted on; `shared_with`, as
    in stamp_eager."""
    stamp_eager(tilewave, values, "%s (commit %s): %s/kernels.jsonl.gz, the %s of the fit families "
                "(calibrate/data/h200/corpus/networks.json split), timm's harness" % (command, commit(), RUN, kernels),
                shared_with)


def stamp_eager(tilewave, values, provenance, shared_with=None):
    """`values` into gpu_models/h200.json's eager set through the one GPU-file writer, with `provenance` as
    their fitted_on entry. `shared_with` ({runtime set: why}) names other sets that run the same library
    kernels (cuDNN's under torch.compile): they get the same values, their provenance saying why."""
    tw = module.tilewave_module(tilewave)
    g = json.load(open(GPU))
    for name, why in [("eager", None)] + sorted((shared_with or {}).items()):
        target = g["runtime_params"][name]
        target["params"].update(values)
        # An entry whose every value these replace says where values came from that the set no longer holds.
        for key in [k for k in target["fitted_on"] if set(k.split(", ")) <= set(values)]:
            del target["fitted_on"][key]
        target["fitted_on"][", ".join(values)] = provenance if why is None else "%s; %s" % (provenance, why)
    tw.write_gpu(g, GPU)


def corpus_main(fit_of, doc, command, kernels, shared_with=None):
    """The command line of a kernel-path fit: on_corpus(fit_of), and with --write its values into
    gpu_models/h200.json's eager set (and the sets `shared_with` names, as in stamp_eager), stamped with
    `command` and the `kernels` they were fitted on."""
    if len(sys.argv) < 2:
        raise SystemExit(doc.strip().split("\n\n")[-1])
    try:
        values = on_corpus(fit_of, sys.argv[1])
    except NoPairs as e:
        raise SystemExit(str(e))
    if "--write" in sys.argv:
        write_eager(sys.argv[1], values, command, kernels, shared_with)
