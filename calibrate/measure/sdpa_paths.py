#!/usr/bin/env python3
"""Which kernels PyTorch's scaled_dot_product_attention runs for the inputs
timm's networks give it, under autocast on torch.randn data: the fused
kernels, or the math fallback (fp32 GEMMs, a softmax, casts). The evidence
for when tilewave may price an attention call as one fused kernel
(docs/validation.md "Attention: the fused kernel or the math path").

Each case is one call shape, as a network writes it: plain 4-D
[batch, heads, tokens, head_dim]; the same with a float additive bias (SAM's
relative positions) or a bool mask; tokens that are not a multiple of 8;
keys and values of one head broadcast over the queries' heads
(MobileNetV4's multi-query attention); a 5-D input (NesT's blocks); keys and
values from fewer tokens than the queries (PVT's and Twins' spatial
reduction). Each is warmed up, then profiled over REPS calls in its own
profiler session; a row records every kernel name with its calls and median
time, and the sum over one call.

usage (GPU machine): python3 calibrate/measure/sdpa_paths.py --out DIR
writes DIR/sdpa_paths.jsonl: a header row, then one row per case
{"case", "q", "k", "mask", "kernels": [[name, calls, median_us], ...], "call_us"}
"""
import argparse
import json
import os
import statistics
import sys

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

import torch  # noqa: E402  (after the path entry above)
import torch.nn.functional as F  # noqa: E402

from calibrate.measure.profiled_calls import REPS, profile  # noqa: E402


def cases():
    def t(*shape):
        return torch.randn(*shape, device="cuda")
    yield "plain 197", t(64, 12, 197, 64), t(64, 12, 197, 64), None
    yield "plain 196", t(64, 12, 196, 64), t(64, 12, 196, 64), None
    yield "plain 49 (window)", t(4096, 3, 49, 32), t(4096, 3, 49, 32), None
    yield "float bias 196", t(64, 12, 196, 64), t(64, 12, 196, 64), t(64, 12, 196, 196)
    yield "float bias 200", t(64, 12, 200, 64), t(64, 12, 200, 64), t(64, 12, 200, 200)
    yield "float bias 49 broadcast", t(4096, 3, 49, 32), t(4096, 3, 49, 32), t(1, 3, 49, 49)
    yield "bool mask 196", t(64, 12, 196, 64), t(64, 12, 196, 64), torch.rand(64, 1, 196, 196, device="cuda") > 0.1
    yield "one kv head expanded", t(64, 4, 196, 64), t(64, 1, 49, 64).expand(64, 4, 49, 64), None
    yield "one kv head broadcast", t(64, 4, 196, 64), t(64, 1, 49, 64), None
    yield "5-D (NesT)", t(64, 4, 16, 196, 32), t(64, 4, 16, 196, 32), None
    yield "kv fewer tokens (spatial reduction)", t(64, 2, 3136, 32), t(64, 2, 49, 32), None
    yield "head_dim 48", t(64, 8, 196, 48), t(64, 8, 196, 48), None
    yield "head_dim 80", t(64, 8, 196, 80), t(64, 8, 196, 80), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sdpa_paths.jsonl"), "w") as out:
        out.write(json.dumps({"header": True, "tool": "calibrate/measure/sdpa_paths.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name(), "reps": REPS, "data": "torch.randn",
                              "harness": "torch.autocast(cuda, float16), inference_mode, fp32 inputs"}) + "\n")
        for name, q, kv, mask in cases():
            def call():
                with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
                    return F.scaled_dot_product_attention(q, kv, kv, attn_mask=mask)
            times, error = profile(call)
            kernels = [[n, len(us) / REPS, statistics.median(us)] for n, us in times.items()]
            row = {"case": name, "q": list(q.shape), "k": list(kv.shape), "k_stride": list(kv.stride()),
                   "mask": None if mask is None else [str(mask.dtype), list(mask.shape)],
                   "kernels": sorted(kernels, key=lambda k: -k[1] * k[2]),
                   "call_us": sum(c * us for _, c, us in kernels), "error": error}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print("%-40s %8.1f us  %s" % (name, row["call_us"], "; ".join(
                "%s x%g" % (n[:60], c) for n, c, _ in row["kernels"][:3]) or error), flush=True)


if __name__ == "__main__":
    main()
