#!/usr/bin/env python3
"""Networks timed as timm's own benchmark.py times them (issue 18;
docs/validation.md "timm's harness").

The harness, as timm's `benchmark.py` (InferenceBenchmarkRunner) runs it:
the network in fp32 (random init, eval mode, unmodified) under
`torch.amp.autocast("cuda", dtype=float16)`, `torch.inference_mode()`,
`cudnn.benchmark = True`, a `torch.randn` fp32 input, 10 warm-up steps, then
each step timed from `time.perf_counter()` to `torch.cuda.synchronize()` in a
plain Python loop (no CUDA graph). `step_ms` is the mean step (timm's
`infer_step_time`); the median is kept beside it. Layouts: `nchw` (PyTorch's
default, contiguous) and `channels_last` (model and input converted with
`memory_format=torch.channels_last`, timm's `--channels-last`).

Beside the loop, for each (network, layout, batch):
  host_ms     the forward call alone, without the synchronize: how long the
              CPU takes to issue the step (median of 10)
  graph_ms    the same AMP forward captured in a CUDA graph and replayed (CUDA
              events, median of groups): the GPU's time without the host
  aten_ops    the ATen ops one forward dispatches, counted by a
              TorchDispatchMode (after autocast, so casts are counted)
Then, after all timing (CUPTI stays attached to a profiled process), one
forward of each under torch.profiler: its kernel names and device times.

`--precisions amp_fp16,half` also times the network after `model.half()`
with an fp16 input and no autocast; `--passes 2` times every configuration
twice, one whole pass after the other (the harness's repeatability).

`--host-micro` first times single ops in a loop without synchronizing (the
host's cost per op, module call included), for the host description.

Everything runs in one process on one GPU, sequentially: host-bound steps
change when other processes share the CPU. With `--export`, the networks are
exported to weight-stripped ONNX (runtime_bench.export_one) in a pool
*before* any timing starts, and the pool is closed before the first step.

usage (GPU machine):
  python3 calibrate/measure/timm_harness_bench.py --out DIR --models SET_OR_LIST
      [--layouts nchw,channels_last] [--batch 1,16,256] [--deadline-s 400]
      [--profile-s 80] [--host-micro] [--export]
Writes DIR/bench.jsonl (header line, then one line per network, layout,
batch), DIR/kernels.jsonl, DIR/host_micro.jsonl, DIR/log.txt and, with
--export, DIR/onnx.tar.gz.

calibrate/measure/run.py (one command that measures everything a calibration
needs) times and profiles with the functions here; importing this module
imports neither torch nor onnx_models/zoo.py (which imports torch).
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tarfile
import time
import traceback

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

from calibrate.gpu_state import nvidia_smi  # noqa: E402  (after the path entry above)
from calibrate.log import log  # noqa: E402

WARMUP_STEPS = 10      # timm benchmark.py's default num_warm_iter
BENCH_STEPS = 40       # timm's default num_bench_iter; fewer when a step is long
TIMED_S = 0.5          # at most this long in timed steps per configuration (at least 8 steps)
HARNESS = ("timm benchmark.py: fp32 weights under autocast(float16), inference_mode, cudnn.benchmark, "
           "torch.randn fp32 input, 10 warm-up steps, steps timed perf_counter -> cuda.synchronize, plain loop")


def zoo():
    """onnx_models/zoo.py, imported on first use: it imports torch."""
    from onnx_models import zoo as module
    return module


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def network_order(names, family_of):
    """Round-robin over families, so a deadline cuts members, not families."""
    by_family = {}
    for n in names:
        by_family.setdefault(family_of(n) or n, []).append(n)
    return [m for i in range(max(map(len, by_family.values()), default=0))
            for f in sorted(by_family) for m in by_family[f][i:i + 1]]


def harness_header(torch, argv, **extra):
    """bench.jsonl's first line: the software, the machine and the harness."""
    import timm
    import torchvision
    header = {"header": True, "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
              "python": platform.python_version(), "torch": torch.__version__,
              "torchvision": torchvision.__version__, "timm": timm.__version__, "cuda": torch.version.cuda,
              "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(0),
              "driver": nvidia_smi("driver_version"), "cpu": cpu_model(), "cpus": os.cpu_count(),
              "argv": argv, "harness": HARNESS}
    header.update(extra)
    header.update(cudnn_allow_tf32=torch.backends.cudnn.allow_tf32,
                  matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32,
                  weights="the library's own random init")
    return header


def build_network(torch, name):
    """The network on the GPU in fp32 eval mode, seeded: (net, input side, parameters, modules)."""
    torch.manual_seed(0)
    net = zoo().build(name).eval()
    size = zoo().input_size(name, net)
    net = net.to("cuda")
    return net, size, sum(p.numel() for p in net.parameters()), sum(1 for _ in net.modules())


def memory_format(torch, layout):
    return torch.channels_last if layout == "channels_last" else torch.contiguous_format


def configure(torch, net, layout, precision):
    """Converts net in place to the layout and precision (half: fp16 weights; amp_fp16: fp32 weights)."""
    net = net.to(memory_format=memory_format(torch, layout))
    return net.half() if precision == "half" else net.float()


def harness_step(torch, net, layout, batch, size, precision):
    """One forward as the harness calls it: a seeded torch.randn input in the layout, under autocast
    unless the weights are already fp16."""
    gen = torch.Generator(device="cuda").manual_seed(batch)
    x = torch.randn(batch, 3, size, size, device="cuda", generator=gen)
    x = x.contiguous(memory_format=memory_format(torch, layout))
    if precision == "half":
        x = x.half()

    def step(net=net, x=x, amp=precision != "half"):
        with torch.amp.autocast("cuda", dtype=torch.float16, enabled=amp):
            return net(x)
    return step


def count_aten_ops(torch, fn):
    """ATen ops one call of fn dispatches, by name (views included)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            key = str(func.overloadpacket.__name__) if hasattr(func, "overloadpacket") else str(func)
            self.ops[key] = self.ops.get(key, 0) + 1
            return func(*args, **(kwargs or {}))

    with Count() as c:
        fn()
    torch.cuda.synchronize()
    return c.ops


def loop_time(torch, step, max_steps=BENCH_STEPS):
    """timm's loop: WARMUP_STEPS, then steps timed perf_counter -> synchronize."""
    for _ in range(WARMUP_STEPS):
        step()
    torch.cuda.synchronize()
    per = []
    t_start = time.perf_counter()
    while len(per) < max_steps and (len(per) < 8 or time.perf_counter() - t_start < TIMED_S):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) * 1e3)
    return per


def host_time(torch, step, reps=10):
    """The forward call alone: the CPU's issue time of one step."""
    per = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        per.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.synchronize()
    return statistics.median(per)


def graph_time(torch, step):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    g.replay()
    t0.record()
    g.replay()
    t1.record()
    t1.synchronize()
    once = t0.elapsed_time(t1)
    n = max(1, min(50, int(10.0 / max(once, 1e-3))))
    per = []
    for _ in range(5):
        t0.record()
        for _ in range(n):
            g.replay()
        t1.record()
        t1.synchronize()
        per.append(t0.elapsed_time(t1) / n)
    del g
    return statistics.median(per)


def time_configuration(torch, rec, step, graph=True):
    """Fills one bench.jsonl row (rec: model, layout, batch, precision ...) with the loop's steps,
    host_ms, aten_ops and graph_ms, the SM clock and status ok; exceptions propagate."""
    with torch.inference_mode():
        per = loop_time(torch, step)
        rec.update(step_ms=round(statistics.fmean(per), 5), step_ms_median=round(statistics.median(per), 5),
                   step_ms_min=round(min(per), 5), steps=len(per))
        rec["host_ms"] = round(host_time(torch, step), 5)
        rec["aten_ops"] = count_aten_ops(torch, step)
        if graph:
            try:
                rec["graph_ms"] = round(graph_time(torch, step), 5)
            except Exception as e:
                torch.cuda.synchronize()
                rec["graph_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
    rec["sm_clock_mhz"] = nvidia_smi("clocks.sm")
    rec["status"] = "ok"
    return rec


def profile_kernels(torch, step):
    from calibrate.measure import runtime_bench
    return runtime_bench.profile_kernels(torch, lambda _: step(), None)


def profile_configuration(torch, name, layout, batch, precision, step):
    """One kernels.jsonl row: one forward of step under torch.profiler (after one unprofiled forward)."""
    with torch.inference_mode():
        step()
        torch.cuda.synchronize()
        ks = profile_kernels(torch, step)
    return {"model": name, "runtime": "eager", "layout": layout, "batch": batch, "precision": precision,
            "launch": "loop", "kernels": len(ks), "kernel_sum_us": round(sum(t for _, t in ks), 2), "list": ks}


def host_micro(torch, out_path, logf):
    """Host cost per op: calls issued back to back without synchronizing,
    tiny tensors, under the harness's autocast and inference_mode."""
    nn = torch.nn
    F = torch.nn.functional
    dev = "cuda"
    x4 = torch.randn(1, 16, 8, 8, device=dev)
    x4h = x4.half()
    x2 = torch.randn(1, 64, device=dev)
    conv = nn.Conv2d(16, 16, 3, padding=1).to(dev).eval()
    dw = nn.Conv2d(16, 16, 3, padding=1, groups=16).to(dev).eval()
    bn = nn.BatchNorm2d(16).to(dev).eval()
    relu = nn.ReLU(inplace=True)
    lin = nn.Linear(64, 64).to(dev).eval()
    pool = nn.AdaptiveAvgPool2d(1)
    seq = nn.Sequential(nn.Identity())
    cases = {
        "conv_module_amp": lambda: conv(x4),
        "depthwise_module_amp": lambda: dw(x4),
        "batchnorm_module_fp16_in": lambda: bn(x4h),
        "relu_module": lambda: relu(x4h),
        "add_tensor": lambda: x4h + x4h,
        "linear_module_amp": lambda: lin(x2),
        "avgpool_module": lambda: pool(x4h),
        "cast_to_fp16": lambda: x4.to(torch.float16),
        "identity_module": lambda: seq(x4h),
        "silu_functional": lambda: F.silu(x4h),
        "view_flatten": lambda: x4h.flatten(1),
    }
    with open(out_path, "w") as f, torch.inference_mode(), torch.amp.autocast("cuda", dtype=torch.float16):
        for name, fn in cases.items():
            try:
                for _ in range(200):
                    fn()
                torch.cuda.synchronize()
                per = []
                for _ in range(7):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    for _ in range(300):
                        fn()
                    per.append((time.perf_counter() - t0) / 300 * 1e6)
                torch.cuda.synchronize()
                rec = {"case": name, "host_us_median": round(statistics.median(per), 3),
                       "host_us_min": round(min(per), 3), "calls": 300, "repeats": 7}
                f.write(json.dumps(rec) + "\n")
                f.flush()
                log(logf, "host-micro %-26s %7.2f us/call" % (name, rec["host_us_median"]))
            except Exception as e:
                log(logf, "host-micro %s failed: %s" % (name, e))


def export_pool(names, out_dir, logf, workers):
    import multiprocessing as mp
    from calibrate.measure import runtime_bench
    os.makedirs(out_dir, exist_ok=True)
    ctx = mp.get_context("spawn")
    done = []
    with ctx.Pool(workers) as pool:
        jobs = {n: pool.apply_async(runtime_bench.export_one, (n, out_dir)) for n in names}
        for n, j in jobs.items():
            try:
                name, nodes, size = j.get(timeout=300)
                log(logf, "export %s: %d nodes at %d px" % (name, nodes, size))
                done.append(n)
            except Exception as e:
                log(logf, "export %s FAILED: %s: %s" % (n, type(e).__name__, str(e)[:300]))
    return done


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True, help="comma list, or set names of onnx_models/zoo.py joined by +")
    ap.add_argument("--layouts", default="nchw,channels_last")
    ap.add_argument("--batch", default="1,16,256")
    ap.add_argument("--deadline-s", type=float, default=400, help="no new network after this")
    ap.add_argument("--profile-s", type=float, default=80, help="profiling pass limit after the timing")
    ap.add_argument("--no-graph", action="store_true", help="skip the CUDA-graph replay")
    ap.add_argument("--host-micro", action="store_true")
    ap.add_argument("--export", action="store_true", help="export the networks to ONNX first (before timing)")
    ap.add_argument("--export-workers", type=int, default=12)
    ap.add_argument("--precisions", default="amp_fp16",
                    help="amp_fp16 (fp32 weights under autocast, timm's amp) and/or half (model.half(), fp16 input)")
    ap.add_argument("--passes", type=int, default=1,
                    help="time every configuration this many times, one whole pass after another (repeatability)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batch.split(",")]
    layouts = args.layouts.split(",")
    names = []
    for part in args.models.split("+"):
        names += zoo().VALIDATION_SETS[part] if part in zoo().VALIDATION_SETS else [m for m in part.split(",") if m]
    order = network_order(names, zoo().family_of)
    os.makedirs(args.out, exist_ok=True)
    logf = os.path.join(args.out, "log.txt")
    t_begin = time.time()
    if args.export:
        onnx_dir = os.path.join(args.out, "onnx")
        export_pool(names, onnx_dir, logf, args.export_workers)
        with tarfile.open(os.path.join(args.out, "onnx.tar.gz"), "w:gz") as tar:
            for f in sorted(os.listdir(onnx_dir)):
                tar.add(os.path.join(onnx_dir, f), arcname=f)
        log(logf, "exports done in %.0f s; timing starts now, with the pool closed" % (time.time() - t_begin))
    import torch
    import timm
    torch.backends.cudnn.benchmark = True
    header = harness_header(torch, sys.argv[1:], precisions=args.precisions, passes=args.passes)
    with open(os.path.join(args.out, "bench.jsonl"), "w") as f:
        f.write(json.dumps(header) + "\n")
    log(logf, "timm_harness_bench: %d networks, layouts %s, batches %s, torch %s, timm %s, cpu %s" % (
        len(order), layouts, batches, torch.__version__, timm.__version__, header["cpu"]))
    if args.host_micro:
        host_micro(torch, os.path.join(args.out, "host_micro.jsonl"), logf)
    deadline = time.time() + args.deadline_s
    kept = []   # (name, layout, batch, size) for the profiling pass
    models = {}
    precisions = args.precisions.split(",")
    with open(os.path.join(args.out, "bench.jsonl"), "a") as res:
        for pass_index, name in [(p, n) for p in range(args.passes) for n in order]:
            if time.time() > deadline:
                res.write(json.dumps({"model": name, "status": "skipped", "error": "deadline"}) + "\n")
                continue
            t_job = time.time()
            try:
                if name not in models:
                    models[name] = build_network(torch, name)
                net, size, params, modules = models[name]
            except Exception as e:
                res.write(json.dumps({"model": name, "status": "failed", "stage": "build",
                                      "error": "%s: %s" % (type(e).__name__, str(e)[:300])}) + "\n")
                log(logf, "%s build failed: %s" % (name, e))
                continue
            for precision, layout in [(p, l) for p in precisions for l in layouts]:
                net = configure(torch, net, layout, precision)
                for b in batches:
                    rec = {"model": name, "family": zoo().family_of(name), "layout": layout, "batch": b,
                           "precision": precision, "input": [b, 3, size, size], "params": params,
                           "modules": modules, "pass": pass_index}
                    try:
                        time_configuration(torch, rec, harness_step(torch, net, layout, b, size, precision),
                                           graph=not args.no_graph)
                        if pass_index == 0 and precision == "amp_fp16":
                            kept.append((name, layout, b, size))
                        log(logf, "%-28s %-8s %-13s b%-4d step %9.4f ms  host %8.4f ms  graph %s" % (
                            name, precision, layout, b, rec["step_ms"], rec["host_ms"], rec.get("graph_ms")))
                    except Exception as e:
                        rec.update(status="failed", stage="bench", error="%s: %s" % (type(e).__name__, str(e)[:300]))
                        log(logf, "%s %s b%d failed: %s" % (name, layout, b, str(e)[:200]))
                        try:
                            torch.cuda.synchronize()
                        except Exception:
                            pass
                    res.write(json.dumps(rec) + "\n")
                    res.flush()
            configure(torch, net, "nchw", "amp_fp16")   # back to fp32 weights for a later pass
            log(logf, "%s done in %.0f s" % (name, time.time() - t_job))
    # Profiling after all timing: CUPTI stays attached to this process.
    t_prof = time.time()
    with open(os.path.join(args.out, "kernels.jsonl"), "w") as kf:
        for name, layout, b, size in kept:
            if time.time() > t_prof + args.profile_s:
                log(logf, "profiling stopped at its limit")
                break
            try:
                net = configure(torch, models[name][0], layout, "amp_fp16")
                row = profile_configuration(torch, name, layout, b, "amp_fp16",
                                            harness_step(torch, net, layout, b, size, "amp_fp16"))
                kf.write(json.dumps(row) + "\n")
                kf.flush()
            except Exception as e:
                log(logf, "profile %s %s b%d failed: %s" % (name, layout, b, e))
    log(logf, "done in %.0f s" % (time.time() - t_begin))


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
