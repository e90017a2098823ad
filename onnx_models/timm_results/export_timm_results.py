#!/usr/bin/env python3
"""Export weight-stripped ONNX files of the timm models in timm's published
pt240 inference benchmarks (models.csv), one per (model, img_size).

Usage (on a machine with torch, timm and onnx; run from the repository root):
  python3 onnx_models/timm_results/export_timm_results.py
      [--models onnx_models/timm_results/models.csv] [--out DIR]
      [--workers 14] [--deadline-s 420] [--hard-deadline-s 500]
      [--log-copy FILE] [--only NAME[@SIZE] ...] [--shard i/n]
      [--skip-ok MANIFEST [--skip-status ok error]] [--verify N]
      [--init-device auto|cuda|cpu] [--list]

Per (model, img_size) of models.csv:
  timm.create_model(model, pretrained=False), eval(), +U(0, 1e-3) noise on
  every float parameter and buffer (as onnx_models/corpus/export_corpus.py);
  torch.onnx.export(dynamo=False, opset_version=17, do_constant_folding=True)
  from a batch-1 example [1, 3, S, S] at the CSV's img_size S, dynamic axis 0
  named "batch" on input and output. Where S differs from the model's default
  input size and that export fails, the model is built again with
  img_size=S and exported once more (field img_size_kwarg).
  Then the corpus' weight stripping: Constants > 1 KiB lifted to
  initializers, convert_model_to_external_data(size_threshold=1024) into
  <stem>.weights, and that file deleted.  Models the exporter had to write
  with external data (> 2 GB) are re-pointed at <stem>.weights without the
  weights ever being loaded or written (field strip = "repoint").

Output under DIR:
  legacy/<model>-<img_size>.onnx   the stripped files
  manifest.jsonl   one line per requested (model, img_size), with status
                   ok | error | timeout | crash | deadline | missing
  failures.jsonl   every status other than ok, with the error
  versions.json    torch, timm, onnx, ... versions, settings, wall time
  log.txt          progress log
  pack_order.txt   the files, text files first, then cnn, hybrid, vit

Order of work: cnn first, then hybrid, then vit; a seeded shuffle (seed 0)
within each kind, so that the global deadline cuts a representative sample.
Each export runs in a pool of long-lived worker processes with one thread
each; a task that overruns its time limit has its worker killed and replaced.
No task is started after --deadline-s; tasks still running at
--hard-deadline-s are killed.  torch and timm are imported only inside
functions, so --help and the model-list handling work without them.
"""
import argparse
import csv
import gc
import json
import os
import random
import shutil
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "corpus"))
import export_corpus as ec  # noqa: E402  (imports no torch)

LEGACY_OPSET = ec.LEGACY_OPSET          # 17
SIZE_THRESHOLD = ec.SIZE_THRESHOLD      # 1024 bytes
KIND_ORDER = ("cnn", "hybrid", "vit")
SEED = 0
IN_CHANS = 3


# --------------------------------------------------------------------------
# model list (no torch)
# --------------------------------------------------------------------------
def _float(v, default=0.0):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def stem_of(model, size):
    return "%s-%d" % (model.replace("/", "_"), size)


def estimate(params_m, gmacs):
    """Rough cost model for scheduling only (never reported as a timing):
    seconds of one CPU thread, and peak memory in GB (model, folded copies,
    the serialized proto and its reload)."""
    est_s = 2.0 + 0.015 * params_m + 0.035 * gmacs
    mem_gb = 1.0 + 0.010 * params_m + 0.002 * gmacs
    return est_s, mem_gb


def read_models(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            size = int(r["img_size"])
            params_m, gmacs = _float(r.get("param_count_m")), _float(r.get("gmacs"))
            est_s, mem_gb = estimate(params_m, gmacs)
            rows.append({"model": r["model"], "img_size": size, "family": r["family"],
                         "kind": r["kind"], "param_count_m": params_m,
                         "gmacs": _float(r.get("gmacs"), None),
                         "stem": stem_of(r["model"], size), "est_s": round(est_s, 1),
                         "mem_gb": round(mem_gb, 2)})
    return rows


def order_models(rows):
    """cnn, hybrid, vit; within each a seeded shuffle of the sorted list."""
    rng = random.Random(SEED)
    out = []
    kinds = list(KIND_ORDER) + sorted({r["kind"] for r in rows} - set(KIND_ORDER))
    for k in kinds:
        part = sorted((r for r in rows if r["kind"] == k), key=lambda r: (r["model"], r["img_size"]))
        rng.shuffle(part)
        out.extend(part)
    return out


def select(rows, only=None, shard=None, skip_ok=None, skip_status=("ok",)):
    """The rows to run: without the pairs that have one of skip_status in the
    manifest skip_ok (if given), then only these (--only), then shard i/n."""
    if skip_ok:
        done = set()
        with open(skip_ok) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    if r.get("status") in skip_status:
                        done.add((r["model"], int(r["img_size"])))
        rows = [r for r in rows if (r["model"], r["img_size"]) not in done]
    if only:
        want = set(only)
        rows = [r for r in rows if r["model"] in want or "%s@%d" % (r["model"], r["img_size"]) in want
                or r["stem"] in want]
    if shard:
        i, n = shard
        rows = rows[i::n]
    return rows


def parse_shard(text):
    try:
        i, n = (int(v) for v in text.split("/"))
    except Exception:
        raise argparse.ArgumentTypeError("--shard wants i/n, e.g. 0/2")
    if n < 1 or not 0 <= i < n:
        raise argparse.ArgumentTypeError("--shard wants 0 <= i < n")
    return (i, n)


# --------------------------------------------------------------------------
# worker side (torch imported lazily)
# --------------------------------------------------------------------------
_STATE = {"cuda": False}


def add_noise(model):
    """The corpus' noise, t += 1e-3 * U(0, 1) on every float parameter and
    buffer (export_corpus.add_noise), written with alpha= to save a pass."""
    import torch
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.add_(torch.rand_like(t), alpha=1e-3)


def _cuda_attrs_to_cpu(model):
    """Plain tensor attributes (not parameters or buffers) that a model
    built under torch.device('cuda') keeps there; move them to the CPU."""
    import torch
    moved = 0
    for mod in model.modules():
        for k, v in list(vars(mod).items()):
            if isinstance(v, torch.Tensor) and v.is_cuda:
                setattr(mod, k, v.cpu())
                moved += 1
    return moved


def build(name, size, img_size_kwarg=False, device="cpu"):
    """timm.create_model(name, pretrained=False) in eval mode, plus noise.
    device "cuda": the constructor and its weight init run under
    torch.device("cuda") (only to make random init fast), then the model
    moves to the CPU; export always runs on the CPU."""
    torch = ec._torch_setup()
    import timm
    torch.manual_seed(0)
    kw = {"img_size": size} if img_size_kwarg else {}
    info = {"init_device": device}
    if device == "cuda":
        with torch.device("cuda"):
            m = timm.create_model(name, pretrained=False, **kw)
        m.eval()
        add_noise(m)
        m = m.to("cpu")
        info["cuda_attrs_moved"] = _cuda_attrs_to_cpu(m)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    else:
        m = timm.create_model(name, pretrained=False, **kw)
        m.eval()
        add_noise(m)
    cfg = getattr(m, "pretrained_cfg", None) or getattr(m, "default_cfg", None) or {}
    info.update({"default_input_size": [int(v) for v in cfg.get("input_size", (3, 224, 224))],
                 "module": type(m).__module__, "architecture": cfg.get("architecture")})
    if cfg.get("test_input_size"):
        info["test_input_size"] = [int(v) for v in cfg["test_input_size"]]
    return m, info


def example(torch, size):
    g = torch.Generator().manual_seed(1)
    return torch.randn((1, IN_CHANS, size, size), generator=g)


def export_legacy(torch, model, size, path, hook=False):
    """torch.onnx.export, legacy exporter, to `path`.  With hook=True the
    exporter's final encoder (torch._C.Graph._export_onnx) gets an empty
    initializer dict, so no weight is copied or written: the file keeps the
    parameters as graph inputs, and the dict it would have written is
    returned (name -> tensor)."""
    import inspect
    kw = dict(opset_version=LEGACY_OPSET, input_names=["input"], output_names=["output"],
              do_constant_folding=True,
              dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False
    x = example(torch, size)
    if not hook:
        with torch.no_grad():
            torch.onnx.export(model, (x,), path, **kw)
        return None
    cap = {}
    Graph = torch._C.Graph
    orig = Graph._export_onnx

    def encode(self, *a, **k):
        try:
            if "initializers" in k:
                params = dict(k["initializers"])
                k = dict(k, initializers={})
            else:
                params = dict(a[0])
                a = ({},) + tuple(a[1:])
        except Exception:                 # unknown signature: leave the call alone
            return orig(self, *a, **k)
        cap["params"] = params
        return orig(self, *a, **k)
    Graph._export_onnx = encode
    try:
        with torch.no_grad():
            torch.onnx.export(model, (x,), path, **kw)
    finally:
        Graph._export_onnx = orig
    return cap.get("params")           # None: `path` is a normal export with weights


_TORCH_TO_ONNX = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
                  "float16": 10, "float64": 11, "complex64": 14, "complex128": 15, "bfloat16": 16}


def tensor_proto(name, t, threshold_bytes):
    """TensorProto as the exporter's encoder writes it (dims, data_type,
    raw_data of the contiguous CPU tensor); tensors that would be stripped
    get no data (marked by returning their byte size)."""
    import torch
    from onnx import TensorProto
    t = t.detach()
    key = str(t.dtype).replace("torch.", "")
    if key not in _TORCH_TO_ONNX:
        raise RuntimeError("fast path: no ONNX type for %s" % t.dtype)
    tp = TensorProto()
    tp.name = name
    tp.dims.extend(int(d) for d in t.shape)
    tp.data_type = _TORCH_TO_ONNX[key]
    nbytes = int(t.numel()) * int(t.element_size())
    if nbytes + sys.getsizeof(b"") >= threshold_bytes:
        return tp, nbytes
    t = t.cpu().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    tp.raw_data = t.numpy().tobytes()
    return tp, None


def strip_from_params(src, params, out_dir, rel):
    """Turn the hooked export (parameters as graph inputs) into the stripped
    file strip_and_save would write from a normal export: initializers in
    graph-input order, those of >= 1 KiB (by convert_model_to_external_data's
    sys.getsizeof rule) external in <stem>.weights with the offsets onnx
    would write, the rest inline; Constants > 1 KiB lifted first."""
    import onnx
    mp = onnx.load(src)
    g = mp.graph
    user = [i for i in g.input if i.name not in params]
    if [i.name for i in user] != ["input"]:
        raise RuntimeError("fast path: unexpected graph inputs %s" % [i.name for i in user][:5])
    sizes = {}
    inits = []
    for i in g.input:
        if i.name in params:
            tp, nb = tensor_proto(i.name, params[i.name], SIZE_THRESHOLD)
            inits.append(tp)
            if nb is not None:
                sizes[i.name] = nb
    keep = [onnx.ValueInfoProto.FromString(i.SerializeToString()) for i in user]
    del g.input[:]
    g.input.extend(keep)
    g.initializer.extend(inits)

    def external_len(t):
        if t.name in sizes and not t.HasField("raw_data"):
            return sizes[t.name]
        return _large_raw_len(t)
    return save_pointed(mp, out_dir, rel, external_len)


def _large_raw_len(t):
    """len(raw_data) if convert_model_to_external_data would move it, else None."""
    if t.HasField("raw_data") and sys.getsizeof(t.raw_data) >= SIZE_THRESHOLD:
        return len(t.raw_data)
    return None


def save_pointed(mp, out_dir, rel, external_len):
    """Lift Constants > 1 KiB, then point each initializer for which
    external_len(t) gives a byte length at <stem>.weights, at the sequential
    offsets onnx would write; save to out_dir/rel (no weights file) and
    return its manifest bits, with weights_bytes."""
    import onnx
    lifted = ec.lift_large_constants(mp.graph)
    ec.to_raw(mp.graph)
    path = os.path.join(out_dir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    location = os.path.splitext(os.path.basename(path))[0] + ".weights"
    offset = 0
    for t in _get_initializer_tensors(mp):
        n = external_len(t)
        if n is None:
            continue
        _set_external(t, location, offset, n)
        offset += n
    onnx.save_model(mp, path)
    e = ec.describe_stripped(path, rel, lifted)
    e["weights_bytes"] = offset
    return e


def _get_initializer_tensors(mp):
    """Initializers in the order onnx.external_data_helper visits them: the
    graph's, then those of subgraphs, node by node."""
    def walk(g):
        yield from g.initializer
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    yield from walk(a.g)
                for sg in a.graphs:
                    yield from walk(sg)
    return walk(mp.graph)


def _nbytes_of(t):
    import numpy as np
    from onnx import helper
    n = int(np.prod(list(t.dims))) if len(t.dims) else 1
    try:
        dt = helper.tensor_dtype_to_np_dtype(t.data_type)
    except Exception:
        from onnx import mapping
        dt = mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]
    return n * np.dtype(dt).itemsize


def _set_external(t, location, offset, length):
    from onnx import TensorProto
    del t.external_data[:]
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        e = t.external_data.add()
        e.key, e.value = k, str(v)
    if t.HasField("raw_data"):
        t.ClearField("raw_data")


def strip_repoint(src, src_dir, out_dir, rel):
    """For a normal export the exporter wrote with external data (> 2 GB):
    load the graph without its data, pull tensors under the threshold
    inline, and point every other initializer at <stem>.weights with the
    offsets onnx would write (no weights are read or written)."""
    import onnx
    from onnx.external_data_helper import (ExternalDataInfo, load_external_data_for_tensor,
                                           uses_external_data)
    mp = onnx.load(src, load_external_data=False)
    overhead = sys.getsizeof(b"")

    def external_len(t):
        if not uses_external_data(t):
            return _large_raw_len(t)
        n = ExternalDataInfo(t).length or _nbytes_of(t)
        if n + overhead >= SIZE_THRESHOLD:
            return n
        load_external_data_for_tensor(t, src_dir)       # small: inline it
        del t.external_data[:]
        t.data_location = onnx.TensorProto.DEFAULT
        return None
    return save_pointed(mp, out_dir, rel, external_len)


def export_slow(torch, model, size, tdir, out_dir, rel):
    """The corpus path: a normal export with weights, onnx.load, then
    export_corpus.strip_and_save (or re-pointing, if it came out > 2 GB)."""
    sdir = os.path.join(tdir, "slow")
    shutil.rmtree(sdir, ignore_errors=True)
    os.makedirs(sdir)
    src = os.path.join(sdir, "model.onnx")
    export_legacy(torch, model, size, src, hook=False)
    e = strip_normal(src, sdir, out_dir, rel)
    shutil.rmtree(sdir, ignore_errors=True)
    return e


def strip_normal(src, sdir, out_dir, rel):
    """Strip a normal export (weights inside, or beside it if > 2 GB)."""
    import onnx
    extra = [f for f in os.listdir(sdir) if f != os.path.basename(src)]
    if extra:
        e = strip_repoint(src, sdir, out_dir, rel)
        e["strip"] = "repoint"
    else:
        mp = onnx.load(src)
        os.remove(src)
        e = ec.strip_and_save(mp, out_dir, rel)
        del mp
        e["strip"] = "onnx-save"
    return e


def compare_files(a, b):
    """'identical'; 'same graph, inline values differ' (same nodes, inputs,
    outputs, value_info and initializer names/types/dims/external entries:
    only the random values of inline tensors differ); or 'differs: <parts>'."""
    import onnx
    ba, bb = open(a, "rb").read(), open(b, "rb").read()
    if ba == bb:
        return "identical"
    ma, mb = onnx.load_from_string(ba), onnx.load_from_string(bb)
    diff = []
    for part in ("node", "input", "output", "value_info"):
        la, lb = getattr(ma.graph, part), getattr(mb.graph, part)
        if [x.SerializeToString() for x in la] != [x.SerializeToString() for x in lb]:
            diff.append(part)

    def layout(m):
        return [(t.name, t.data_type, tuple(t.dims), t.data_location,
                 tuple((e.key, e.value) for e in t.external_data), len(t.raw_data))
                for t in m.graph.initializer]
    la, lb = layout(ma), layout(mb)
    if la != lb:
        diff.append("initializer order" if sorted(la) == sorted(lb) else "initializer layout")
    for f in ("ir_version", "producer_name", "producer_version", "opset_import"):
        if str(getattr(ma, f)) != str(getattr(mb, f)):
            diff.append(f)
    if diff:
        return "differs: " + ", ".join(diff)
    return "same graph, inline values differ"


def _looks_like_device_error(ex):
    s = str(ex).lower()
    return "cuda" in s or "device" in s


def run_task(task, out_dir, work_dir):
    """One export in this worker; returns a result dict (never raises)."""
    torch = ec._torch_setup()
    t0 = time.time()
    res = {"id": task["id"], "entry": None, "failure": None, "info": {}}
    name, size, stem = task["model"], task["img_size"], task["stem"]
    tdir = os.path.join(work_dir, "tasks", stem)
    rel = "legacy/%s.onnx" % stem
    attempts = []
    model = None
    devices = ["cuda", "cpu"] if _STATE["cuda"] else ["cpu"]
    try:
        shutil.rmtree(tdir, ignore_errors=True)
        os.makedirs(tdir)
        src = os.path.join(tdir, "model.onnx")
        entry = None
        plan = [(False, d) for d in devices] + [(True, d) for d in devices]
        k = 0
        while k < len(plan):
            kwarg, dev = plan[k]
            k += 1
            try:
                ts = time.time()
                model, info = build(name, size, img_size_kwarg=kwarg, device=dev)
                build_s = time.time() - ts
            except Exception as ex:
                attempts.append(("build", kwarg, dev, ex, traceback.format_exc()))
                if dev == "cuda" and not (kwarg and isinstance(ex, TypeError)):
                    continue                  # the same, built on the CPU
                break
            res["info"] = dict(info, params=ec.count_params(model), img_size_kwarg=kwarg,
                               build_s=round(build_s, 2))
            default_hw = info["default_input_size"][1:]
            try:
                ts = time.time()
                hook = not task.get("slow")
                try:
                    params = export_legacy(torch, model, size, src, hook=hook)
                except Exception as ex:
                    if not hook or task["param_count_m"] > 100:
                        raise
                    # make sure the hook is not what failed: once more without it
                    for f in os.listdir(tdir):
                        os.remove(os.path.join(tdir, f))
                    ts = time.time()
                    try:
                        params = export_legacy(torch, model, size, src, hook=False)
                    except Exception:
                        raise ex
                    res["info"]["hooked_export_error"] = ec.last_line("%s: %s" % (type(ex).__name__, ex))[:300]
                res["info"]["export_s"] = round(time.time() - ts, 2)
                ts = time.time()
                entry = None
                if params is not None:
                    try:
                        entry = strip_from_params(src, params, out_dir, rel)
                        entry["strip"] = "fast"
                    except Exception as ex:
                        res["info"]["fast_path_error"] = ec.last_line("%s: %s" % (type(ex).__name__, ex))[:300]
                    del params
                    if entry is None:             # the corpus path, from scratch
                        for f in os.listdir(tdir):
                            os.remove(os.path.join(tdir, f))
                        entry = export_slow(torch, model, size, tdir, out_dir, rel)
                else:                             # hook not applied: a normal export
                    entry = strip_normal(src, tdir, out_dir, rel)
                entry["strip_s"] = round(time.time() - ts, 2)
                if task.get("verify") and entry.get("strip") == "fast":
                    # the corpus path on a CPU-built model, for comparison
                    ts = time.time()
                    vrel = os.path.join("verify", rel)
                    try:
                        if dev != "cpu":
                            model = None
                            gc.collect()
                            model, _ = build(name, size, img_size_kwarg=kwarg, device="cpu")
                        ve = export_slow(torch, model, size, tdir, work_dir, vrel)
                        entry["verify"] = compare_files(os.path.join(out_dir, rel), os.path.join(work_dir, vrel))
                        entry["verify_strip"] = ve.get("strip")
                    except Exception as ex:
                        entry["verify"] = "slow path failed: %s" % ec.last_line(str(ex))[:200]
                    finally:
                        try:
                            os.remove(os.path.join(work_dir, vrel))
                        except OSError:
                            pass
                    entry["verify_s"] = round(time.time() - ts, 2)
                break
            except Exception as ex:
                attempts.append(("export", kwarg, dev, ex, traceback.format_exc()))
                entry = None
                if dev == "cuda" and _looks_like_device_error(ex):
                    continue                  # the same, built on the CPU
                if kwarg or default_hw == [size, size]:
                    break
                k = plan.index((True, devices[0]))   # again with img_size=
            finally:
                model = None
                gc.collect()
                for f in os.listdir(tdir):
                    p = os.path.join(tdir, f)
                    shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.remove(p)
        if entry is not None:
            entry["export_s"] = res["info"].get("export_s")
            entry["task_s"] = round(time.time() - t0, 2)
            res["entry"] = entry
        else:
            first_export = [a for a in attempts if a[0] == "export"]
            stage, kwarg, dev, ex, tb = (first_export or attempts
                                         or [("?", False, "cpu", RuntimeError("no attempt"), "")])[0]
            res["failure"] = {"error": ec.last_line("%s: %s" % (type(ex).__name__, ex)) or type(ex).__name__,
                              "stage": stage, "img_size_kwarg": kwarg, "init_device": dev,
                              "detail": tb[-1200:],
                              "attempts": ["%s[%s%s]: %s" % (s, d, ",img_size=%d" % size if kw_ else "",
                                                             ec.last_line("%s: %s" % (type(x).__name__, x))[:300])
                                           for s, kw_, d, x, _ in attempts]}
    except Exception as ex:
        res["failure"] = {"error": ec.last_line("%s: %s" % (type(ex).__name__, ex)) or type(ex).__name__,
                          "stage": "task", "detail": traceback.format_exc()[-1200:]}
    finally:
        model = None
        gc.collect()
        shutil.rmtree(tdir, ignore_errors=True)
        try:
            import ctypes
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except Exception:
            pass
    res["seconds"] = round(time.time() - t0, 2)
    return res


def worker_main(args):
    proto, prefixes = ec.worker_pipes(args)
    cuda_note = None
    try:
        torch = ec._torch_setup()
        import warnings
        warnings.simplefilter("ignore")
        import timm  # noqa: F401
        import onnx  # noqa: F401
        if args.init_device in ("auto", "cuda"):
            try:
                if torch.cuda.is_available():
                    torch.zeros(1, device="cuda").add_(1)
                    torch.cuda.synchronize()
                    _STATE["cuda"] = True
                else:
                    cuda_note = "torch.cuda.is_available() is False"
            except Exception as e:
                cuda_note = "cuda init failed: %s" % e
    except Exception as e:
        proto.write(json.dumps({"ready": False, "error": ec.sanitize(str(e), prefixes)}) + "\n")
        return 1
    proto.write(json.dumps({"ready": True, "pid": os.getpid(), "cuda": _STATE["cuda"],
                            "cuda_note": cuda_note}) + "\n")

    def crashed(task, e):
        return {"id": task["id"], "entry": None, "info": {},
                "failure": {"error": "%s: %s" % (type(e).__name__, e), "stage": "worker",
                            "detail": traceback.format_exc()[-1200:]}}

    def clean(res):
        f = res.get("failure")
        if f:
            for k in ("error", "detail"):
                f[k] = ec.sanitize(f.get(k, ""), prefixes)
            f["attempts"] = [ec.sanitize(a, prefixes) for a in f.get("attempts", [])]
    return ec.serve_tasks(proto, args, run_task, crashed, clean)


# --------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------
class Worker(ec.Worker):
    """export_corpus's worker handle, started on this script."""
    script = os.path.abspath(__file__)
    env_extra = {}


PACKAGES = ("torch", "timm", "onnx", "numpy", "protobuf")


MANIFEST_KEYS = ("model", "img_size", "family", "kind", "file", "params", "nodes", "bytes",
                 "export_s", "status")


def manifest_line(task, status, entry=None, info=None, failure=None):
    rec = {k: None for k in MANIFEST_KEYS}
    rec.update(model=task["model"], img_size=task["img_size"], family=task["family"],
               kind=task["kind"], status=status)
    info = info or {}
    if entry:
        rec.update(file=entry["file"], nodes=entry["nodes"], bytes=entry["bytes"],
                   export_s=entry["export_s"])
    rec["params"] = info.get("params")
    extra = {}
    for k, v in (entry or {}).items():
        if k not in rec:
            extra[k] = v
    for k in ("default_input_size", "test_input_size", "img_size_kwarg", "module", "architecture",
              "build_s", "init_device", "cuda_attrs_moved", "fast_path_error", "hooked_export_error"):
        if k in info:
            extra[k] = info[k]
    extra["param_count_m_csv"] = task["param_count_m"]
    extra["gmacs_csv"] = task["gmacs"]
    if failure:
        extra["error"] = failure.get("error")
    rec.update(extra)
    return rec


def parent_main(args):
    rows = read_models(args.models)
    ordered = select(order_models(rows), args.only, args.shard, args.skip_ok, args.skip_status)
    if args.list:
        for i, r in enumerate(ordered):
            print("%4d %-6s %-45s %4d  est %6.1fs %6.1fGB" % (i, r["kind"], r["model"], r["img_size"],
                                                               r["est_s"], r["mem_gb"]))
        kinds = {}
        for r in ordered:
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
        print("%d tasks %s; est %.0f thread-s" % (len(ordered), kinds, sum(r["est_s"] for r in ordered)))
        return 0

    prefixes, log, t_start, versions = ec.start_run(args, ("legacy",), PACKAGES)

    lines = {}          # stem -> manifest line
    failures = []
    lock = threading.Lock()
    mpath = os.path.join(args.out, "manifest.jsonl")
    open(mpath, "w").close()

    def record(task, status, entry=None, info=None, failure=None, seconds=None):
        rec = manifest_line(task, status, entry, info, failure)
        with lock:
            lines[task["stem"]] = rec
            with open(mpath, "a") as f:        # progress copy; rewritten sorted at the end
                f.write(json.dumps(rec) + "\n")
            if status != "ok":
                fr = {"model": task["model"], "img_size": task["img_size"], "family": task["family"],
                      "kind": task["kind"], "status": status}
                fr.update({k: ec.sanitize(v, prefixes) if isinstance(v, str) else v
                           for k, v in (failure or {}).items()})
                if seconds is not None:
                    fr["seconds"] = round(seconds, 1)
                failures.append(fr)

    ordered, missing = ec.split_missing(ordered, lambda t: t["model"], "(model, img_size)", log,
                                        lambda t: t["stem"])
    for t in missing:
        record(t, "missing", failure={"error": "not in timm %s list_models()" % versions.get("timm")})

    queue = []
    n_verify = {}
    per_kind = -(-args.verify // len(KIND_ORDER))
    for t in ordered:
        limit = min(args.max_task_s, args.min_task_s + 3.0 * t["est_s"])
        q = dict(t, id=t["stem"], timeout=round(limit), slow=args.slow)
        if n_verify.get(t["kind"], 0) < per_kind and t["param_count_m"] <= 50 and not args.slow:
            q["verify"] = True
            q["timeout"] = round(limit + 3.0 * t["est_s"])
            n_verify[t["kind"]] = n_verify.get(t["kind"], 0) + 1
        queue.append(q)
    log("%d tasks (%s), %d workers, deadline %ds, hard %ds, memory budget %.0f GB"
        % (len(queue), ", ".join("%s %d" % (k, sum(1 for t in queue if t["kind"] == k)) for k in KIND_ORDER),
           args.workers, args.deadline_s, args.hard_deadline_s, args.mem_budget_gb))

    state = {"mem": 0.0}

    def next_task():
        with lock:
            el = time.time() - t_start
            if el > args.deadline_s or not queue:
                return None
            waiting = False
            for i, t in enumerate(queue):
                if el + t["est_s"] > args.hard_deadline_s:
                    continue                    # would not finish: leave it for the record
                if state["mem"] > 0 and state["mem"] + t["mem_gb"] > args.mem_budget_gb:
                    waiting = True
                    continue
                queue.pop(i)
                state["mem"] += t["mem_gb"]
                return t
            return ec.WAIT if waiting else None

    def release(t):
        with lock:
            state["mem"] -= t["mem_gb"]

    def lost(task, w, msg, dt, hard):
        release(task)
        if msg is None:
            status = "timeout"
            reason = ("killed at the hard deadline after %.0fs" % dt if hard else
                      "timeout after %.0fs (limit %ds)" % (dt, task["timeout"]))
        else:
            status = "crash"
            try:
                code = w.p.wait(5)
            except Exception:
                code = w.p.poll()
            reason = "worker died (exit %s)" % code
        w.kill()
        shutil.rmtree(os.path.join(args.work, "tasks", task["stem"]), ignore_errors=True)
        record(task, status, failure={"error": reason, "limit_s": task["timeout"]}, seconds=dt)
        log("FAIL %-50s %s" % (task["id"], reason))

    def done(task, msg, dt):
        release(task)
        if msg.get("entry"):
            record(task, "ok", msg["entry"], msg.get("info"), seconds=dt)
            e = msg["entry"]
            log("done %-50s %6.1fs %5d nodes %6dKB %s" % (task["id"], dt, e["nodes"], e["bytes"] // 1024,
                                                         e.get("strip", "")))
        else:
            f = msg.get("failure") or {"error": "no result"}
            record(task, "error", None, msg.get("info"), f, seconds=dt)
            log("FAIL %-50s %6.1fs %s" % (task["id"], dt, (f.get("error") or "")[:200]))

    def go_on():
        return time.time() - t_start <= args.deadline_s and bool(queue)

    def started(idx, w):
        if idx == 0:
            log("worker 0 ready: %s" % json.dumps(w.ready))

    def slot(idx):
        ec.run_slot(idx, args, log, t_start, lambda i: Worker(i, args, log), next_task, done, lost, go_on,
                    started=started, renew=lambda t: t["mem_gb"] > args.restart_above_gb)   # big heaps back to the OS

    ec.run_slots(args.workers, slot)

    for t in queue:
        record(t, "deadline", failure={"error": "not started before the deadline"})

    order = {t["stem"]: i for i, t in enumerate(order_models(rows))}
    recs = sorted(lines.values(), key=lambda r: (r["model"], r["img_size"]))
    ec.write_jsonl(mpath, recs)
    failures.sort(key=lambda r: (r["model"], r["img_size"]))
    ec.write_jsonl(os.path.join(args.out, "failures.jsonl"), failures)
    counts = {}
    for r in recs:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    ok = [r for r in recs if r["status"] == "ok"]
    by_kind = {k: sum(1 for r in ok if r["kind"] == k) for k in KIND_ORDER}
    versions.update({"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
                     "init_device": args.init_device, "verify": args.verify, "slow": args.slow,
                     "legacy_opset": LEGACY_OPSET, "size_threshold": SIZE_THRESHOLD,
                     "workers": args.workers, "deadline_s": args.deadline_s,
                     "hard_deadline_s": args.hard_deadline_s, "only": args.only,
                     "shard": "%d/%d" % args.shard if args.shard else None, "skip_ok": bool(args.skip_ok),
                     "skip_status": args.skip_status if args.skip_ok else None,
                     "status_counts": counts, "ok_by_kind": by_kind,
                     "wall_s": round(time.time() - t_start, 1)})
    ec.write_json(os.path.join(args.out, "versions.json"), versions)
    files = sorted((r for r in ok), key=lambda r: (KIND_ORDER.index(r["kind"]) if r["kind"] in KIND_ORDER
                                                   else 9, order.get(stem_of(r["model"], r["img_size"]), 0)))
    with open(os.path.join(args.out, "pack_order.txt"), "w") as f:
        for n in ("manifest.jsonl", "failures.jsonl", "versions.json", "log.txt", "pack_order.txt"):
            f.write(n + "\n")
        for r in files:
            f.write(r["file"] + "\n")
    log("status counts %s; ok by kind %s; total bytes %d; wall %.0fs"
        % (json.dumps(counts), json.dumps(by_kind), sum(r["bytes"] for r in ok), time.time() - t_start))
    return 0


def main(argv=None):
    ap = ec.new_parser(__doc__)
    ap.add_argument("--models", default=os.path.join(HERE, "models.csv"), help="model list (make_model_list.py)")

    def limits(ap):
        ap.add_argument("--min-task-s", type=float, default=60, help="per-task limit: this + 3 x estimate ...")
        ap.add_argument("--max-task-s", type=float, default=400, help="... but at most this")
        ap.add_argument("--mem-budget-gb", type=float, default=96,
                        help="sum of the running tasks' estimated peak memory")
        ap.add_argument("--restart-above-gb", type=float, default=6,
                        help="replace a worker after a task estimated above this much memory")
        ap.add_argument("--init-device", choices=("auto", "cuda", "cpu"), default="auto",
                        help="where timm's constructor and weight init run (export is always on the CPU); "
                             "auto: cuda if available")
        ap.add_argument("--verify", type=int, default=0,
                        help="for the first N/3 tasks of each kind under 50M parameters also run the corpus "
                             "path (CPU-built model, export with weights, strip_and_save) and compare the files")
        ap.add_argument("--slow", action="store_true",
                        help="always use the corpus path (export with weights, load, strip)")
    ec.add_run_args(ap, "timm_results_out", "_timm_results_work",
                    "restrict to these models (NAME or NAME@SIZE)", extra=limits)
    ap.add_argument("--shard", type=parse_shard, default=None, help="i/n: every n-th task of the order, from i")
    ap.add_argument("--skip-ok", default=None, metavar="MANIFEST",
                    help="leave out the (model, img_size) pairs that have status ok in this manifest.jsonl")
    ap.add_argument("--skip-status", nargs="+", default=["ok"], metavar="STATUS",
                    help="with --skip-ok: the statuses whose pairs are left out (default: ok; "
                         "e.g. ok error: do not retry exporter errors either)")
    ap.add_argument("--list", action="store_true", help="print the ordered task list and exit (no torch)")
    return ec.dispatch(ap, argv, "_timm_results_work", worker_main, parent_main)


if __name__ == "__main__":
    sys.exit(main())
