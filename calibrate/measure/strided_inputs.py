#!/usr/bin/env python3
"""Which kernels PyTorch eager runs when an op reads a permuted (non-contiguous)
activation, against the same op on a contiguous one, under timm's harness
(fp32 modules under autocast fp16, inference_mode, torch.randn data). The
evidence for the eager lowering's rule on layout-view Transposes
(docs/validation.md "The fresh set: networks measured after the freeze (issue 31)", on CaiT): which
consumers copy a permuted input contiguous first, and when a Linear's bias is
added by a kernel of its own instead of the GEMM's epilogue.

Each case pairs with a contiguous twin of the same shape: CaiT's talking-heads
maps (a Linear over the head axis of a permuted [batch, heads, tokens, tokens]
map, the softmax of the map permuted back, the map times v), a ViT-style 3-D
Linear on a transposed input, and ConvNeXt's LayerNorm over an NCHW activation
permuted to channels-last; then CaiT's proj_w on an fp32 map (autocast's cast
before the copy) and a sweep of layout-view permutes made contiguous, at fp16
and fp32 over CNN and transformer shapes, each beside a contiguous copy of the
same tensor. Each is warmed up, then profiled over REPS calls in
its own profiler session (profiled_calls.profile); a row records each launch of one call (a name
launched twice a call is two entries) with its median time over the calls, and
the sum over one call.

usage (GPU machine): python3 calibrate/measure/strided_inputs.py --out DIR
writes DIR/strided_inputs.jsonl: a header row, then one row per case
{"case", "input", "input_stride", "input_dtype", "contiguous", "kernels": [[name, 1, median_us], ...], "call_us", "error"}:
one kernel entry per launch of a call, names in the order of their first launch
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

from calibrate.gpu_state import profiled_header  # noqa: E402
from calibrate.measure.profiled_calls import REPS, profile  # noqa: E402; warm up, then REPS calls in one profiler session


def half(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.float16)


def single(*shape):
    return torch.randn(*shape, device="cuda")


# Activations of CNN stages and transformer maps, [B, C, H, W] (a map: [B, heads, tokens, tokens], or heads
# last as CaiT's talking heads leave it), whose
# layout-view permutes the copy sweep times at both of PyTorch's activation types.
COPY_SHAPES = ((1, 384, 14, 14), (16, 384, 14, 14), (64, 384, 14, 14), (64, 96, 56, 56), (16, 768, 7, 7),
               (64, 64, 56, 56), (1, 8, 577, 577), (8, 16, 577, 577), (64, 8, 197, 197), (64, 8, 577, 577),
               (64, 197, 197, 8), (8, 577, 577, 16), (64, 577, 577, 8))


def cases():
    """(name, input tensor, the call on it): each permuted case, then its contiguous twin."""
    b, heads, n, d, c = 64, 8, 577, 48, 384
    talk = torch.nn.Linear(heads, heads).cuda()
    talk_nobias = torch.nn.Linear(heads, heads, bias=False).cuda()
    proj = torch.nn.Linear(c, c).cuda()
    norm = torch.nn.LayerNorm(c).cuda()
    v = half(b, heads, n, d)
    heads_first = half(b, heads, n, n)
    heads_last = half(b, n, n, heads)
    yield "linear over heads, permuted map (CaiT proj_l)", heads_first.permute(0, 2, 3, 1), talk
    yield "linear over heads, contiguous map", heads_last, talk
    yield "linear over heads without bias, permuted map", heads_first.permute(0, 2, 3, 1), talk_nobias
    yield "softmax, map permuted back (CaiT)", heads_last.permute(0, 3, 1, 2), lambda x: x.softmax(-1)
    yield "softmax, contiguous map", heads_first, lambda x: x.softmax(-1)
    yield "matmul, permuted map @ v (CaiT)", heads_last.permute(0, 3, 1, 2), lambda x: x @ v
    yield "matmul, contiguous map @ v", heads_first, lambda x: x @ v
    yield "linear 3-D, transposed [B,C,N] (tokens last)", half(b, c, n).transpose(1, 2), proj
    yield "linear 3-D, contiguous [B,N,C]", half(b, n, c), proj
    yield "layer_norm, NCHW permuted to channels-last (ConvNeXt)", half(b, c, 14, 14).permute(0, 2, 3, 1), norm
    yield "layer_norm, contiguous [B,H,W,C]", half(b, 14, 14, c), norm
    # CaiT's proj_w under autocast: the softmax wrote fp32, so the Linear's input is cast to fp16 before its
    # copy: which kernel casts, does the cast keep the permuted strides, and in which type is the copy?
    yield "linear over heads, permuted fp32 map (CaiT proj_w)", single(b, heads, n, n).permute(0, 2, 3, 1), talk
    # The copy sweep: a permuted view made contiguous (the copy a Linear, softmax or matmul makes of it),
    # against a contiguous copy of the same bytes.
    for shape in COPY_SHAPES:
        for make, dtype in ((half, "fp16"), (single, "fp32")):
            x = make(*shape)
            for perm in ((0, 2, 3, 1), (0, 3, 1, 2)):
                yield "copy, permute %s, %s %s" % ("".join(map(str, perm)), dtype, list(shape)), x.permute(*perm), \
                    torch.Tensor.contiguous
            yield "copy, contiguous, %s %s" % (dtype, list(shape)), x, torch.clone


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "strided_inputs.jsonl"), "w") as out:
        out.write(json.dumps(profiled_header(
            "calibrate/measure/strided_inputs.py", REPS,
            data="torch.randn, fp16 activations (fp32 where a row's input_dtype says)",
            harness="fp32 modules under torch.autocast(cuda, float16), inference_mode")) + "\n")
        for name, x, op in cases():
            def call():
                with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
                    return op(x)
            times, error = profile(call)
            # A name launched c times a call (autocast's casts of the weight, the bias and a large input) is c
            # kernels: the i-th launch of every call apart, each with its own median.
            kernels = [[k, 1, statistics.median(us[i::len(us) // REPS])] for k, us in times.items()
                       for i in range(len(us) // REPS)]
            row = {"case": name, "input": list(x.shape), "input_stride": list(x.stride()),
                   "input_dtype": str(x.dtype).replace("torch.", ""),
                   "contiguous": x.is_contiguous(), "kernels": kernels,
                   "call_us": sum(calls * us for _, calls, us in kernels), "error": error}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print("%-55s %9.1f us  %s" % (name, row["call_us"], " | ".join(
                "%s x%g %.1f" % (k[:50], calls, us) for k, calls, us in kernels) or error), flush=True)


if __name__ == "__main__":
    main()
