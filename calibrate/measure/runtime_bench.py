#!/usr/bin/env python3
"""Networks as users run them, per runtime: end-to-end latency and the
kernels each forward launches (issue 7; docs/validation.md "Runtimes").

Every network is built unmodified (torchvision or timm, random init, eval
mode, BatchNorm and biases as the model has them), cast to fp16 and
channels-last, with cudnn.benchmark on, and fed torch.randn input. Runtimes:

  eager     model(x), the forward captured once in a CUDA graph and replayed
  inductor  torch.compile(model) (default mode, dynamic=False), the compiled
            forward captured in a CUDA graph the same way

Latency is the median over timed groups of graph replays (CUDA events).
After all timing, one forward of each (network, runtime, batch) runs under
torch.profiler; its kernel names and device times are recorded.

Work is spread over worker processes, several per GPU. A lock per GPU
serialises everything that runs kernels for timing or profiling; only
torch.compile's first call (compilation plus one forward) runs outside it.
GPU 0's workers take eager jobs first; the other GPUs' workers compile
(--eager-everywhere: every worker takes eager jobs first).
A process exports each network to weight-stripped ONNX (opset 17,
TorchScript exporter, BN folded as torch.onnx does) for tilewave.

usage (GPU machine):
  python3 -m calibrate.measure.runtime_bench --out DIR --models SET_OR_LIST
      [--runtimes eager,inductor] [--batch 1,16,128] [--deadline-s 440]
Writes DIR/bench.jsonl (one line per network, runtime, batch),
DIR/kernels.jsonl (the profiled kernel lists), DIR/onnx/*.onnx, DIR/log.txt.
"""
import argparse
import datetime
import json
import multiprocessing as mp
import os
import platform
import queue
import statistics
import sys
import time

from calibrate import jsonl
from calibrate.gpu_state import nvidia_smi
from calibrate.log import log
from onnx_models import zoo

NON_KERNEL_PREFIXES = ("Memcpy", "Memset", "cudaMemcpy", "cudaMemset", "Context Sync", "Stream Sync",
                       "Event Sync", "Stream Wait", "Device Sync")


# ------------------------------------------------------------------ worker side

class Timed:
    """Median per-forward latency of fn over timed groups (CUDA events)."""

    def __init__(self, torch):
        self.torch = torch
        self.t0 = torch.cuda.Event(enable_timing=True)
        self.t1 = torch.cuda.Event(enable_timing=True)

    def group(self, fn, n):
        self.t0.record()
        for _ in range(n):
            fn()
        self.t1.record()
        self.t1.synchronize()
        return self.t0.elapsed_time(self.t1) / n

    def __call__(self, fn, timed_s):
        once = self.group(fn, 3)
        n = max(1, min(200, int(20.0 / max(once, 1e-3))))           # >= 20 ms per group
        groups = max(5, min(25, int(timed_s * 1e3 / max(once * n, 1e-3))))
        per = [self.group(fn, n) for _ in range(groups)]
        med = statistics.median(per)
        return {"latency_ms": round(med, 5), "min_ms": round(min(per), 5),
                "spread": round((max(per) - min(per)) / med, 4), "groups": groups, "calls_per_group": n}


def capture(torch, fn, x):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn(x)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = fn(x)
    torch.cuda.synchronize()
    return g, y


def profile_kernels(torch, fn, x):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn(x)
        torch.cuda.synchronize()
    out = []
    for e in prof.events():
        if "CUDA" not in str(getattr(e, "device_type", "")) or getattr(e, "is_user_annotation", False):
            continue
        if e.name.startswith(NON_KERNEL_PREFIXES):
            continue
        out.append([e.name[:160], round(e.device_time, 2)])
    return out


def worker(wid, gpu, locks, eager_q, inductor_q, args, result_path, kernel_path, deadline):
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "4")
    import torch
    torch.cuda.set_device(gpu)
    torch.backends.cudnn.benchmark = True
    for knob in ("cache_size_limit", "recompile_limit"):   # one class's forward serves many networks
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 256)
    lock = locks[gpu]
    logf = os.path.join(args.out, "log.txt")
    timer = Timed(torch)
    kept = []          # (record, fn, x) for the profiling pass
    models = {}

    def get_model(name):
        if name not in models:
            torch.manual_seed(0)
            m = zoo.build(name).eval()
            size = zoo.input_size(name, m)
            m = m.to("cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
            params = sum(p.numel() for p in m.parameters())
            models.clear()
            models[name] = (m, size, params)
        return models[name]

    # Eager first everywhere: its timings run while nothing compiles yet.
    queues = [eager_q, inductor_q] if (gpu == 0 or args.eager_everywhere) else [inductor_q]
    with open(result_path, "a") as res:
        for q in queues:
            while time.time() < deadline:
                try:
                    runtime, name = q.get_nowait()
                except queue.Empty:
                    break
                t_job = time.time()
                try:
                    model, size, params = get_model(name)
                except Exception as e:
                    for b in args.batches:
                        res.write(json.dumps({"model": name, "runtime": runtime, "batch": b, "status": "failed",
                                              "stage": "build", "error": "%s: %s" % (type(e).__name__, str(e)[:300])}) + "\n")
                    res.flush()
                    log(logf, "w%d %s %s build failed: %s" % (wid, runtime, name, e))
                    continue
                for b in (args.inductor_batches if runtime == "inductor" else args.batches):
                    rec = {"model": name, "family": zoo.family_of(name), "runtime": runtime, "batch": b,
                           "input": [b, 3, size, size], "params": params, "gpu_index": gpu, "worker": wid}
                    if time.time() > deadline:
                        rec.update(status="skipped", error="deadline")
                        res.write(json.dumps(rec) + "\n")
                        continue
                    try:
                        gen = torch.Generator(device="cuda").manual_seed(b)
                        x = torch.randn(b, 3, size, size, device="cuda", dtype=torch.float16, generator=gen)
                        x = x.contiguous(memory_format=torch.channels_last)
                        if runtime == "inductor":
                            fn = torch.compile(model, dynamic=False)
                            t = time.time()
                            with torch.no_grad():
                                fn(x)                      # compiles; outside the GPU lock
                            torch.cuda.synchronize()
                            rec["compile_s"] = round(time.time() - t, 1)
                        else:
                            fn = model
                        with lock, torch.no_grad():
                            for _ in range(3):             # cudnn.benchmark picks engines here
                                fn(x)
                            torch.cuda.synchronize()
                            try:
                                g, y = capture(torch, fn, x)
                                rec.update(timer(g.replay, args.timed_s))
                                rec["graph"] = True
                                del g, y
                            except Exception as e:
                                torch.cuda.synchronize()
                                rec.update(timer(lambda: fn(x), args.timed_s))
                                rec["graph"] = False
                                rec["graph_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
                            rec["sm_clock_mhz"] = nvidia_smi("clocks.sm", gpu)
                        rec["status"] = "ok"
                        kept.append((rec, fn, x))
                        log(logf, "w%d gpu%d %-8s %-28s b%-4d %9.4f ms %s" % (
                            wid, gpu, runtime, name, b, rec["latency_ms"],
                            ("compile %.0fs" % rec["compile_s"]) if "compile_s" in rec else ""))
                    except Exception as e:
                        rec.update(status="failed", stage="bench", error="%s: %s" % (type(e).__name__, str(e)[:300]))
                        log(logf, "w%d %s %s b%d failed: %s" % (wid, runtime, name, b, str(e)[:200]))
                        try:
                            torch.cuda.synchronize()
                        except Exception:
                            pass
                    res.write(json.dumps({k: v for k, v in rec.items()}) + "\n")
                    res.flush()
                log(logf, "w%d %s %s done in %.0f s" % (wid, runtime, name, time.time() - t_job))
    # Profiling after all timing: CUPTI stays attached to this process.
    with open(kernel_path, "a") as kf:
        for rec, fn, x in kept:
            if time.time() > deadline + args.profile_s:
                break
            try:
                with lock, torch.no_grad():
                    fn(x)
                    torch.cuda.synchronize()
                    ks = profile_kernels(torch, fn, x)
                kf.write(json.dumps({"model": rec["model"], "runtime": rec["runtime"], "batch": rec["batch"],
                                     "kernels": len(ks), "kernel_sum_us": round(sum(t for _, t in ks), 2),
                                     "list": ks}) + "\n")
                kf.flush()
            except Exception as e:
                log(logf, "w%d profile %s %s b%d failed: %s" % (wid, rec["runtime"], rec["model"], rec["batch"], e))


# ------------------------------------------------------------------ ONNX export

def export_one(name, out_dir):
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import io
    import onnx
    import torch
    from onnx.external_data_helper import set_external_data
    torch.set_num_threads(2)
    torch.manual_seed(0)
    net = zoo.build(name).eval()
    size = zoo.input_size(name, net)
    with torch.no_grad():      # distinct tensors, so the exporter deduplicates nothing
        for t in net.state_dict().values():
            if t.is_floating_point():
                t.add_(torch.rand_like(t) * 1e-3)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(net, torch.randn(1, 3, size, size), buf, opset_version=17, do_constant_folding=True,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, dynamo=False)
    model = onnx.load_from_string(buf.getvalue())
    stem = zoo.file_stem(name)
    location = stem + ".weights"
    for t in model.graph.initializer:
        if t.HasField("raw_data") and t.data_type in (1, 10, 11, 16):
            set_external_data(t, location)
    path = os.path.join(out_dir, stem + ".onnx")
    onnx.save(model, path)
    if os.path.exists(os.path.join(out_dir, location)):
        os.remove(os.path.join(out_dir, location))
    return name, len(model.graph.node), size


def export_all(names, out_dir, logf, deadline):
    os.makedirs(out_dir, exist_ok=True)
    ctx = mp.get_context("spawn")
    with ctx.Pool(3) as pool:
        jobs = {n: pool.apply_async(export_one, (n, out_dir)) for n in names}
        for n, j in jobs.items():
            try:
                name, nodes, size = j.get(timeout=max(1, deadline - time.time()))
                log(logf, "export %s: %d nodes at %d px" % (name, nodes, size))
            except Exception as e:
                log(logf, "export %s FAILED: %s: %s" % (n, type(e).__name__, str(e)[:300]))


# ------------------------------------------------------------------ driver

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", help="comma list, or set names of onnx_models/zoo.py joined by +")
    ap.add_argument("--models-file", help="one network name per line (e.g. space/<space>/<encoding>)")
    ap.add_argument("--runtimes", default="eager,inductor")
    ap.add_argument("--inductor-models", default=None,
                    help="subset timed under inductor, as --models or a file like --models-file (default: all)")
    ap.add_argument("--batch", default="1,16,128")
    ap.add_argument("--inductor-batch", default=None, help="batches timed under inductor (default: --batch)")
    ap.add_argument("--workers-per-gpu", type=int, default=4)
    ap.add_argument("--timed-s", type=float, default=0.6, help="timed seconds per configuration")
    ap.add_argument("--deadline-s", type=float, default=420, help="no new configuration after this")
    ap.add_argument("--profile-s", type=float, default=60, help="profiling pass limit after the deadline")
    ap.add_argument("--no-export", action="store_true")
    ap.add_argument("--eager-everywhere", action="store_true",
                    help="every GPU's workers take eager jobs before compiling (default: GPU 0's only)")
    args = ap.parse_args()
    args.batches = [int(b) for b in args.batch.split(",")]
    args.inductor_batches = [int(b) for b in args.inductor_batch.split(",")] if args.inductor_batch else args.batches

    def expand(spec):
        out = []
        for part in spec.split("+"):
            out += zoo.VALIDATION_SETS[part] if part in zoo.VALIDATION_SETS else [m for m in part.split(",") if m]
        return out

    names = expand(args.models) if args.models else []
    if args.models_file:
        names += [l.strip() for l in open(args.models_file) if l.strip()]
    if args.inductor_models and os.path.isfile(args.inductor_models):
        ind_names = [l.strip() for l in open(args.inductor_models) if l.strip()]
    else:
        ind_names = expand(args.inductor_models) if args.inductor_models else names
    runtimes = args.runtimes.split(",")
    os.makedirs(args.out, exist_ok=True)
    logf = os.path.join(args.out, "log.txt")
    t0 = time.time()
    deadline = t0 + args.deadline_s
    import torch
    n_gpu = torch.cuda.device_count()
    import timm
    import torchvision
    header = {"header": True, "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
              "host": platform.node(), "python": platform.python_version(), "torch": torch.__version__,
              "torchvision": torchvision.__version__, "timm": timm.__version__, "cuda": torch.version.cuda,
              "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(0), "gpus": n_gpu,
              "driver": nvidia_smi("driver_version", 0), "argv": sys.argv[1:], "dtype": "fp16",
              "layout": "channels_last", "cudnn_benchmark": True, "input": "torch.randn",
              "weights": "the library's own random init", "timing": "CUDA-graph replay, median of groups"}
    log(logf, "runtime_bench: %d networks, runtimes %s, %d GPUs, torch %s, timm %s" % (
        len(names), runtimes, n_gpu, torch.__version__, timm.__version__))
    del torch

    ctx = mp.get_context("spawn")
    eager_q, inductor_q = ctx.Queue(), ctx.Queue()
    if "eager" in runtimes:
        for n in names:
            eager_q.put(("eager", n))
    if "inductor" in runtimes:
        # Round-robin over families, so a deadline cuts members, not families.
        by_family = {}
        for n in ind_names:
            by_family.setdefault(zoo.family_of(n), []).append(n)
        order = [m for i in range(max(map(len, by_family.values()), default=0))
                 for f in sorted(by_family, key=str) for m in by_family[f][i:i + 1]]
        for n in order:
            inductor_q.put(("inductor", n))
    time.sleep(0.5)
    locks = [ctx.Lock() for _ in range(n_gpu)]
    procs = []
    for gpu in range(n_gpu):
        for k in range(args.workers_per_gpu):
            wid = gpu * args.workers_per_gpu + k
            p = ctx.Process(target=worker, args=(wid, gpu, locks, eager_q, inductor_q, args,
                                                 os.path.join(args.out, "bench_w%d.jsonl" % wid),
                                                 os.path.join(args.out, "kernels_w%d.jsonl" % wid), deadline))
            p.start()
            procs.append(p)
    if not args.no_export:
        export_all(names, os.path.join(args.out, "onnx"), logf, deadline)
    for p in procs:
        p.join(timeout=max(1, deadline + args.profile_s + 30 - time.time()))
        if p.is_alive():
            p.terminate()
    # Merge the workers' files, header first.
    with open(os.path.join(args.out, "bench.jsonl"), "w") as out:
        out.write(json.dumps(header) + "\n")
        rows = []
        for f in sorted(os.listdir(args.out)):
            if f.startswith("bench_w"):
                rows += jsonl.read(os.path.join(args.out, f))
                os.remove(os.path.join(args.out, f))
        rows.sort(key=lambda r: (r["model"], r["runtime"], r["batch"]))
        for r in rows:
            out.write(json.dumps(r) + "\n")
    with open(os.path.join(args.out, "kernels.jsonl"), "w") as out:
        for f in sorted(os.listdir(args.out)):
            if f.startswith("kernels_w"):
                out.write(open(os.path.join(args.out, f)).read())
                os.remove(os.path.join(args.out, f))
    ok = sum(r.get("status") == "ok" for r in rows)
    log(logf, "done in %.0f s: %d of %d configurations timed" % (time.time() - t0, ok, len(rows)))


if __name__ == "__main__":
    main()
