#!/usr/bin/env python3
"""Fits the host description's per-op costs (gpu_models/hosts/h200-vm.json;
docs/calibration.md "Host") on the H200 machine's single-op timings and the
fit families' measured host issue times.

The per-op costs come from `host_micro.jsonl` (single modules called back to
back under the harness's autocast, no synchronize): an op is the median of
ReLU, add and SiLU; a cast is `.to(float16)`; a BatchNorm the module; a
convolution the AMP conv module less its three casts (input, weight, bias);
a GEMM the AMP linear module less two; a view op (a reshape, permute or slice
that launches nothing) `flatten`. Inside a network those costs scale by one
factor (the fit's `scale`), and each further kernel an op launches itself
costs `host_inner_launch_us`; both, and `host_step_us`, are fitted.

For every fit-family network timed with timm's harness (batch 1 and 16, both
layouts), `host_ms` is the forward call alone, without the synchronize
(calibrate/measure/timm_harness_bench.py). tilewave's lowering of the same
setting says how many kernels of each host-call class the step issues and
how many views it runs (`host_call` and `host_views` of each layer in
`analyze --format json`). The fit is a non-negative least squares of

    host_us = host_step_us + sum over classes c of count_c * host_c_us

with host_c_us = scale * micro_c, on relative error (each network weighs the
same), within the parameters' bounds (scipy.optimize.lsq_linear).
Prints the fitted values, the fit's median error, the median predicted /
measured host issue time of the H200 corpus's held-out families per kind
(CNN, hybrid, ViT; calibrate/data/h200/corpus/run/, measured on other
machines: they judge, never fit), and the JSON `params`.

usage: python3 -m calibrate.fit.harness_host build/analyzer/tilewave [--write]
(--write: the fitted values into gpu_models/hosts/h200-vm.json through
tilewave's one host-file writer, with their provenance)
"""
import json
import os
import statistics
import sys
import tempfile

from calibrate import harness_flags, jsonl, module
from calibrate.pair.harness_runs import ROOT, RUNS, param_table, predict, rows, zoo_split

CORPUS_RUN = "calibrate/data/h200/corpus/run"

CLASSES = ["op", "conv", "gemm", "norm", "cast", "inner", "view"]
PARAM = {"op": "host_op_us", "conv": "host_conv_us", "gemm": "host_gemm_us", "norm": "host_norm_us",
         "cast": "host_cast_us", "inner": "host_inner_launch_us", "view": "host_view_us"}


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
            "batchnorm_module_fp16_in", "view_flatten")
    missing = [c for c in need if c not in m]
    if missing:
        raise ValueError("%s: no %s (calibrate/measure/run.py's host stage times them)" % (path, ", ".join(missing)))
    cast = m["cast_to_fp16"]
    return {"op": statistics.median([m["relu_module"], m["add_tensor"], m["silu_functional"]]),
            "conv": m["conv_module_amp"] - 3 * cast, "gemm": m["linear_module_amp"] - 2 * cast,
            "norm": m["batchnorm_module_fp16_in"], "cast": cast, "view": m["view_flatten"]}


def host_calls(tilewave, model, layout, path=None):
    """{host-call class: kernels} of one network's step at batch 1 (`host_call` of each layer, and the view ops
    before each, `host_views`); path: its ONNX file, if not onnx_models/runtime/'s."""
    c = {k: 0 for k in CLASSES}
    for layer in predict(tilewave, model, layout, 1, path=path)["layers"]:
        if "host_call" in layer and "time_us" in layer:
            c[layer["host_call"]] += 1
            c["view"] += layer.get("host_views", 0)
    return c


def fit_runs(tilewave, pmap=map):
    """(networks x layouts, [(host-call counts, measured host_us, name)]) of the fit-family runs at batch 1 and 16."""
    fit, _ = zoo_split()
    return host_runs(tilewave, [r for r in rows(RUNS[0]) if r["model"] in fit], pmap)


def host_rows(bench_rows):
    """The timm-harness rows the host is fitted and judged on: AMP, batch 1 and 16, with a forward call timed."""
    return [r for r in bench_rows if r["batch"] in (1, 16) and r.get("precision", "amp_fp16") == "amp_fp16"
            and r.get("host_ms")]


def host_runs(tilewave, bench_rows, pmap=map, paths=None):
    """(networks x layouts, [(host-call counts, measured host_us, name)]) of host_rows(bench_rows), in their
    order (the forward call's host_ms); paths: {model: ONNX file} where not onnx_models/runtime/'s."""
    runs = host_rows(bench_rows)
    keys = sorted({(r["model"], r["layout"]) for r in runs})
    counts = dict(zip(keys, pmap(lambda k: host_calls(tilewave, *k, path=(paths or {}).get(k[0])), keys)))
    return len(keys), [(counts[(r["model"], r["layout"])], r["host_ms"] * 1e3,
                        "%s %s b%d" % (r["model"], r["layout"], r["batch"])) for r in runs]


def corpus_runs(tilewave, split, pmap=map):
    """(networks x layouts, runs as host_runs gives them, networks left out) of the H200 corpus's `split`
    families (calibrate/data/h200/corpus/networks.json). Networks tilewave cannot analyse are left out."""
    from calibrate.validate.kernel_classes import CORPUS, onnx_files
    split_of = {n["name"]: n["split"] for n in json.load(open(CORPUS))["networks"]}
    bench = [r for r in jsonl.read(jsonl.in_folder(os.path.join(ROOT, CORPUS_RUN), "bench_median.jsonl"))
             if not r.get("header") and r.get("status", "ok") == "ok" and split_of.get(r["model"]) == split]
    with tempfile.TemporaryDirectory() as tmp:
        paths = onnx_files(sorted({r["model"] for r in bench}), tmp)
        tw = module.tilewave_module(tilewave)

        def analysable(m):
            try:
                tw.analyze(paths[m], batch=1, gpu="h200", **harness_flags.timm("nchw", True, "loop"))
                return True
            except tw.InputError:
                return False
        models = sorted(paths)
        left_out = [m for m, ok in zip(models, pmap(analysable, models)) if not ok]
        bench = [r for r in bench if r["model"] not in left_out]
        networks, runs = host_runs(tilewave, bench, pmap, paths)
    return networks, runs, left_out


def issue_us(params, counts):
    """The host issue time a host file's `params` give a step of these host-call counts (the schedule's sum)."""
    return params["host_step_us"] + sum(counts[k] * params.get(PARAM[k], 0.0) for k in PARAM)


def errors(params, runs):
    """Sorted relative errors of the host issue time that `params` (a host file's) predict for `runs`."""
    pred = [issue_us(params, c) for c, _, _ in runs]
    return sorted(abs(p - t) / t for p, (_, t, _) in zip(pred, runs))


def p90(errs):
    return errs[int(0.9 * len(errs))]


def fit(micro, runs, table):
    """(scale, params, sorted relative errors): the non-negative fit of the module docstring, within the
    bounds `table` (harness_runs.param_table: `tilewave params`) gives host_step_us and host_inner_launch_us."""
    from scipy.optimize import lsq_linear
    X = [[1.0, sum(c[k] * micro[k] for k in micro), float(c["inner"])] for c, _, _ in runs]
    y = [t for _, t, _ in runs]
    step, inner = table["host_step_us"], table["host_inner_launch_us"]
    b = list(lsq_linear([[v / t for v in row] for row, t in zip(X, y)], [1.0] * len(y),
                        bounds=([step["min"], 0.0, inner["min"]], [step["max"], float("inf"), inner["max"]])).x)
    pred = [sum(xi * bi for xi, bi in zip(row, b)) for row in X]
    errs = sorted(abs(p - t) / t for p, t in zip(pred, y))
    params = {"host_step_us": round(b[0], 2), "host_inner_launch_us": round(b[2], 2)}
    params.update({PARAM[k]: round(b[1] * v, 2) for k, v in micro.items()})
    return b[1], params, errs


def kind_ratios(params, runs, kinds):
    """{network kind: median predicted / measured host issue time} of `runs` under `params`."""
    out = {}
    for kind in sorted(set(kinds)):
        ratios = [issue_us(params, c) / t for (c, t, _), k in zip(runs, kinds) if k == kind]
        out[kind] = (len(ratios), statistics.median(ratios))
    return out


def fit_both(tilewave, pmap=map):
    """Everything main() prints: the fit on the calibration machine's fit families, and the corpus's held-out
    families (their own machines) to judge it and the shipped file by."""
    micro = micro_costs()
    networks, runs = fit_runs(tilewave, pmap)
    scale, params, errs = fit(micro, runs, param_table(tilewave))
    held_networks, held, left_out = corpus_runs(tilewave, "held_out", pmap)
    return dict(micro=micro, networks=networks, runs=runs, scale=scale, params=params, errs=errs,
                held_networks=held_networks, held=held, left_out=left_out)


def kinds_of(runs):
    from calibrate.validate.kernel_classes import CORPUS
    kind = {n["name"]: n["kind"] for n in json.load(open(CORPUS))["networks"]}
    return [kind[name.split(" ")[0]] for _, _, name in runs]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().split("\n\n")[-1])
    tilewave = sys.argv[1]
    r = fit_both(tilewave)
    print("single-op host costs (%s/host_micro.jsonl): %s" % (
        RUNS[0], ", ".join("%s %.1f us" % (k, v) for k, v in r["micro"].items())))
    print("host fit on %d fit-family runs (%d networks x layouts x batch 1, 16)" % (len(r["runs"]), r["networks"]))
    print("  scale of the single-op costs inside networks: %.3f" % r["scale"])
    for k in sorted(r["params"]):
        print("  %-22s %8.2f us" % (k, r["params"][k]))
    print("  host issue time: median error %.1f%%, p90 %.1f%%" % (100 * statistics.median(r["errs"]),
                                                                  100 * p90(r["errs"])))
    shipped = json.load(open(os.path.join(ROOT, HOST)))["params"]
    print("the corpus's held-out families (%s: %d networks x layouts, %d runs, their own machines%s): median "
          "predicted / measured host issue time" % (CORPUS_RUN, r["held_networks"], len(r["held"]), (
              "; left out, tilewave cannot analyse them: " + ", ".join(r["left_out"])) if r["left_out"] else ""))
    kinds = kinds_of(r["held"])
    for label, params in (("%s as shipped" % HOST, shipped), ("fitted now", r["params"])):
        ratios = kind_ratios(params, r["held"], kinds)
        print("  %-36s %s" % (label, ", ".join("%s %.2f (%d)" % (k, m, n) for k, (n, m) in ratios.items())))
    print(json.dumps(r["params"], sort_keys=True))
    if "--write" in sys.argv:
        write(tilewave, r)


HOST = "gpu_models/hosts/h200-vm.json"
COMMAND = "python3 -m calibrate.fit.harness_host build/analyzer/tilewave --write"


def write(tilewave, r):
    """The fitted values into h200-vm.json through the one host-file writer, with their provenance."""
    from calibrate.pair.harness_runs import commit
    host = json.load(open(os.path.join(ROOT, HOST)))
    host["params"].update(r["params"])
    sources = host.setdefault("sources", {})
    sources.pop("host_op_us, host_conv_us, host_gemm_us, host_norm_us, host_cast_us", None)
    sources["host_inner_launch_us, host_step_us"] = "fitted by the same command"
    sources["host_op_us, host_conv_us, host_gemm_us, host_norm_us, host_cast_us, host_view_us"] = (
        "single modules (a view: `flatten`) timed back to back under timm's harness (%s/host_micro.jsonl), "
        "scaled by one factor fitted on the fit families' host issue times: %s (commit %s)" % (
            RUNS[0], COMMAND, commit()))
    module.tilewave_module(tilewave).write_host(host, os.path.join(ROOT, HOST))
    print("wrote %s" % HOST)


if __name__ == "__main__":
    main()
