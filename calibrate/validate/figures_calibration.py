"""Figures of docs/calibration.md that calibrate/validate/doc_figures.py reprints and checks
(the blocks `<!-- doc_figures.py NAME -->` there)."""
import collections
import json
import math
import os
import re
import statistics
import tempfile

from calibrate.parallel import pmap
from calibrate.fit import harness_host  # (calibrate/fit/harness_host.py)
from calibrate.fit import host_spread  # (calibrate/fit/host_spread.py)
from calibrate.validate import host_transfer  # (calibrate/validate/host_transfer.py)
from calibrate.validate import newcomer  # (calibrate/validate/newcomer.py)
from calibrate.pair import harness_kernel_classes  # (calibrate/pair/harness_kernel_classes.py)
from calibrate.fit import harness_passes  # (calibrate/fit/harness_passes.py)
from calibrate.pair import harness_runs  # (calibrate/pair/harness_runs.py: the timm-harness rows, the fit/held-out split, predictions)
from calibrate.validate.evidence import grouped_widths
from calibrate.validate.figures_common import DATA, fitted_layers, jsonl, pct
from calibrate.validate.residuals_by_size import ratios_by_size

H200 = "gpu_models/h200.json"
HOST = "gpu_models/hosts/h200-vm.json"
MEASURED = os.path.join(DATA, "measured.jsonl")
# MLPerf Inference, ResNet-50 v1.5 offline, 1 GPU, samples/s (docs/validation.md "TensorRT-like int8 against
# MLPerf": mlperf_log_summary.txt of closed/NVIDIA/results/<system>/resnet50/Offline, inference_results v3.0/v3.1).
MLPERF = (("h100", "H100", 88526), ("a100", "A100", 42379), ("l4", "L4", 12882))


def g3(x):
    """Three significant figures, trailing zeros kept (0.780), as the GPU-file tables print them."""
    return f"{x:#.3g}".rstrip(".")


def nice(x, digits=1):
    """x with `digits` decimals, or as an integer where it is one at that precision."""
    s = f"{x:.{digits}f}"
    return s[:s.index(".")] if float(s) == int(float(s)) else s


def and_list(words):
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def layer_predictions(runs, path):
    """`tilewave layers PATH --gpu h200`, one dict per line."""
    return [json.loads(x) for x in runs.text("layers", path, "--gpu", "h200").splitlines()]


def measured_rows():
    return [r for r in jsonl(MEASURED) if not r.get("header")]


def cliff(runs):
    """{4095 or 4096: (measured, predicted)} of the fp16 M = N = K GEMMs of measured.jsonl."""
    return {r["M"]: (r["measured_us"], r["pred_us"]) for r in layer_predictions(runs, MEASURED)
            if r["op"] == "gemm" and r["dtype"] == "fp16" and r["M"] == r["N"] == r["K"] and r["M"] in (4095, 4096)}


# --- What was measured on the H200 -------------------------------------------------------------

def calibration_measured(runs):
    """docs/calibration.md: the counts of the committed H200 files (calibrate/data/h200/), counted in them."""
    layers = jsonl(os.path.join(DATA, "layers.jsonl"))
    meas = jsonl(MEASURED)
    header, timed = meas[0], meas[1:]
    status = collections.Counter(r["status"] for r in timed)
    layer_keys = {k for r in layers for k in r}
    shape = lambda r: json.dumps({k: v for k, v in r.items() if k in layer_keys}, sort_keys=True)
    left = collections.Counter(map(shape, layers)) - collections.Counter(map(shape, timed))
    missing = [i + 1 for i, r in enumerate(layers) if shape(r) in left]
    nets = sorted({m.split("@")[0] for r in layers for m in r.get("models", [])})
    key = lambda r: json.dumps({k: r[k] for k in ("op", "dtype", "N", "C", "H", "W", "K", "R", "S", "stride", "pad",
                                                  "groups") if k in r}, sort_keys=True)
    fast = {key(r): r["measured_us"] for r in timed if r["status"] == "ok"}
    legacy = [r["measured_us"] / fast[key(r)] for r in jsonl(os.path.join(DATA, "measured_legacy_only.jsonl.gz"))[1:]
              if r.get("status") == "ok" and r["op"] == "conv" and r.get("groups", 1) == r["C"] > 1 and key(r) in fast]
    bench = [r for r in jsonl(os.path.join(DATA, "netbench.jsonl")) if not r.get("header")]
    profiled = jsonl(os.path.join(DATA, "network_kernels.jsonl.gz"))
    fw = collections.Counter((r["op"], r.get("mode")) for r in jsonl(os.path.join(DATA, "framework_pytorch.jsonl"))
                             if not r.get("header"))
    sweep = jsonl("calibrate/measure/sweeps/grouped_fp16.jsonl")
    grouped = [r for r in jsonl(os.path.join(DATA, "grouped_measured.jsonl")) if not r.get("header")]
    rest = [r for r in jsonl(os.path.join(DATA, "grouped_measured_w232_256.jsonl")) if not r.get("header")]
    elt = jsonl(os.path.join(DATA, "eltwise_in_network.jsonl"))
    unseen = [len({r["model"] for r in jsonl(os.path.join(DATA, f"netbench_{s}.jsonl")) if not r.get("header")})
              for s in ("heldout_variants", "heldout_variants_more", "heldout_largest", "heldout_segmentation")]
    state = [dict(zip([c.strip() for c in f[0].split(",")], [c.strip() for c in f[1].split(",")]))
             for f in (open(os.path.join(DATA, n)).read().splitlines()
                       for n in ("gpu_state_measure.csv", "gpu_state_netbench.csv"))]
    one = lambda col: "/".join(sorted({s[col] for s in state}))
    selftest = open(os.path.join(DATA, "selftest.log")).read().splitlines()
    checks = collections.Counter(line.split()[0] for line in selftest if line.split()[0] in ("PASS", "FAIL"))
    batches = sorted({r["batch"] for r in bench})
    repeats = sorted({r["repeats"] for r in bench})
    if not missing:
        skipped = "every line of `layers.jsonl`"
    elif missing == [1]:
        first = layers[0]
        skipped = (f"every line of `layers.jsonl` but the first ({first['models'][0]}'s "
                   f"{first['R']}\u00d7{first['S']} {first['op']})")
    else:
        skipped = f"`layers.jsonl` less {len(missing)} lines"
    widths = and_list([str(w) for w in sorted({r["C"] // r["groups"] for r in rest})])
    return ["Counted in the files:", "",
            f"- `layers.jsonl`: {len(layers):,} layer problems, from the {len(nets)} bundled networks and the sweeps.",
            f"- `measured.jsonl`: {skipped}, {status['ok']:,} timed (`ok`) and {status['unsupported']} `unsupported`; "
            f"the header's SM clock {header['sm_clock_mhz']} MHz.",
            f"- `measured_legacy_only.jsonl.gz`: a depthwise convolution takes up to {max(legacy):.0f}\u00d7 its time "
            "in `measured.jsonl`.",
            f"- `netbench.jsonl`: {len({r['model'] for r in bench})} networks \u00d7 batch "
            f"{'/'.join(map(str, batches))}, {len(bench)} configurations, each the median of "
            f"{'/'.join(map(str, repeats))} repeats; `network_kernels.jsonl.gz` profiles {len(profiled)}.",
            f"- `framework_pytorch.jsonl`: {fw[('pool', 'max')] + fw[('pool', 'avg')]} pooling "
            f"({fw[('pool', 'max')]} max, {fw[('pool', 'avg')]} average) and {fw[('softmax', None)]} LayerNorm layers.",
            f"- `grouped_measured.jsonl`: {len(grouped)} of the {len(sweep)} rows of `grouped_fp16.jsonl`; "
            f"`grouped_measured_w232_256.jsonl` the last {len(rest)} (group widths {widths}).",
            f"- `eltwise_in_network.jsonl`: {len(elt):,} ReLU/Add kernels of {len({r['model'] for r in elt})} networks "
            "(the profiles whose kernel counts match their ONNX nodes).",
            f"- `netbench_heldout_*.jsonl`: {', '.join(map(str, unseen[:-1]))} and {unseen[-1]} networks (runs 2, 3, 4 "
            "and 6).",
            f"- `gpu_state_*.csv`: SM {one('clocks.current.sm [MHz]')} idle, {one('clocks.max.sm [MHz]')} max, "
            f"{one('power.limit [W]').replace('.00 W', ' W')} power limit; `selftest.log`: {checks['PASS']} checks "
            f"PASS, {checks['FAIL']} FAIL."]


def calibration_runner_timing(runs):
    """docs/calibration.md: how measured.jsonl's layers were timed, from its header and each row's `timing`."""
    meas = jsonl(MEASURED)
    header = meas[0]
    timing = [tuple(map(int, re.match(r"graph R=(\d+) x(\d+)", r["timing"]).groups())) for r in meas[1:] if "timing" in r]
    launches, replays = sorted({t[0] for t in timing}), sorted({t[1] for t in timing})
    most = lambda i, v: sum(t[i] == v for t in timing)
    return [f"Each time is the median of {replays[0]}\u2013{replays[-1]} replays ({replays[-1]} for "
            f"{most(1, replays[-1]):,} of the {len(timing):,} timed layers; the header's `repeats` is "
            f"{header['repeats']}) of a CUDA graph of {launches[0]}\u2013{launches[-1]} launches ({launches[-1]} for "
            f"{most(0, launches[-1]):,}) over buffers rotated beyond the {header['l2_bytes'] / 2 ** 20:.0f} MB L2, so "
            f"every layer reads its operands from DRAM; a convolution's graph-API path times up to "
            f"{header['conv_plans']} plans."]


def calibration_framework_layers(runs):
    """docs/calibration.md: PyTorch's pooling and LayerNorm layers (framework_pytorch.jsonl) beside the runner's cuDNN pooling (measured.jsonl)."""
    fw = [r for r in jsonl(os.path.join(DATA, "framework_pytorch.jsonl")) if not r.get("header")]
    g = json.load(open(H200))
    held = set(g["network_calibration"]["networks_held_out"])
    nets = {r["model"] for r in fw}
    ln = sorted({r["model"] for r in fw if r["onnx_op"] == "LayerNormalization"})
    stem = next(r for r in fw if (r["model"], r["model_batch"], r["onnx_op"]) == ("resnet18", 1, "MaxPool"))
    same = ("op", "mode", "N", "C", "H", "W", "R", "S", "stride", "pad", "dtype")
    cudnn = next(r for r in measured_rows() if "models" in r and all(r.get(k) == stem[k] for k in same))
    bundled = len({r["model"] for r in jsonl(os.path.join(DATA, "netbench.jsonl")) if not r.get("header")})
    unseen = {os.path.splitext(f)[0] for d in os.listdir("onnx_models") if d.startswith("heldout_")
              for f in os.listdir(os.path.join("onnx_models", d))}
    assert not nets & unseen, "framework_pytorch.jsonl has kernels of unseen networks"
    return [f"The ResNet stem's {stem['R']}\u00d7{stem['S']}/{stem['stride'][0]} max pool takes "
            f"{stem['measured_us']:.1f} \u00b5s in PyTorch at batch 1 and {cudnn['measured_us']:.1f} \u00b5s through "
            f"cuDNN. The paired kernels come from {len(nets)} of the {bundled} bundled networks, {len(nets & held)} "
            f"of them among the {len(held)} that the network fit holds out (the LayerNorms all from "
            f"{and_list(ln)}); none from the networks of `onnx_models/heldout_*/`."]


# --- The fit ------------------------------------------------------------------------------------

def calibration_fit(runs):
    """docs/calibration.md: the layer and network fits' counts, from gpu_models/h200.json's `calibration` and `network_calibration` records and netbench.jsonl."""
    g = json.load(open(H200))
    c, n = g["calibration"], g["network_calibration"]
    bench = [r for r in jsonl(n["data"]) if not r.get("header")]
    nets = sorted({r["model"] for r in bench})
    fitted = [r for r in bench if r["model"] not in n["networks_held_out"]]
    batches = sorted({r["batch"] for r in bench})
    assert n["networks_fitted"] == len({r["model"] for r in fitted})
    out = collections.defaultdict(list)
    for run in n["runs_not_fitted"]:
        m = re.match(r"(\S+)@(\d+) \((\d+) vs (\d+) kernels\)", run)
        out[m[1]].append((int(m[2]), int(m[3]), int(m[4])))
    left = []
    for model, v in out.items():
        at = "every batch" if len(v) == len(batches) else "batch " + and_list([str(b) for b, _, _ in v])
        counts = sorted({(p, k) for _, p, k in v})
        left.append(f"{model} at {at} ({', '.join(f'{p} vs {k}' for p, k in counts)})")
    total = c["layers_held_out"] + c["layers_fitted"]
    return [f"A seeded {c['layers_held_out'] / total:.0%} of the layers ({c['layers_held_out']:,} of {total:,}, "
            f"seed {c['holdout_seed']}) is held out and never seen by the fit. `fit-networks` fits "
            f"{n['networks_fitted']} of the {len(nets)} networks, holding out {len(n['networks_held_out'])} whole "
            f"networks (all their batches): the L2 terms on the {n['kernel_stage']['kernels_fitted']:,} ReLU/Add "
            f"kernels of `eltwise_in_network.jsonl` timed inside the fitted networks, then `launch_gap_us` on "
            f"{len(fitted) - len(n['runs_not_fitted'])} of the {n['networks_fitted']} \u00d7 {len(batches)} runs, "
            f"those whose kernel count the lowering matches within {n['kernel_match']:.0%}. Left out (kernels "
            f"lowered vs launched by PyTorch): {'; '.join(left)}."]


PARAM_TABLE = (  # (label, parameters, unit): the two columns of calibration.md's table
    (("tc_efficiency", ("tc_efficiency",), ""), ("fixed_us_gemm", ("fixed_us_gemm",), " \u00b5s")),
    (("conv_efficiency", ("conv_efficiency",), ""), ("fixed_us_memory", ("fixed_us_memory",), " \u00b5s")),
    (("conv_strided_efficiency", ("conv_strided_efficiency",), ""), ("fixed_us_pool", ("fixed_us_pool",), " \u00b5s")),
    (("conv_misaligned_efficiency", ("conv_misaligned_efficiency",), ""),
     ("fixed_us_direct", ("fixed_us_direct",), " \u00b5s")),
    (("misaligned_efficiency (GEMM, K)", ("misaligned_efficiency",), ""),
     ("ramp_mb / ramp_bw_efficiency", ("ramp_mb", "ramp_bw_efficiency"), "")),
    (("misaligned_n_efficiency (GEMM, N only)", ("misaligned_n_efficiency",), ""),
     ("eltwise / copy / reduce bw efficiency", ("eltwise_bw_efficiency", "copy_bw_efficiency",
                                                 "reduce_bw_efficiency"), "")),
    (("tap_overhead_steps", ("tap_overhead_steps",), ""),
     ("pool / softmax bw efficiency", ("pool_bw_efficiency", "softmax_bw_efficiency"), "")),
    (("pipeline_fill_steps", ("pipeline_fill_steps",), ""), ("row_ns", ("row_ns",), " ns")),
    (("tile_reuse_exponent", ("tile_reuse_exponent",), ""), ("gemm_bw_efficiency", ("gemm_bw_efficiency",), "")),
    (("split_k_overhead_us", ("split_k_overhead_us",), " \u00b5s"),
     ("direct_conv_efficiency / direct_bw_efficiency", ("direct_conv_efficiency", "direct_bw_efficiency"), "")),
    (("wave_overhead_us", ("wave_overhead_us",), " \u00b5s"),
     ("grouped_fallback_efficiency / transform_bw_efficiency", ("grouped_fallback_efficiency",
                                                               "transform_bw_efficiency"), "")),
    (None, ("l2_bw_factor / l2_reuse_fraction / launch_gap_us", ("l2_bw_factor", "l2_reuse_fraction",
                                                                 "launch_gap_us"), " \u00b5s")),
)


def param_cell(p, cell):
    """(label, value) cells of one parameter group: 3 significant figures, 2 decimals below 0.1, MB and the unit."""
    if cell is None:
        return ["", ""]
    label, names, unit = cell
    fmt = lambda n: (f"{p[n]:.2f}" if p[n] < 0.1 else g3(p[n])) + (" MB" if n == "ramp_mb" else "")
    return [label, " / ".join(map(fmt, names)) + unit]


def calibration_params(runs):
    """docs/calibration.md: the fitted H200 values, gpu_models/h200.json `params`."""
    p = json.load(open(H200))["params"]
    listed = {n for row in PARAM_TABLE for cell in row if cell for n in cell[1]}
    assert listed == set(p), f"h200.json params not in the table: {sorted(set(p) - listed)}"
    lines = ["| parameter | value | | parameter | value |", "| --- | ---: | --- | --- | ---: |"]
    for left, right in PARAM_TABLE:
        cells = param_cell(p, left) + [""] + param_cell(p, right)
        lines.append("|" + "|".join(f" {c} " if c else " " for c in cells) + "|")
    return lines


def calibration_physics(runs):
    """docs/calibration.md: the fitted values read as physics, gpu_models/h200.json and the 4096^3 GEMM of measured.jsonl."""
    g = json.load(open(H200))
    p = g["params"]
    lo = runs.param_table()["tile_reuse_exponent"][1]
    assert p["tile_reuse_exponent"] - lo < 0.01, "tile_reuse_exponent is no longer at the bottom of its range"
    us = cliff(runs)[4096][0]
    peak = g["tensor_tflops"]["fp16"]
    fixed = sorted((p["fixed_us_gemm"], p["fixed_us_memory"]))
    return [f"Read as physics: the best GEMM tile sustains {p['tc_efficiency']:.0%} of the {peak:.0f} TFLOP/s dense "
            f"peak (the 4096\u00b3 fp16 GEMM measured here, {us:.1f} \u00b5s, is {2 * 4096 ** 3 / us / 1e6:.0f} TFLOP/s); "
            f"cuDNN's convolutions run at {p['conv_efficiency']:.0%} of cuBLAS's rate per MAC, strided ones at "
            f"{p['conv_strided_efficiency']:.0%} of that; a GEMM whose K misses the 8-element alignment runs its main "
            f"loop at {p['misaligned_efficiency']:.0%} of the aligned rate, one whose N alone misses it at "
            f"{p['misaligned_n_efficiency']:.0%}; a convolution spends {p['tap_overhead_steps']:.1f} main-loop steps "
            f"setting up each filter tap, once per kernel; every wave costs {p['wave_overhead_us']:.1f} \u00b5s and every "
            f"kernel {fixed[0]:.1f}\u2013{fixed[1]:.1f} \u00b5s on top of its work under graph replay (`fixed_us_gemm`, "
            f"`fixed_us_memory`), a direct convolution {p['fixed_us_direct']:.1f} \u00b5s and PyTorch's pooling kernels "
            f"{p['fixed_us_pool']:.0f} \u00b5s; the first {p['ramp_mb']:.1f} MB of a kernel's traffic move at "
            f"{p['ramp_bw_efficiency']:.2f} of DRAM bandwidth (too few bytes in flight) and the rest at the class's "
            f"share; PyTorch's LayerNorm costs {p['row_ns']:.1f} ns per row; a grouped convolution whose group width "
            f"is not a power of two runs its main loop at {p['grouped_fallback_efficiency']:.0%} of the native rate "
            f"and moves its input and output through layout transforms at {p['transform_bw_efficiency']:.2f} of DRAM "
            f"bandwidth. Inside a network each kernel waits {g3(p['launch_gap_us'])} \u00b5s for the one before it, and "
            f"L2 keeps about the most recent {p['l2_reuse_fraction'] * g['l2_mb']:.0f} MB "
            f"({p['l2_reuse_fraction']:.0%} of its {g['l2_mb']} MB) of what kernels wrote, served at "
            f"{p['l2_bw_factor']:.1f}\u00d7 DRAM bandwidth. `tile_reuse_exponent` sits at the bottom of its range "
            f"({p['tile_reuse_exponent']:.2f}, bound {lo:g}): the data gives it no work the other terms do not "
            f"already do."]


# --- Host -----------------------------------------------------------------------------------------

def calibration_host_micro(runs):
    """docs/calibration.md: the single-op host timings, calibrate/data/h200/timm_harness/fit_heldout/host_micro.jsonl."""
    m = {r["case"]: r for r in jsonl(os.path.join(harness_runs.RUNS[0], "host_micro.jsonl"))}
    us = lambda case: f"{m[case]['host_us_median']:.1f} \u00b5s"
    ew = sorted(m[c]["host_us_median"] for c in ("relu_module", "add_tensor", "silu_functional"))
    calls = sorted({r["calls"] for r in m.values()})
    return [f"- **Single ops**, each called {'/'.join(map(str, calls))} times back to back without a synchronize,",
            "  tiny tensors, under the harness's autocast and `inference_mode`",
            f"  (`host_micro.jsonl`): an AMP `nn.Conv2d` call takes {us('conv_module_amp')} of host time",
            f"  (its input, weight and bias casts included), an AMP `nn.Linear` {us('linear_module_amp')}, a",
            f"  `BatchNorm2d` on fp16 input {us('batchnorm_module_fp16_in')}, ReLU, add and SiLU "
            f"{ew[0]:.1f}\u2013{ew[-1]:.1f} \u00b5s, a",
            f"  `.to(float16)` {us('cast_to_fp16')}, an `Identity` module {us('identity_module')}, a `flatten` "
            f"{us('view_flatten')}."]


def host_fit(runs):
    """fit/harness_host.py's fit now (fit_both), computed once."""
    if "host_fit" not in runs.cache:
        runs.cache["host_fit"] = harness_host.fit_both(runs.tw, pmap)
    return runs.cache["host_fit"]


def calibration_host_fit(runs):
    """docs/calibration.md: `python3 -m calibrate.fit.harness_host build/analyzer/tilewave` now, beside gpu_models/hosts/h200-vm.json as shipped: the calibration machine's fit families and the corpus's held-out families."""
    r = host_fit(runs)
    shipped = json.load(open(HOST))["params"]
    micro = r["micro"]
    # The file keeps the scaled costs only: its factor is their sum over the single-op costs'.
    shipped_scale = sum(shipped.get(harness_host.PARAM[k], 0.0) for k in micro) / sum(micro.values())
    err = lambda e: f"{pct(statistics.median(e))} ({pct(harness_host.p90(e))})"
    kinds = harness_host.kinds_of(r["held"])

    def row(label, scale, params, errs):
        ratios = harness_host.kind_ratios(params, r["held"], kinds)
        return (f"| {label} | {scale:.3f} | {params['host_inner_launch_us']:.2f} \u00b5s | "
                f"{params.get('host_view_us', 0):.2f} \u00b5s | {nice(params['host_step_us'])} | {err(errs)} | "
                + " / ".join(f"{ratios[k][1]:.2f}" for k in ("cnn", "hybrid", "vit")) + " |")
    label = {"op": "op", "conv": "conv", "gemm": "GEMM", "norm": "BatchNorm", "cast": "cast", "view": "view"}
    n_kind = harness_host.kind_ratios(r["params"], r["held"], kinds)
    no_views = dict(r["params"], host_view_us=0.0)
    return ["| host values | factor | `host_inner_launch_us` | `host_view_us` | `host_step_us` | fit families: median "
            "error (p90) | corpus held-out: predicted / measured, CNN / hybrid / ViT |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            row("`h200-vm.json` as shipped", shipped_scale, shipped, harness_host.errors(shipped, r["runs"])),
            row("`harness_host.py` now", r["scale"], r["params"], r["errs"]),
            row("the same without views (`host_view_us` 0)", r["scale"], no_views,
                harness_host.errors(no_views, r["runs"])),
            "",
            f"Fitted on {len(r['runs'])} runs of the calibration machine ({r['networks'] // 2} networks \u00d7 2 "
            f"layouts \u00d7 batch 1 and 16). Judged on {len(r['held'])} runs of the corpus's held-out families "
            "(" + ", ".join(f"{n} {k}" for k, (n, _) in n_kind.items()) + "; batch 1 and 16, both layouts, AMP) "
            "on the machines that timed them. The per-op costs it takes from the single ops: "
            + ", ".join(f"{label[k]} {v:.1f}" for k, v in micro.items())
            + " \u00b5s; the factor of the shipped file is its per-op costs over these."]


def calibration_host_defaults(runs):
    """docs/calibration.md: the host parameters gpu_models/hosts/h200-vm.json leaves to tilewave's defaults (host_param_table, analyzer/src/schedule/schedule.cpp)."""
    d = runs.param_table("host")
    frozen = json.load(open(HOST))["params"]
    # The one writer stores every parameter; these two are the table's starting values, not fitted ones.
    assert all(frozen.get(k, d[k][0]) == d[k][0] for k in ("launch_latency_us", "sync_us"))
    return [f"`launch_latency_us` ({nice(d['launch_latency_us'][0])} \u00b5s) and `sync_us` "
            f"({nice(d['sync_us'][0])} \u00b5s) are tilewave's defaults, not fitted: at batch 1 the step is the "
            "host's issue time plus these, and they are within the host fit's error."]


def calibration_host_spread(runs):
    """docs/calibration.md: how the host issue time moves between H200 machines of one kind (calibrate/fit/host_spread.py), and the machine_spread gpu_models/hosts/h200-vm.json records."""
    lines, (low, high) = host_spread.spread(host_spread.bench_rows(host_spread.CALIBRATION),
                                            {r: host_spread.bench_rows(r) for r in host_spread.OTHER_MACHINES})
    recorded = json.load(open(HOST))["machine_spread"]
    assert (round(low, 2), round(high, 2)) == (recorded["low"], recorded["high"]), "h200-vm.json's machine_spread is stale"
    parts = ", ".join(f"{n} settings of `{os.path.basename(run)}/` pass {p} at {m:.2f}\u00d7" for run, p, n, m in lines)
    return [f"Against the calibration machine (`fit_heldout/`), the same network, layout, batch and precision at "
            f"batch 1 and 16 took a median of: {parts}. `h200-vm.json` records `machine_spread` "
            f"{recorded['low']:.2f}\u2013{recorded['high']:.2f}."]


def calibration_host_transfer(runs):
    """docs/calibration.md: a host file made for another H200 machine from a few of its networks, against h200-vm.json, on its other networks (calibrate/validate/host_transfer.py)."""
    return host_transfer.table(runs.tw)


HOST_MISSES = (("Res2Net", "res2net"), ("MixNet", "mixnet"), ("CSPDarkNet", "cspdarknet"))


def calibration_host_misses(runs):
    """docs/calibration.md: the worst miss (predicted / measured step - 1, as `calibrate/validate/harness.py build/analyzer/tilewave` lists them) of the networks the host model misses most, over both timm-harness calls."""
    rows = [r for run in harness_runs.RUNS for r in harness_runs.rows(run) if any(m in r["model"] for _, m in HOST_MISSES)]
    preds = pmap(lambda r: harness_runs.predict(runs.tw, r["model"], r["layout"], r["batch"]), rows)
    worst = {name: min(p["total"]["time_us"] / (r["step_ms"] * 1e3) - 1 for r, p in zip(rows, preds) if m in r["model"])
             for name, m in HOST_MISSES}
    short = sorted(-e for e in worst.values())
    assert short[0] > 0, "the host misses are no longer short"
    return ["Where the host model is weakest: networks with many small Python-level ops that the ONNX graph does "
            f"not show one for one ({', '.join(n for n, _ in HOST_MISSES)}) are predicted up to "
            f"{100 * short[0]:.0f}\u2013{short[-1]:.0%} short (each one's worst network, layout and batch over both "
            "timm-harness calls, predicted / measured step \u2212 1 as `calibrate/validate/harness.py` lists its "
            "largest misses); a per-module cost is not modelled (`host_step_us` fits to 0)."]


# --- Layout and precision sets ---------------------------------------------------------------------

def calibration_passes(runs):
    """docs/calibration.md: `python3 -m calibrate.fit.harness_passes build/analyzer/tilewave` (without --write) against gpu_models/h200.json's sets, and pair/harness_kernel_classes.py --set fit's profiled BatchNorm kernels at batch 1."""
    with tempfile.TemporaryDirectory() as tmp:
        sets = harness_passes.fit_sets(runs.tw, harness_passes.calibration_runs(),
                                       os.path.join(harness_runs.base_gpu_dir(tmp), "h200.json"), pmap,
                                       out=lambda line: None)
    g = json.load(open(H200))
    eager, base = g["runtime_params"]["eager"]["params"], g["params"]
    nchw, nhwc = sets["eager nchw amp"], sets["eager nhwc amp"]
    floor = eager["fixed_us_memory"]

    def reductions(fitted):
        rows = (f", {fitted['reduce_row_ns']:.2f} ns per contiguous row" if "reduce_row_ns" in fitted
                else ", no contiguous rows to fit a row rate on")
        return f"floor {floor:.2f} + {fitted['fixed_us_reduce_extra']:.2f} \u00b5s{rows}"
    fit, _ = harness_runs.zoo_split()
    nets = len({r["model"] for r in harness_runs.rows(harness_runs.RUNS[0]) if r["model"] in fit})
    batches = sorted({r["batch"] for r in harness_runs.rows(harness_runs.RUNS[0])})
    sums = harness_kernel_classes.class_sums(None, "fit")
    bn = {layout: sums[(layout, 1)] for layout in ("channels_last", "nchw")}
    counts = sorted({int(s["mn_bn"]) for s in bn.values()})
    lines = [f"For each class it solves, over batch {and_list([str(b) for b in batches])}, the summed profiled time",
             "against `count \u00b7 fixed + variable / rate`; for the transforms, each one paired in",
             "launch order with tilewave's (docs: the script's docstring). It",
             f"prints, from the fit families' {nets} networks:",
             "",
             "| set | BatchNorm kernel | transforms | depthwise (direct) | reductions |",
             "| --- | --- | --- | --- | --- |",
             f"| `eager nchw amp` | floor {floor:.2f} + {nchw['fixed_us_norm_extra']:.2f} \u00b5s, "
             f"{nchw['norm_bw_efficiency']:.3f} of DRAM bandwidth | floor {nchw['fixed_us_transform']:.2f} \u00b5s, "
             f"{nchw['transform_bw_efficiency']:.3f} | floor {nchw['fixed_us_direct']:.2f} \u00b5s (eager set: "
             f"{eager['fixed_us_direct']:.2f}), direct rates \u00d7 "
             f"{nchw['direct_conv_efficiency'] / base['direct_conv_efficiency']:.3f} | {reductions(nchw)} |",
             f"| `eager nhwc amp` | floor {floor:.2f} + {nhwc['fixed_us_norm_extra']:.2f} \u00b5s, "
             f"{nhwc['norm_bw_efficiency']:.3f} | none | the eager set's | {reductions(nhwc)} |"]
    # norm_plane_ns is calibrate/validate/norm_planes.py's fit, which --write keeps: not this fit's to compare
    stored = {k: {n: v for n, v in g["runtime_params"][k]["params"].items() if n != "norm_plane_ns"} for k in sets}
    if stored != sets:
        lines.append(f"`gpu_models/h200.json` holds other values ({json.dumps(stored, sort_keys=True)}): rerun with --write.")
    return lines + ["",
                    "(the BatchNorm floor is the eager set's `fixed_us_memory` plus",
                    "`fixed_us_norm_extra`; the rate is `norm_bw_efficiency` =",
                    "`norm_max_bw_efficiency`, so L2 hits do not make it faster). The",
                    f"NHWC kernel's floor is the striking one: at batch 1 the fit families' "
                    f"{'/'.join(f'{c:,}' for c in counts)} cuDNN BatchNorm kernels take "
                    f"{bn['channels_last']['m_bn'] / 1e3:.1f} ms in NHWC and {bn['nchw']['m_bn'] / 1e3:.1f} ms in NCHW",
                    "(`calibrate/pair/harness_kernel_classes.py build/analyzer/tilewave --set fit`)."]


# --- Held-out layers and where the model is weakest --------------------------------------------------

def calibration_int8_example(runs):
    """docs/calibration.md: the int8 and fp16 times of one convolution in calibrate/data/h200/measured.jsonl."""
    shape = {"N": 32, "C": 64, "H": 28, "K": 8, "R": 3}
    t = {r["dtype"]: r["measured_us"] for r in measured_rows()
         if r["op"] == "conv" and r.get("status") == "ok" and all(r.get(k) == v for k, v in shape.items())}
    return ["int8 convolutions are the outlier for a reason outside the model: the runner",
            "times them through cuDNN's legacy int8 path (no graph-API engine took them),",
            "which on the H200 is slower than fp16 \u2014 for example a 32\u00d764\u00d728\u00d728 \u2192 8-channel",
            f"3\u00d73 convolution takes {t['int8']:.1f} \u00b5s in int8 and {t['fp16']:.1f} \u00b5s in fp16 "
            "(`grep '\"C\":64,\"H\":28' calibrate/data/h200/measured.jsonl | grep '\"K\":8,' | grep '\"R\":3' | "
            "grep '\"N\":32'`)."]


def calibration_weakest(runs):
    """docs/calibration.md: `calibrate validate` of the fitted layer set per class, `calibrate/validate/evidence.py build/analyzer/tilewave grouped`, `residuals_by_size.py` and the GEMM cliff (`tilewave layers calibrate/data/h200/measured.jsonl --gpu h200`)."""
    s = runs.stats(fitted_layers(runs.tmp))
    path = os.path.join(DATA, "grouped_measured.jsonl")
    rows = [r for r in jsonl(path) if "measured_us" in r]
    w = {cg: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
         for cg, v in grouped_widths(rows, layer_predictions(runs, path)).items()}
    pow2 = lambda cg: cg & (cg - 1) == 0
    fast = (32, 64, 128)
    between = [cg for cg in sorted(w) if 32 < cg < 128 and not pow2(cg)]
    fall = sorted((w[cg][1], cg) for cg in w if not pow2(cg))
    narrow = sorted(w[cg][1] for cg in w if pow2(cg) and cg <= 16)
    conv3 = {d: statistics.median(v) for d, v in ratios_by_size(layer_predictions(runs, MEASURED))["conv 3x3"].items()}
    big = sorted(v for d, v in conv3.items() if d >= 10)
    c = cliff(runs)
    rate = lambda i: f"{c[4095][i] / c[4096][i]:.1f}"
    return [f"- **Grouped convolutions** (RegNet, ResNeXt; {s['conv_grouped']['n']} held out, median "
            f"{s['conv_grouped']['median_ape']:.0%}):",
            "  cuDNN has native NHWC grouped kernels only for power-of-two group widths.",
            "  `calibrate/validate/evidence.py build/analyzer/tilewave grouped` prints the sweep",
            "  (`grouped_measured.jsonl`) per width: the powers of two "
            f"{and_list([str(cg) for cg in fast])} run",
            f"  at a median {and_list([f'{w[cg][0]:.0f}' for cg in fast])} TFLOP/s, the widths between them "
            f"({', '.join(map(str, between))})",
            f"  at {min(w[cg][0] for cg in between):.0f}\u2013{max(w[cg][0] for cg in between):.0f}. The fallback term "
            f"({json.load(open(H200))['params']['grouped_fallback_efficiency']:.0%} main-loop rate plus",
            "  transforms) is an average over engines that vary a lot: its median",
            f"  predicted/measured per width runs from {fall[0][0]:.2f} ({fall[0][1]}) to {fall[-1][0]:.2f} "
            f"({fall[-1][1]}). Native",
            f"  narrow groups (4\u201316 channels) are predicted {narrow[0]:.2f}\u2013{narrow[-1]:.2f}\u00d7 too slow: their",
            "  kernels pack several groups into one tile, the model pads each.",
            "- **Copies and pooling**: the runner's copy kernel is a best case (predicted",
            f"  {math.exp(s['copy']['median_log_ratio']) - 1:.0%} slow); PyTorch's pooling kernels (a "
            f"{json.load(open(H200))['params']['fixed_us_pool']:.0f} \u00b5s fixed cost, then a low",
            f"  bandwidth) have a {s['pool']['median_ape']:.0%} median error on {s['pool']['n']} held-out layers.",
            "- **Mid-size 3\u00d73 convolutions** are predicted too fast: median",
            f"  predicted/measured {conv3[8]:.2f} around 10\u2078 FLOPs and {conv3[9]:.2f} around 10\u2079, "
            f"{big[0]:.2f}\u2013{big[-1]:.2f}",
            "  from 10\u00b9\u2070 up",
            "  (`calibrate/validate/residuals_by_size.py build/analyzer/tilewave calibrate/data/h200/measured.jsonl h200`,",
            "  all fp16 runner layers, fitted and held out).",
            "- **The GEMM alignment cliff** is reproduced, somewhat overshot: 4096\u00b3 fp16",
            f"  measured {c[4096][0]:.1f} \u00b5s, predicted {c[4096][1]:.1f} \u00b5s; 4095\u00b3 measured "
            f"{c[4095][0]:.1f} \u00b5s, predicted",
            f"  {c[4095][1]:.1f} \u00b5s \u2014 a {rate(0)}\u00d7 cliff predicted as {rate(1)}\u00d7. The two "
            "misalignment parameters",
            "  are fitted on every misaligned GEMM of the sweeps, many of them slower per",
            "  FLOP than 4095\u00b3."]


# --- Carry-over ------------------------------------------------------------------------------------

def calibration_carry(runs):
    """docs/calibration.md: DRAM bytes per SM cycle of the GPU files, the carried RTX 3090 NCHW row of calibrate/data/other_gpus/validate.md (other_gpus.py's report) and `tilewave sweep onnx_models/resnet50.onnx --gpu ID --dtype int8 --runtime tensorrt --batch 256` against MLPerf."""
    gpu = lambda i: json.load(open(f"gpu_models/{i}.json"))
    per_cycle = lambda g: g["dram_bandwidth_gbs"] * 1e3 / (g["sms"] * g["boost_clock_mhz"])
    h = gpu("h200")
    ref = per_cycle(h)
    others = [(i, label, per_cycle(gpu(i))) for i, label in (("a100", "A100"), ("rtx3090", "RTX 3090"),
                                                             ("rtx4090", "RTX 4090"))]
    row = next(line for line in open("calibrate/data/other_gpus/validate.md")
               if line.startswith("| rtx3090 | carried (H200) | eager NCHW | all |"))
    ratio = row.strip("|\n").split("|")[7].strip()
    mlperf = []
    for i, _, published in MLPERF:
        out = json.loads(runs.text("sweep", "onnx_models/resnet50.onnx", "--gpu", i, "--dtype", "int8", "--runtime",
                                   "tensorrt", "--batch", "256", "--format", "json"))
        mlperf.append(f"{out['points'][0]['throughput_per_s'] / published:.2f}")
    scaled = [f"{b:.1f} bytes on the {label}" + (f" (\u00d7{ref / b:.2f})" if ref / b < 3 else "")
              for _, label, b in others]
    return ["The bandwidth rule is why the H200's fractions rise elsewhere: "
            f"its kernels are limited by the SMs more than by {h['memory_type']} ({h['dram_bandwidth_gbs'] / 1e3:.1f} "
            f"TB/s for {h['sms']} SMs at {h['boost_clock_mhz'] / 1e3:.2f} GHz, {ref:.1f} bytes per SM cycle), and a "
            f"GPU with less DRAM bandwidth per SM cycle reaches a larger fraction of it: {', '.join(scaled)} (each "
            "`dram_bandwidth_gbs / (sms \u00d7 boost_clock_mhz)` of its GPU file). Carried from the H200 alone, the "
            f"RTX 3090's NCHW file predicts timm's published times at a median ratio of {ratio} (held-out "
            "families, all kinds: `calibrate/validate/other_gpus.py`, as its report "
            "calibrate/data/other_gpus/validate.md keeps it; validation.md \"Other GPUs\", \"carried\" row), and "
            f"MLPerf's ResNet-50 offline at {'/'.join(mlperf)}\u00d7 on the "
            f"{'/'.join(label for _, label, _ in MLPERF)} (`tilewave sweep onnx_models/resnet50.onnx --gpu ID --dtype "
            "int8 --runtime tensorrt --batch 256` over MLPerf's samples/s; validation.md \"TensorRT-like int8 "
            "against MLPerf\")."]


TWO_COMMANDS = DATA + "/two_commands"


def calibration_two_commands(runs):
    """docs/calibration.md: `calibrate/validate/newcomer.py` on the files fit_all.py made from run.py's folder."""
    return newcomer.comparison(runs.tw, TWO_COMMANDS + "/h200.json", TWO_COMMANDS + "/host.json",
                               TWO_COMMANDS + "/run")


def calibration_two_commands_first_run(runs):
    """docs/calibration.md: the same for the files fit_all.py made from run.py's first run (measure_run/)."""
    return newcomer.comparison(runs.tw, TWO_COMMANDS + "/from_measure_run/h200.json",
                               TWO_COMMANDS + "/from_measure_run/host.json", DATA + "/measure_run")


H100 = "calibrate/data/h100"


def calibration_two_commands_h100(runs):
    """docs/calibration.md: the same for the files fit_all.py made from run.py's H100 run, judged on the H100's
    fresh set against the carried gpu_models/h100.json."""
    return newcomer.comparison(runs.tw, H100 + "/two_commands/h100.json", H100 + "/two_commands/host.json",
                               H100 + "/two_commands/run", shipped=("h100", "h200-vm"), judge=H100 + "/corpus/fresh")


FIGURES = {"calibration-two-commands": calibration_two_commands,
           "calibration-two-commands-first-run": calibration_two_commands_first_run,
           "calibration-two-commands-h100": calibration_two_commands_h100, "calibration-measured": calibration_measured, "calibration-runner-timing": calibration_runner_timing,
           "calibration-framework-layers": calibration_framework_layers,
           "calibration-fit": calibration_fit, "calibration-params": calibration_params,
           "calibration-physics": calibration_physics, "calibration-host-micro": calibration_host_micro,
           "calibration-host-fit": calibration_host_fit, "calibration-host-defaults": calibration_host_defaults,
           "calibration-host-spread": calibration_host_spread,
           "calibration-host-transfer": calibration_host_transfer,
           "calibration-host-misses": calibration_host_misses, "calibration-passes": calibration_passes,
           "calibration-int8-example": calibration_int8_example, "calibration-weakest": calibration_weakest,
           "calibration-carry": calibration_carry}
# Figures over the whole measured corpus: the default test run leaves them to ctest's `long` label.
LONG = {"calibration-host-fit", "calibration-two-commands-h100"}
