#!/usr/bin/env python3
"""A PyTorch profiler trace of one forward, as users make them (test data for
`tilewave check --trace`, docs/report.md): a torchvision network with random
weights, eval mode, fp16, channels-last, cudnn.benchmark, torch.randn input,
eager PyTorch; three warm-up forwards, then one profiled forward (with
record_shapes=True, so that `check` can pair by shape) exported with
torch.profiler's export_chrome_trace. With --compile the network runs as
torch.compile(model) (default mode), compiled by the warm-up forwards.
--precision amp runs it as timm's benchmark.py does (fp32 weights under
torch.autocast fp16), fp32 in fp32; --layout nchw keeps PyTorch's default
layout. The defaults (half, channels_last) made the traces of tests/data/traces
that name neither.

usage (GPU machine): python3 -m calibrate.measure.capture_trace --model resnet18 --batch 1 [--compile]
                     [--precision half|amp|fp32] [--layout channels_last|nchw] --out DIR
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess

import torch
import torchvision


def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--compile", action="store_true", help="torch.compile the network (runtime inductor)")
    ap.add_argument("--precision", choices=("half", "amp", "fp32"), default="half",
                    help="half: model.half(); amp: fp32 weights under torch.autocast(fp16); fp32")
    ap.add_argument("--layout", choices=("channels_last", "nchw"), default="channels_last")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    weights = torch.float16 if a.precision == "half" else torch.float32
    memory_format = torch.channels_last if a.layout == "channels_last" else torch.contiguous_format
    m = getattr(torchvision.models, a.model)().eval().to("cuda", dtype=weights)
    m = m.to(memory_format=memory_format)
    if a.compile:
        m = torch.compile(m)
    x = torch.randn(a.batch, 3, 224, 224, device="cuda", dtype=weights).contiguous(memory_format=memory_format)
    autocast = torch.autocast("cuda", dtype=torch.float16, enabled=a.precision == "amp")
    with torch.no_grad(), autocast:
        for _ in range(3):
            m(x)
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
            m(x)
            torch.cuda.synchronize()
    os.makedirs(a.out, exist_ok=True)
    runtime = "inductor" if a.compile else "eager"
    name = "%s_b%d_%s" % (a.model, a.batch, runtime)
    if (a.precision, a.layout) != ("half", "channels_last"):
        name += "_%s_%s" % (a.precision, a.layout)
    path = os.path.join(a.out, name + ".json")
    prof.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
        shutil.copyfileobj(f, g)
    os.remove(path)
    meta = {"model": "torchvision." + a.model, "batch": a.batch, "runtime": runtime,
            "dtype": "fp32" if a.precision == "fp32" else "fp16", "amp": a.precision == "amp",
            "layout": a.layout, "input": "torch.randn", "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(), "torch_cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "driver": driver_version(),
            "command": "python3 -m calibrate.measure.capture_trace --model %s --batch %d%s --precision %s "
                       "--layout %s --out DIR" % (a.model, a.batch, " --compile" if a.compile else "", a.precision,
                                                  a.layout),
            "kernels": sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)}
    with open(os.path.join(a.out, name + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
