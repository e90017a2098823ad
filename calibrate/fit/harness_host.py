#!/usr/bin/env python3
"""Fits the host description's per-op costs (gpu_models/hosts/h200-vm.json;
docs/calibration.md "Host") on the H200 machine's single-op timings and the
fit families' measured host issue times.

The per-op costs come from `host_micro.jsonl` (single modules called back to
back under the harness's autocast, no synchronize): an op is the median of
ReLU, add and SiLU; a cast is `.to(float16)`; a BatchNorm the module; a
convolution the AMP conv module less its three casts (input, weight, bias);
a GEMM the AMP linear module less two. Inside a network those costs scale
by one factor (the fit's `scale`), and each further kernel an op launches
itself costs `host_inner_launch_us`; both, and `host_step_us`, are fitted.

For every fit-family network timed with timm's harness (batch 1 and 16, both
layouts), `host_ms` is the forward call alone, without the synchronize
(calibrate/measure/timm_harness_bench.py). tilewave's lowering of the same
setting says how many kernels of each host-call class the step issues
(`host_call` of each layer in `analyze --format json`). The fit is a
non-negative least squares of

    host_us = host_step_us + sum over classes c of count_c * host_c_us

with host_c_us = scale * micro_c, on relative error (each network weighs the
same), within the parameters' bounds (scipy.optimize.lsq_linear).
Prints the fitted values, the fit's median error, and the JSON `params`.

usage: python3 -m calibrate.fit.harness_host build/analyzer/tilewave
"""
import json
import os
import statistics
import sys

from calibrate.pair.harness_runs import ROOT, RUNS, param_table, predict, rows, zoo_split

CLASSES = ["op", "conv", "gemm", "norm", "cast", "inner"]
PARAM = {"op": "host_op_us", "conv": "host_conv_us", "gemm": "host_gemm_us", "norm": "host_norm_us",
         "cast": "host_cast_us", "inner": "host_inner_launch_us"}


def bounded_fit(X, y, lower, upper):
    """min sum ((X b - y)/y)^2 with lower <= b <= upper (scipy's bounded linear least squares)."""
    from scipy.optimize import lsq_linear
    A = [[v / t for v in row] for row, t in zip(X, y)]
    return list(lsq_linear(A, [1.0] * len(y), bounds=(lower, upper)).x)


def micro_costs(path=None):
    """{host-call class: µs} from a host_micro.jsonl (default: the calibration run's)."""
    path = path or os.path.join(ROOT, RUNS[0], "host_micro.jsonl")
    m = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise ValueError("%s: line %d is not JSON (%s)" % (path, i, e))
            t = r.get("host_us_median") if isinstance(r, dict) else None
            if isinstance(r, dict) and isinstance(r.get("case"), str):
                if not isinstance(t, (int, float)) or isinstance(t, bool) or not 0 < t < 1e6:
                    raise ValueError("%s: line %d: host_us_median %r is not a time in us" % (path, i, t))
                m[r["case"]] = t
    need = ("cast_to_fp16", "relu_module", "add_tensor", "silu_functional", "conv_module_amp", "linear_module_amp",
            "batchnorm_module_fp16_in")
    missing = [c for c in need if c not in m]
    if missing:
        raise ValueError("%s: no %s (calibrate/measure/run.py's host stage times them)" % (path, ", ".join(missing)))
    cast = m["cast_to_fp16"]
    return {"op": statistics.median([m["relu_module"], m["add_tensor"], m["silu_functional"]]),
            "conv": m["conv_module_amp"] - 3 * cast, "gemm": m["linear_module_amp"] - 2 * cast,
            "norm": m["batchnorm_module_fp16_in"], "cast": cast}


def host_calls(tilewave, model, layout):
    """{host-call class: kernels} of one network's step at batch 1 (`host_call` of each layer)."""
    c = {k: 0 for k in CLASSES}
    for layer in predict(tilewave, model, layout, 1)["layers"]:
        if "host_call" in layer and "time_us" in layer:
            c[layer["host_call"]] += 1
    return c


def fit_runs(tilewave, pmap=map):
    """(networks x layouts, [(host-call counts, measured host_us, name)]) of the fit-family runs at batch 1 and 16."""
    fit, _ = zoo_split()
    return host_runs(tilewave, [r for r in rows(RUNS[0]) if r["model"] in fit], pmap)


def host_runs(tilewave, bench_rows, pmap=map):
    """(networks x layouts, [(host-call counts, measured host_us, name)]) of timm-harness rows at batch 1 and 16
    (AMP; the forward call's host_ms)."""
    runs = [r for r in bench_rows if r["batch"] in (1, 16) and r.get("precision", "amp_fp16") == "amp_fp16"]
    keys = sorted({(r["model"], r["layout"]) for r in runs})
    counts = dict(zip(keys, pmap(lambda k: host_calls(tilewave, *k), keys)))
    return len(keys), [(counts[(r["model"], r["layout"])], r["host_ms"] * 1e3,
                        "%s %s b%d" % (r["model"], r["layout"], r["batch"])) for r in runs]


def errors(params, runs):
    """Sorted relative errors of the host issue time that `params` (a host file's) predict for `runs`."""
    pred = [params["host_step_us"] + params["host_inner_launch_us"] * c["inner"] +
            sum(c[k] * params[PARAM[k]] for k in PARAM if k != "inner") for c, _, _ in runs]
    return sorted(abs(p - t) / t for p, (_, t, _) in zip(pred, runs))


def p90(errs):
    return errs[int(0.9 * len(errs))]


def fit(micro, runs, table):
    """(scale, params, sorted relative errors): the non-negative fit of the module docstring, within the
    bounds `table` (harness_runs.param_table: `tilewave params`) gives host_step_us and host_inner_launch_us."""
    X = [[1.0, sum(c[k] * micro[k] for k in micro), float(c["inner"])] for c, _, _ in runs]
    y = [t for _, t, _ in runs]
    step, inner = table["host_step_us"], table["host_inner_launch_us"]
    b = bounded_fit(X, y, [step["min"], 0.0, inner["min"]], [step["max"], float("inf"), inner["max"]])
    pred = [sum(xi * bi for xi, bi in zip(row, b)) for row in X]
    errs = sorted(abs(p - t) / t for p, t in zip(pred, y))
    params = {"host_step_us": round(b[0], 2), "host_inner_launch_us": round(b[2], 2)}
    params.update({PARAM[k]: round(b[1] * v, 2) for k, v in micro.items()})
    return b[1], params, errs


def main():
    tilewave = sys.argv[1]
    micro = micro_costs()
    networks, runs = fit_runs(tilewave)
    print("single-op host costs (%s/host_micro.jsonl): %s" % (
        RUNS[0], ", ".join("%s %.1f us" % (k, v) for k, v in micro.items())))
    print("host fit on %d fit-family runs (%d networks x layouts x batch 1, 16)" % (len(runs), networks))
    scale, params, errs = fit(micro, runs, param_table(tilewave))
    print("  scale of the single-op costs inside networks: %.3f" % scale)
    for k in sorted(params):
        print("  %-22s %8.2f us" % (k, params[k]))
    print("  host issue time: median error %.1f%%, p90 %.1f%%" % (100 * statistics.median(errs), 100 * p90(errs)))
    print(json.dumps(params, sort_keys=True))


if __name__ == "__main__":
    main()
