#!/usr/bin/env python3
"""Per-kernel device times of whole networks, for finding where a network's
time goes that the per-layer model misses (docs/validation.md).

For each (model, batch): the network is prepared exactly as netbench.py
prepares it (BN folded, conv bias dropped, fp16, channels_last, cudnn
benchmark), warmed up, then one eager forward runs under torch.profiler.
Writes one JSON line per (model, batch): the sum of kernel device times,
the kernel count, and the kernels (name, us) in launch order.

usage (GPU machine): python3 -m calibrate.measure.netbench.profile_kernels --out K.jsonl --models a,b --batch 1,128
"""
import argparse
import json
import sys
import time

import torch

from calibrate.measure.netbench import netbench


@torch.no_grad()
def profile_one(model, name, batch, device, dtype):
    from torch.profiler import ProfilerActivity, profile
    size = netbench.zoo.INPUT_SIZE.get(name, 224)
    x = torch.randn(batch, 3, size, size, device=device, dtype=dtype).contiguous(memory_format=torch.channels_last)
    for _ in range(5):
        model(x)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        model(x)
        torch.cuda.synchronize()
    kernels = [(e.name, e.device_time) for e in prof.events() if netbench.is_kernel_event(e)]
    return {"model": name, "batch": batch, "kernels": len(kernels),
            "kernel_sum_us": round(sum(t for _, t in kernels), 2),
            "list": [[n[:120], round(t, 2)] for n, t in kernels]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True, help="comma list, or a set name of onnx_models/zoo.py")
    ap.add_argument("--batch", default="1,128")
    args = ap.parse_args()
    device = torch.device("cuda", 0)
    torch.backends.cudnn.benchmark = True
    opts = netbench.parse_args(["--out", "/dev/null"])
    with open(args.out, "w") as out:
        for name in netbench.zoo.expand(args.models.split(",")):
            t = time.time()
            model, info = netbench.prepare(name, device)
            model, dtype = netbench.finish_model(model, info, opts, device)
            for b in [int(v) for v in args.batch.split(",")]:
                rec = profile_one(model, name, b, device, dtype)
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(f"{name} b{b}: {rec['kernels']} kernels, {rec['kernel_sum_us']} us ({time.time() - t:.1f} s)",
                      file=sys.stderr)
            del model
            netbench.free_memory(device)


if __name__ == "__main__":
    main()
