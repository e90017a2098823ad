#!/usr/bin/env python3
"""How long PyTorch's fused attention kernel takes, shape by shape, under
timm's harness (autocast fp16, inference_mode, torch.randn data): the
evidence for the cost of a fused attention call (docs/validation.md
"Attention: the fused kernel's time").

Each case is one scaled_dot_product_attention call on half q, k and v (what
a Linear under autocast hands it) of shape [batch, heads, tokens, head_dim]:
the token counts timm's transformers and hybrids give it (windows of 49 and
64, ViTs' 197 and 577, keys from fewer tokens than the queries), head sizes
32 to 128, and the masks they pass: none, an fp32 additive bias of the whole
[batch, heads, q, kv] (SAM), one broadcast over the batch [1, heads, q, kv]
(BEiT's and MaxViT's relative positions) and a bool [batch, 1, q, kv].
A fixed core of shapes comes first, then a seeded sample of the grid; the
sweep stops at --deadline-s, writing each row as it is measured. Each case
is warmed up, then profiled over REPS calls in its own profiler session
(profiled_calls.profile); a row records every kernel with its calls and median
time, the sum over one call, and the fused kernel's name and median time.

usage (GPU machine): python3 calibrate/measure/attention_sweep.py --out DIR [--sample N] [--seed S] [--deadline-s T]
writes DIR/attention_sweep.jsonl: a header row, then one row per case
{"case", "q", "k", "mask", "kernels": [[name, calls, median_us], ...], "call_us", "fused", "fused_us", "error"}
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

import torch  # noqa: E402  (after the path entry above)
import torch.nn.functional as F  # noqa: E402

from calibrate.gpu_state import nvidia_smi, profiled_header  # noqa: E402
from calibrate.measure.profiled_calls import REPS, profile  # noqa: E402; warm up, then REPS calls in one profiler session

# (query tokens, key tokens) as timm's networks give them: windows, ViTs at 224 and 384 (with and without a
# class token), MobileViT's patches, and spatial reduction (PVT, Twins: keys from a pooled map).
TOKENS = ((16, 16), (49, 49), (64, 64), (144, 144), (196, 196), (197, 197), (256, 256), (577, 577), (1024, 1024),
          (784, 49), (3136, 49), (196, 49), (1024, 256), (50, 50))
HEAD_DIMS = (32, 48, 64, 80, 96, 128)
HEADS = (1, 2, 3, 4, 6, 8, 12, 16)
BATCHES = (1, 4, 16, 64, 256, 1024, 4096)
MASKS = ("none", "none", "none", "bias", "bias_broadcast", "bool")
MAX_SCORES = 1 << 28  # batch x heads x q x kv: keeps a full mask within 1 GiB of fp32
MIN_SCORES = 1 << 12

# The core: one shape per question, before the sample (a killed call keeps them).
CORE = [(64, 12, 197, 197, 64, "none"), (64, 12, 196, 196, 64, "none"), (4096, 3, 49, 49, 32, "none"),
        (64, 12, 196, 196, 64, "bias"), (64, 12, 197, 197, 64, "bias_broadcast"),
        (4096, 3, 49, 49, 32, "bias_broadcast"), (64, 12, 196, 196, 64, "bool"), (64, 2, 3136, 49, 32, "none"),
        (64, 8, 196, 196, 48, "none"), (64, 8, 196, 196, 80, "none"), (64, 8, 196, 196, 96, "none"),
        (64, 8, 196, 196, 128, "none"), (1, 12, 197, 197, 64, "none"), (16, 12, 197, 197, 64, "none"),
        (256, 12, 197, 197, 64, "none"), (1, 16, 1024, 1024, 64, "none"), (16, 16, 1024, 1024, 64, "none"),
        (64, 12, 577, 577, 64, "none"), (1024, 4, 64, 64, 32, "none"), (1024, 4, 64, 64, 32, "bias_broadcast")]


def sample(n, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        q, kv = rng.choice(TOKENS)
        d, h, b, mask = rng.choice(HEAD_DIMS), rng.choice(HEADS), rng.choice(BATCHES), rng.choice(MASKS)
        scores = b * h * q * kv
        if MIN_SCORES <= scores <= MAX_SCORES:
            out.append((b, h, q, kv, d, mask))
    return out


def tensors(b, h, q, kv, d, mask):
    def half(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16)
    m = None
    if mask == "bias":
        m = torch.randn(b, h, q, kv, device="cuda")
    elif mask == "bias_broadcast":
        m = torch.randn(1, h, q, kv, device="cuda")
    elif mask == "bool":
        m = torch.rand(b, 1, q, kv, device="cuda") > 0.1
    return half(b, h, q, d), half(b, h, kv, d), half(b, h, kv, d), m


def fused_kernel(kernels):
    """The call's attention kernel (cuDNN's, flash or memory-efficient), or None on the math path."""
    for name, calls, us in kernels:
        low = name.lower()
        if "sdpa" in low or "flash" in low or "fmha" in low or "attention" in low:
            return name, us
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sample", type=int, default=400, help="shapes drawn from the grid after the core")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--deadline-s", type=float, default=420.0)
    args = ap.parse_args()
    start = time.monotonic()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "attention_sweep.jsonl"), "w") as out:
        out.write(json.dumps(profiled_header("calibrate/measure/attention_sweep.py", REPS, seed=args.seed,
                                             sample=args.sample, data="torch.randn: half q, k, v; fp32 or bool masks",
                                             harness="torch.autocast(cuda, float16), inference_mode")) + "\n")
        done = 0
        for b, h, q, kv, d, mask in CORE + sample(args.sample, args.seed):
            if time.monotonic() - start > args.deadline_s:
                print("deadline reached after %d cases" % done, flush=True)
                break
            qt, kt, vt, m = tensors(b, h, q, kv, d, mask)

            def call():
                with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
                    return F.scaled_dot_product_attention(qt, kt, vt, attn_mask=m)
            times, error = profile(call)
            kernels = sorted([[n, len(us) / REPS, statistics.median(us)] for n, us in times.items()],
                             key=lambda k: -k[1] * k[2])
            fused = fused_kernel(kernels)
            row = {"case": "%dx%dx%dx%d kv %d %s" % (b, h, q, d, kv, mask), "q": [b, h, q, d], "k": [b, h, kv, d],
                   "mask": None if m is None else [str(m.dtype).replace("torch.", ""), list(m.shape)],
                   "kernels": kernels, "call_us": sum(c * us for _, c, us in kernels),
                   "fused": fused[0] if fused else None, "fused_us": fused[1] if fused else None, "error": error}
            out.write(json.dumps(row) + "\n")
            out.flush()
            done += 1
            print("%-40s %9.1f us  fused %s" % (row["case"], row["call_us"], row["fused_us"]), flush=True)
        out.write(json.dumps({"footer": True, "cases": done, "elapsed_s": round(time.monotonic() - start, 1),
                              "gpu_state_end": nvidia_smi("clocks.sm,temperature.gpu,power.draw")}) + "\n")


if __name__ == "__main__":
    main()
