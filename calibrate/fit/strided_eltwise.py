#!/usr/bin/env python3
"""Fits PyTorch eager's elementwise paths (docs/model.md "Memory-bound
kernels"; docs/validation.md "Elementwise kernels: two paths") on the H200
corpus's profiled forwards.

PyTorch runs an elementwise op as `vectorized_elementwise_kernel` only when
every operand is contiguous and of one type; a broadcast operand (a conv's
bias, a per-channel scale) sends it to `elementwise_kernel<128, 4>`, which
computes each operand's offset per element and loads one element at a time.
tilewave marks such kernels `strided` (an operand of fewer values than the
output's that is not a rank-0 scalar) and adds `strided_element_ps` per output element to
their memory time and `fixed_us_strided_extra` to their floor. Operands of
two types, all contiguous (under autocast, a half tensor beside an fp32 one),
send it to `unrolled_elementwise_kernel`, which casts each element as it
loads it: marked `unrolled`, with `unrolled_element_ps` per output element
and `fixed_us_unrolled_extra` on its floor, fitted (after the rate) on the
pairs of a predicted unrolled kernel and a measured one, on relative error
like the strided terms. Every
elementwise kernel streams its bytes at `eltwise_bw_efficiency`.

Pairing: the library's one step (`tilewave check`, the module's check(), as
calibrate/validate/kernel_classes.py calls it) pairs each measured kernel
with a predicted one; a pair is used when its measured kernel is of class
elementwise and its predicted kernel is an elementwise layer (analyze()'s
JSON of the same configuration, joined by name in order). The strided terms
are fitted on the pairs of a predicted strided kernel and a measured
`elementwise_kernel<`, the rate on a predicted plain kernel and a measured
`vectorized_elementwise_kernel`, both over the fit families only; each is
linear once the model's own bytes, L2 hits, ramp and floor are known:

    measured - fixed - traffic  =  (bytes - hits) / BW  /  eltwise_bw_efficiency        plain kernels
    measured - fixed - traffic' =  fixed_us_strided_extra + outputs * strided_element_ps * 1e-6    strided
      traffic  = ramp_us + hits / (BW * l2_bw_factor)
      traffic' = traffic + (bytes - hits) / BW / eltwise_bw_efficiency (the rate just fitted)

solved by scipy's bounded linear least squares within the parameters'
bounds (`tilewave params`): the rate on absolute time, so that the summed
time of the class, what a step adds up, comes out right (on relative error
the many small L2-resident kernels pull it to its bound of 1.0 and leave the
large ones slow); the strided terms, a floor and a per-element time like
the row-moments terms (calibrate/fit/row_moments.py), on relative error.
The tables are tilewave's own predictions, per measured kernel path: with
the values the GPU file holds, without the strided terms (one rate for
every elementwise kernel, fitted the same way on both paths' pairs: the
model before them), and, when the fit moved them, with the fitted values.

usage: python3 -m calibrate.fit.strided_eltwise build/analyzer/tilewave [--write]
(--write: the five go into gpu_models/h200.json's "eager" set with their
provenance, through tilewave.write_gpu; PYTHONPATH=build/analyzer/python)
"""
import collections
import json
import os
import statistics
import tempfile

import numpy as np
from scipy.optimize import lsq_linear

from calibrate.fit.corpus_fit import RUN, NoPairs, corpus_main, held_line, portable, with_params
from calibrate.pair.harness_runs import gpu_params, param_table
from calibrate.pair.kernel_names import kernel_class
from calibrate.validate.kernel_classes import onnx_files, paired_layers

RATE = "eltwise_bw_efficiency"
UNROLLED = "unrolled_element_ps"
UNROLLED_EXTRA = "fixed_us_unrolled_extra"
COMMAND = "python3 -m calibrate.fit.strided_eltwise build/analyzer/tilewave --write"


def path_of(name):
    """PyTorch's elementwise path a measured kernel's name shows (kernel_names.json's elementwise_path)."""
    return kernel_class(name, "elementwise_path")


def pairs(tilewave, rows, onnx, gpu_file, tmp):
    """[(row, measured us, measured path, predicted layer JSON)] over the elementwise pairs, and the forwards
    tilewave could not analyse."""
    def keep(r, p, k):
        if p.get("measured_class") == "elementwise" and k and k.get("layer", {}).get("op") == "eltwise":
            return r, p["measured_us"], path_of(p["measured"]), k
        return None
    return paired_layers(tilewave, rows, onnx, gpu_file, tmp, keep)


def traffic_us(k, bw_bytes_per_us, l2_factor):
    """(DRAM bytes / BW, the ramp and the L2 hits' time) of a predicted kernel's JSON."""
    hits = min(k.get("l2_hit_bytes", 0), k["bytes"])
    return (k["bytes"] - hits) / bw_bytes_per_us, k.get("ramp_us", 0.0) + hits / (bw_bytes_per_us * l2_factor)


def rate_design(data, bw_bytes_per_us, l2_factor, floors=None):
    """floors: each kernel's fixed time, if not its JSON's fixed_us."""
    a, b = [], []
    for i, (_, measured, _, k) in enumerate(data):
        dram, rest = traffic_us(k, bw_bytes_per_us, l2_factor)
        a.append([dram])
        b.append(measured - (floors[i] if floors else k["fixed_us"]) - rest)
    return np.array(a), np.array(b)


def strided_design(data, held, rate, bw_bytes_per_us, l2_factor, extra="fixed_us_strided_extra"):
    """Relative error of a path's kernels beyond their floor (less the held `extra`) and traffic, linear in
    (the path's extra floor, its time per output element): the strided path, or with `extra` the unrolled."""
    a, b = [], []
    for _, measured, _, k in data:
        base = k["fixed_us"] - held.get(extra, 0.0)  # the floor without the term fitted
        dram, rest = traffic_us(k, bw_bytes_per_us, l2_factor)
        a.append([1 / measured, k["layer"]["elems"] * 1e-6 / measured])
        b.append((measured - base - dram / rate - rest) / measured)
    return np.array(a), np.array(b)


def report(label, data, split_of, out):
    """Per split and measured path: pairs, measured ms, predicted / measured summed, median |error|, and the
    shares of the predicted kernels marked strided and unrolled."""
    cells = collections.defaultdict(lambda: [0.0, 0.0, [], 0, 0])
    for r, measured, path, k in data:
        c = cells[(split_of.get(r["model"], "?"), path)]
        c[0] += measured
        c[1] += k["time_us"]
        c[2].append(abs(k["time_us"] / measured - 1))
        c[3] += bool(k["layer"].get("strided"))
        c[4] += bool(k["layer"].get("unrolled"))
    out(label)
    out("  %-9s %-11s %7s %12s %10s %14s %15s %15s" % ("split", "path", "pairs", "measured ms", "pred/meas",
                                                       "median |error|", "marked strided", "marked unrolled"))
    for (split, path), (measured, predicted, errors, strided, unrolled) in sorted(cells.items()):
        out("  %-9s %-11s %7d %12.1f %10.2f %13.1f%% %14.0f%% %14.0f%%" % (
            split, path, len(errors), measured / 1e3, predicted / measured, 100 * statistics.median(errors),
            100 * strided / len(errors), 100 * unrolled / len(errors)))


def fit(tilewave, rows, gpu_file, split_of, out=print, tables=True, source=RUN):
    """The three values fitted on the fit families' (split_of[model] == "fit") elementwise pairs of `rows`,
    profiled forwards of run.py, against `gpu_file`'s predictions; `tables`: also the per-path reports (with
    the file's values, without the strided terms, with the fitted values). NoPairs when the fit families
    lack pairs of either path."""
    bounds = param_table(tilewave)
    held = json.load(open(gpu_file))["runtime_params"]["eager"]["params"]
    values_now = gpu_params(tilewave, gpu_file, "eager")
    bw, l2_factor = values_now["dram_bandwidth_gbs"] * 1e3, values_now["l2_bw_factor"]
    with tempfile.TemporaryDirectory() as tmp:
        onnx = onnx_files(sorted({r["model"] for r in rows}), tmp)
        before, failed = pairs(tilewave, rows, onnx, gpu_file, tmp)
        if failed:
            out("left out: %d forwards tilewave cannot analyse (%s)" % (
                len(failed), ", ".join(sorted({m for m, _, _ in failed}))))
        fit_pairs = [p for p in before if split_of.get(p[0]["model"]) == "fit"]
        strided = [p for p in fit_pairs if p[3]["layer"].get("strided") and p[2] == "strided"]
        plain = [p for p in fit_pairs if not p[3]["layer"].get("strided") and p[2] == "vectorised"]
        if not strided or not plain:
            raise NoPairs("%s: no fit-family elementwise pairs of both paths (%d strided, %d vectorised)" % (
                source, len(strided), len(plain)))
        a, b = rate_design(plain, bw, l2_factor)
        rate = 1 / float(lsq_linear(a, b, bounds=([1 / bounds[RATE]["max"]], [1 / bounds[RATE]["min"]])).x[0])
        a, b = strided_design(strided, held, rate, bw, l2_factor)
        lo = [bounds[n]["min"] for n in ("fixed_us_strided_extra", "strided_element_ps")]
        hi = [bounds[n]["max"] for n in ("fixed_us_strided_extra", "strided_element_ps")]
        extra, ps = lsq_linear(a, b, bounds=(lo, hi)).x
        values = {"strided_element_ps": round(float(ps), 4), "fixed_us_strided_extra": round(float(extra), 4),
                  RATE: round(rate, 5)}
        unrolled = [p for p in fit_pairs if p[3]["layer"].get("unrolled") and p[2] == "unrolled"]
        if unrolled:  # only networks under autocast mix types; without them the held values stand
            a, b = strided_design(unrolled, held, rate, bw, l2_factor, UNROLLED_EXTRA)
            names = (UNROLLED_EXTRA, UNROLLED)
            extra, ps = lsq_linear(a, b, bounds=([bounds[n]["min"] for n in names],
                                                 [bounds[n]["max"] for n in names])).x
            values.update({UNROLLED: round(float(ps), 4), UNROLLED_EXTRA: round(float(extra), 4)})
        out("fitted on %d strided, %d unrolled and %d vectorised elementwise pairs of the fit families: %s" % (
            len(strided), len(unrolled), len(plain), json.dumps(values)))
        if tables:  # the script's own run: say whether --write would change the file
            out(held_line(held, values, gpu_file))
        if not tables:
            return values
        report("predicted / measured, with the values %s holds" % portable(gpu_file), before, split_of, out)
        # The model without the strided terms: one rate for every elementwise kernel, fitted the same way.
        both = [p for p in fit_pairs if p[2] in ("strided", "vectorised")]
        a, b = rate_design(both, bw, l2_factor, [p[3]["fixed_us"] - (held.get("fixed_us_strided_extra", 0.0)
                                                 if p[3]["layer"].get("strided") else 0.0) for p in both])
        one_rate = round(1 / float(lsq_linear(a, b, bounds=([1 / bounds[RATE]["max"]],
                                                            [1 / bounds[RATE]["min"]])).x[0]), 5)
        without = {"strided_element_ps": 0.0, "fixed_us_strided_extra": 0.0, UNROLLED: 0.0, UNROLLED_EXTRA: 0.0,
                   RATE: one_rate}
        baseline, _ = pairs(tilewave, rows, onnx,
                            with_params(tilewave, gpu_file, without, os.path.join(tmp, "one_rate.json")), tmp)
        report("predicted / measured, without the strided terms: one rate for every elementwise kernel, fitted "
               "the same way on both paths' pairs (%s %.3f)" % (RATE, one_rate), baseline, split_of, out)
        if any(held.get(n) != v for n, v in values.items()):
            after, _ = pairs(tilewave, rows, onnx, with_params(tilewave, gpu_file, values,
                                                               os.path.join(tmp, "gpu.json")), tmp)
            report("predicted / measured, with the fitted values", after, split_of, out)
    return values


def main():
    corpus_main(fit, __doc__, COMMAND, "elementwise kernels")


if __name__ == "__main__":
    main()
