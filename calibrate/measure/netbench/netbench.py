#!/usr/bin/env python3
"""netbench: end-to-end CNN latency on one GPU, matching tilewave's
`--fusion none` execution model (one ONNX node = one kernel).

Each torchvision model is built with random weights, put in eval mode, has
its BatchNorm folded into the preceding conv (as ONNX export does), is cast to
fp16 / channels_last and timed as a CUDA graph (no launch gaps, like a
deployed runtime).  One JSON line per (model, batch) goes to --out.

GPU run:   python3 netbench.py --out netbench.jsonl [--models a,b] [--batch 1,16,128]
CPU check: python3 netbench.py --device cpu --dry-run --out dry.jsonl
"""
import argparse
import bisect
import datetime
import gc
import copy
import json
import os
import platform
import statistics
import sys
import time

import torch
import torchvision

from calibrate import gpu_state
from calibrate.log import log
from onnx_models import zoo  # the one list of networks and how to build them

FOLD_TOL = 1e-4                      # fp32 relative error allowed after folding
BN_TYPES = (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d)


# ---------------------------------------------------------------- environment

def nvidia_smi(fields):
    """The GPU in use's values of FIELDS, one string each; None where nvidia-smi cannot say."""
    q = gpu_state.nvidia_smi(fields)
    return [v.strip() for v in q.split(",")] if q else None


def as_number(v):
    try:
        return float(v) if "." in v else int(v)
    except (TypeError, ValueError):
        return v


def sm_clock():
    q = nvidia_smi("clocks.sm")
    return as_number(q[0]) if q else None


def header(args, device):
    h = {"header": True, "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
         "host": platform.node(), "python": platform.python_version(),
         "torch": torch.__version__, "torchvision": torchvision.__version__,
         "cuda": torch.version.cuda, "device": str(device), "argv": sys.argv[1:]}
    if device.type == "cuda":
        h["gpu"] = torch.cuda.get_device_name(device)
        h["sm_count"] = torch.cuda.get_device_properties(device).multi_processor_count
        h["cudnn"] = torch.backends.cudnn.version()
        q = nvidia_smi("driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit")
        if q:
            for k, v in zip(("driver", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "power_limit_w"), q):
                h[k] = as_number(v)
    return h


# ---------------------------------------------------------------- model prep

@torch.no_grad()
def randomize_bn(model, seed=0):
    """Random-init BN is the identity (mean 0, var 1, w 1, b 0), which would
    make the folding check vacuous.  Moderate random stats keep activations
    in range while making a wrong fold visible."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, BN_TYPES) and m.running_mean is not None:
            n = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
            m.running_var.copy_(0.5 + torch.rand(n, generator=g))
            if m.affine:
                m.weight.copy_(0.5 + torch.rand(n, generator=g))
                m.bias.copy_(0.1 * torch.randn(n, generator=g))


def fold_fx(model):
    from torch.fx.experimental.optimization import fuse
    return fuse(model, inplace=False)


def fold_traced(model, x):
    """Fallback when fx tracing fails: run one forward with hooks and fold
    every BatchNorm2d whose input tensor *is* the output of a Conv2d called
    once.  Whether that conv output had other consumers is not visible here;
    fold_and_check's fp32 comparison catches that case."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval
    produced, calls, pairs, hooks = {}, {}, [], []

    def conv_hook(m, inp, out):
        calls[m] = calls.get(m, 0) + 1
        produced[id(out)] = (m, out)      # keep `out` alive so ids stay unique

    def bn_hook(m, inp, out):
        calls[m] = calls.get(m, 0) + 1
        src = produced.get(id(inp[0]))
        if src is not None and src[1] is inp[0]:
            pairs.append((src[0], m))

    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.BatchNorm2d):
            hooks.append(m.register_forward_hook(bn_hook))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    slot = {}   # module -> (parent, attribute name), to swap modules in place
    for parent in model.modules():
        for attr, child in parent._modules.items():
            slot[child] = (parent, attr)
    folded = 0
    for conv, bn in pairs:
        if calls[conv] == 1 and calls[bn] == 1 and conv in slot and bn in slot:
            setattr(*slot[conv], fuse_conv_bn_eval(conv, bn))
            setattr(*slot[bn], torch.nn.Identity())
            folded += 1
    return model, folded


def fold_bn(model, x, how="auto"):
    """Returns (model, method).  fx first, then the hook-traced fallback."""
    if how in ("auto", "fx"):
        try:
            return fold_fx(model), "fx"
        except Exception as e:
            if how == "fx":
                raise
            log(None, "    fx fold failed (%s: %s); folding traced conv->bn pairs" % (type(e).__name__, str(e)[:120]))
    if how == "none":
        return model, "none"
    m, n = fold_traced(copy.deepcopy(model), x)
    return m, ("traced" if n else "none")


def drop_conv_bias(model):
    """PyTorch runs a cuDNN conv's bias as a separate add kernel, so a folded
    Conv would cost two kernels where an ONNX Conv node (bias fused in the
    epilogue) costs one.  Numerics do not matter for timing random weights,
    so the bias is removed after the fold has been verified."""
    n = 0
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d) and m.bias is not None:
            m.bias = None
            n += 1
    return n


def rel_err(a, b):
    a, b = a.float(), b.float()
    return (torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(a).clamp_min(1e-30)).item()


class no_tf32:
    """Disable TF32 while checking the fold, so fp32 means fp32 on Ampere+.
    Best effort: if the flags cannot be set, the fp64 re-check covers it."""
    def __enter__(self):
        try:
            self.saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cuda.matmul.allow_tf32 = False
        except Exception:
            self.saved = None

    def __exit__(self, *exc):
        if self.saved is not None:
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = self.saved


@torch.no_grad()
def fold_and_check(model, x, how="auto"):
    """Fold BN, verify in fp32.  Returns (model_to_use, info dict)."""
    if not any(isinstance(m, BN_TYPES) for m in model.modules()):
        return model, {"fold_method": "no_bn", "fold_rel_err": 0.0, "bn_folded": True}
    with no_tf32():
        ref = model(x)
        folded, method = fold_bn(model, x, how)
        err = rel_err(ref, folded(x)) if method != "none" else 0.0
    check = "fp32"
    if method != "none" and err >= FOLD_TOL and x.is_cuda:
        # Possibly TF32 still active: re-check in fp64 before rejecting the fold.
        a, b = copy.deepcopy(model).double(), copy.deepcopy(folded).double()
        err, check = rel_err(a(x.double()), b(x.double())), "fp64"
        del a, b
    ok = method != "none" and err < FOLD_TOL
    info = {"fold_method": method, "fold_rel_err": float("%.3g" % err), "fold_check": check,
            "bn_folded": ok}
    if method != "none" and not ok:
        log(None, "    fold check FAILED (rel err %.3g); using unfolded model" % err)
    return (folded if ok else model), info


@torch.no_grad()
def count_ops(model, x):
    """One forward with hooks: conv/linear MACs per sample and the number of
    BN / conv / linear calls that remain (pre-activation BN cannot fold)."""
    c = {"macs": 0, "bn_left": 0, "convs": 0, "linears": 0}

    def conv_hook(m, inp, out):
        c["convs"] += 1
        k = m.kernel_size[0] * m.kernel_size[1]
        c["macs"] += out.numel() * (m.in_channels // m.groups) * k

    def linear_hook(m, inp, out):
        c["linears"] += 1
        c["macs"] += out.numel() * m.in_features

    def bn_hook(m, inp, out):
        c["bn_left"] += 1

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
        elif isinstance(m, BN_TYPES):
            hooks.append(m.register_forward_hook(bn_hook))
    try:
        model(x)
    finally:
        for h in hooks:
            h.remove()
    c["macs"] //= x.shape[0]
    return c


# ---------------------------------------------------------------- timing

def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Timer:
    """Milliseconds for `n` calls of fn: CUDA events on GPU, wall clock on CPU."""
    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.device = device
        if self.cuda:
            self.t0 = torch.cuda.Event(enable_timing=True)
            self.t1 = torch.cuda.Event(enable_timing=True)

    def __call__(self, fn, n):
        if self.cuda:
            self.t0.record()
            for _ in range(n):
                fn()
            self.t1.record()
            self.t1.synchronize()
            return self.t0.elapsed_time(self.t1)
        t = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t) * 1e3


def measure(fn, device, args):
    """Median/min per-call latency over `repeats` timed groups of n calls.
    n is picked so a group lasts ~repeat_ms; the total is capped at
    max_timed_s so one slow config cannot blow the run's time budget."""
    timer = Timer(device)
    once = timer(fn, 3) / 3
    n = max(1, min(args.max_replays, int(args.repeat_ms / max(once, 1e-3))))
    repeats = max(3, min(args.repeats, int(args.max_timed_s * 1e3 / max(once * n, 1e-3))))
    per_call = [timer(fn, n) / n for _ in range(repeats)]
    med = statistics.median(per_call)
    return {"latency_ms": round(med, 5), "min_ms": round(min(per_call), 5),
            "spread": round((max(per_call) - min(per_call)) / med, 4) if med > 0 else None,
            "repeats": repeats, "calls_per_repeat": n}


def capture_graph(model, x):
    """Capture one forward into a CUDA graph.  Warm-up happens on a side
    stream first (required for capture; lets cudnn.benchmark autotune)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            model(x)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = model(x)
    torch.cuda.synchronize()
    return g, y


RANGE_PREFIX = "netbench|"


def is_kernel_event(e):
    """A device-side kernel (not a memcpy/memset or a GPU-side annotation)."""
    if "CUDA" not in str(getattr(e, "device_type", "")):
        return False
    if getattr(e, "is_user_annotation", False) or e.name.startswith(RANGE_PREFIX):
        return False
    return not e.name.startswith(("Memcpy", "Memset", "cudaMemcpy", "cudaMemset", "Context Sync",
                                  "Stream Sync", "Event Sync", "Stream Wait", "Device Sync"))


def is_top_level_op(e):
    """CPU stand-in used only by the local --device cpu test: top-level aten ops."""
    if "CPU" not in str(getattr(e, "device_type", "")) or not e.name.startswith("aten::"):
        return False
    p = e.cpu_parent
    return p is None or not p.name.startswith("aten::")


@torch.no_grad()
def count_kernels(models, args, device):
    """Kernels per eager forward for every kept (model, batch), from ONE
    torch.profiler session run after all timing: profiling leaves CUPTI
    attached (slowing later kernels) and re-initialising it next to CUDA
    graphs has crashed on some stacks, so it must not interleave with timing.
    Each forward sits in its own record_function range with a sync inside and
    a gap after, so device events are assigned to ranges by timestamp."""
    from torch.profiler import ProfilerActivity, profile, record_function
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    inputs = {}
    for name, model in models.items():
        for b in args.batches:
            size = zoo.INPUT_SIZE.get(name, 224)
            dtype = next(model.parameters()).dtype
            x = torch.randn(b, 3, size, size, device=device, dtype=dtype)
            inputs[(name, b)] = x.contiguous(memory_format=torch.channels_last)
    with profile(activities=acts) as prof:
        for (name, b), x in inputs.items():
            try:
                with record_function("%s%s|%d" % (RANGE_PREFIX, name, b)):
                    models[name](x)
                    sync(device)
            except Exception as e:
                log(None, "    kernel count forward failed for %s b%d: %s" % (name, b, e))
            time.sleep(0.002)
    return attribute_events(list(prof.events()), device)


def attribute_events(events, device):
    """{(model, batch): kernel count} by placing kernels into the CPU ranges."""
    ranges = []
    for e in events:
        if e.name.startswith(RANGE_PREFIX) and "CPU" in str(getattr(e, "device_type", "CPU")):
            _, name, b = e.name.split("|")
            ranges.append((e.time_range.start, e.time_range.end, (name, int(b))))
    ranges.sort()
    wanted = is_kernel_event if device.type == "cuda" else is_top_level_op
    counts = {key: 0 for _, _, key in ranges}
    starts = [r[0] for r in ranges]
    slack = 1000.0   # us; ranges are >= 2 ms apart, absorbs GPU/CPU clock skew
    for e in events:
        if not wanted(e):
            continue
        t = e.time_range.start
        i = bisect.bisect_right(starts, t + slack) - 1   # last range starting before t
        if i >= 0 and t <= ranges[i][1] + slack:
            counts[ranges[i][2]] += 1
    return counts


def merge_counts(path, counts):
    """Rewrite the output with kernels_per_forward filled in (atomic replace,
    so a failure here leaves the original timing lines intact)."""
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    for r in lines:
        key = (r.get("model"), r.get("batch"))
        if r.get("status") == "ok" and key in counts:
            r["kernels_per_forward"] = counts[key] or None
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in lines:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, path)


@torch.no_grad()
def bench_batch(model, name, batch, args, device, dtype):
    size = zoo.INPUT_SIZE.get(name, 224)
    x = torch.randn(batch, 3, size, size, device=device, dtype=dtype)
    x = x.contiguous(memory_format=torch.channels_last)
    for _ in range(args.warmup):          # cudnn.benchmark autotunes here
        model(x)
    sync(device)
    rec = {"graph": False}
    graph_err = None
    if device.type == "cuda" and not args.no_graph:
        try:
            g, y = capture_graph(model, x)
            rec.update(measure(g.replay, device, args))
            rec["graph"] = True
            del g, y
        except Exception as e:   # fall back to eager, timed with events
            graph_err = "%s: %s" % (type(e).__name__, str(e)[:200])
            log(None, "    graph capture failed (%s); timing eager" % graph_err)
            try:
                sync(device)
            except Exception:
                pass
    if not rec["graph"]:
        rec.update(measure(lambda: model(x), device, args))
        if graph_err:
            rec["graph_error"] = graph_err
    if device.type == "cuda":
        rec["sm_clock_mhz"] = sm_clock()
    rec["kernels_per_forward"] = None     # filled in by the final profiler pass
    return rec


# ---------------------------------------------------------------- driver

def free_memory(device):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def prepare(name, device, fold="auto"):
    """Build, fold BN (checked in fp32), count MACs.  Returns model + info."""
    t = time.time()
    model = zoo.build(name).eval().to(device)
    randomize_bn(model)
    size = zoo.INPUT_SIZE.get(name, 224)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, size, size, generator=gen).to(device)
    model, info = fold_and_check(model, x, fold)
    ops = count_ops(model, x[:1])
    info.update({"macs_per_sample": ops["macs"], "bn_left": ops["bn_left"],
                 "convs": ops["convs"], "linears": ops["linears"],
                 "params": sum(p.numel() for p in model.parameters()),
                 "prep_s": round(time.time() - t, 2)})
    return model, info


def finish_model(model, info, args, device):
    """Timing form: optional bias drop, fp16 (fp32 on CPU), channels_last."""
    if args.keep_conv_bias:
        info["conv_bias"] = "kept"
    else:
        info["conv_bias"] = "dropped"
        info["conv_bias_dropped"] = drop_conv_bias(model)
    dtype = torch.float16 if device.type == "cuda" else torch.float32   # CPU has no fp16 conv
    return model.to(dtype=dtype).to(memory_format=torch.channels_last), dtype


def run_model(name, args, device, out):
    """Times every batch of one model; returns the prepared model (kept for
    the final kernel-count pass) or None."""
    base = {"model": name, "dtype": "fp16" if device.type == "cuda" else "fp32"}
    t0 = time.time()
    if time.time() - args.t_start > args.deadline_s:
        for b in args.batches:
            emit(out, dict(base, batch=b, status="skipped", error="run deadline reached"))
        return None
    try:
        model, info = prepare(name, device, args.fold)
    except Exception as e:
        log(None, "  %s: prepare failed: %s" % (name, e))
        for b in args.batches:
            emit(out, dict(base, batch=b, status="failed", stage="prepare",
                           error="%s: %s" % (type(e).__name__, str(e)[:300])))
        free_memory(device)
        return None
    log(None, "  %s: fold=%s err=%.2g bn_left=%d GFLOPs/sample=%.3f (%.1fs)" % (
        name, info["fold_method"], info["fold_rel_err"], info["bn_left"],
        2 * info["macs_per_sample"] / 1e9, info["prep_s"]))
    if args.dry_run:
        emit(out, dict(base, batch=1, status="dry_run", flops=2 * info["macs_per_sample"], **info))
        del model
        free_memory(device)
        return None
    model, dtype = finish_model(model, info, args, device)
    for b in args.batches:
        rec = dict(base, batch=b)
        if time.time() - args.t_start > args.deadline_s:
            emit(out, dict(rec, status="skipped", error="run deadline reached"))
            continue
        try:
            r = bench_batch(model, name, b, args, device, dtype)
            flops = 2 * info["macs_per_sample"] * b
            rec.update(r)
            rec.update({"flops": flops, "tflops": round(flops / (r["latency_ms"] * 1e9), 2),
                        "bn_folded": info["bn_folded"], "status": "ok"})
            rec.update({k: info[k] for k in ("fold_method", "bn_left", "conv_bias", "macs_per_sample")})
            log(None, "    batch %4d: %.4f ms (min %.4f, spread %.3f) graph=%s x%d" % (
                b, r["latency_ms"], r["min_ms"], r["spread"] or 0, r["graph"], r["calls_per_repeat"]))
        except Exception as e:
            log(None, "    batch %d failed: %s: %s" % (b, type(e).__name__, str(e)[:200]))
            rec.update({"status": "failed", "stage": "bench",
                        "error": "%s: %s" % (type(e).__name__, str(e)[:300])})
        emit(out, rec)
        free_memory(device)
    log(None, "  %s done in %.1fs" % (name, time.time() - t0))
    return model


def kernel_pass(kept, args, device):
    t = time.time()
    log(None, "kernel-count pass over %d models" % len(kept))
    try:
        counts = count_kernels(kept, args, device)
        merge_counts(args.out, counts)
        log(None, "  kernels per forward: %s (%.1fs)" % (
            ", ".join("%s/b%d=%s" % (k[0], k[1], v) for k, v in sorted(counts.items())), time.time() - t))
    except Exception as e:
        log(None, "  kernel-count pass failed (%s: %s); kernels_per_forward left null" % (type(e).__name__, e))


def emit(out, rec):
    out.write(json.dumps(rec) + "\n")
    out.flush()


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description="End-to-end CNN latency (fp16, BN folded, CUDA graphs).")
    ap.add_argument("--out", required=True, help="JSONL output file")
    ap.add_argument("--models", default=",".join(zoo.BUNDLED),
                    help="comma list (default: the 23 bundled); a set name of zoo.VALIDATION_SETS: its members")
    ap.add_argument("--batch", default="1,16,128", help="comma list of batch sizes")
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    ap.add_argument("--dry-run", action="store_true",
                    help="build, fold BN, check fold and count FLOPs; no timing")
    ap.add_argument("--warmup", type=int, default=3, help="eager warm-up forwards (autotuning)")
    ap.add_argument("--repeats", type=int, default=20, help="timed repeats (median over these)")
    ap.add_argument("--repeat-ms", type=float, default=25.0, help="target duration of one repeat")
    ap.add_argument("--max-replays", type=int, default=200, help="max forwards per repeat")
    ap.add_argument("--max-timed-s", type=float, default=1.5, help="cap on timed seconds per config")
    ap.add_argument("--deadline-s", type=float, default=540.0,
                    help="after this many seconds remaining configs are recorded as skipped")
    ap.add_argument("--no-graph", action="store_true", help="time eager forwards only")
    ap.add_argument("--fold", default="auto", choices=["auto", "fx", "traced", "none"],
                    help="BN folding: fx, hook-traced pairs, none; auto = fx then traced")
    ap.add_argument("--no-kernel-count", action="store_true", help="skip the profiler pass")
    ap.add_argument("--keep-conv-bias", action="store_true",
                    help="keep conv biases (PyTorch then adds a separate bias kernel per conv)")
    args = ap.parse_args(argv)
    args.batches = [int(b) for b in args.batch.split(",") if b.strip()]
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    args.models = zoo.expand(args.models)
    return args


def main(argv=None):
    args = parse_args(argv)
    args.t_start = time.time()
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", 0)  # set_device and the header need an index
    if device.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit("CUDA not available; use --device cpu --dry-run for a local check")
        torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    unknown = [m for m in args.models if m not in zoo.ALL]
    if unknown:
        log(None, "note: not in the standard list (will still try): %s" % ",".join(unknown))
    with open(args.out, "w") as out:
        h = header(args, device)
        emit(out, h)
        log(None, "netbench: %s, torch %s, cuda %s, cudnn %s" % (
            h.get("gpu", device), h["torch"], h["cuda"], h.get("cudnn")))
        kept = {}
        for i, name in enumerate(args.models):
            log(None, "[%d/%d] %s (t=%.0fs)" % (i + 1, len(args.models), name, time.time() - args.t_start))
            model = run_model(name, args, device, out)
            if model is not None and not args.no_kernel_count:
                kept[name] = model   # fp16 weights only: ~1.2 GB for all 23
            del model
            free_memory(device)
    if kept and time.time() - args.t_start < args.deadline_s:
        kernel_pass(kept, args, device)
    log(None, "done in %.1fs -> %s" % (time.time() - args.t_start, args.out))


if __name__ == "__main__":
    main()
