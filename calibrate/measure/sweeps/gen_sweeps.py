#!/usr/bin/env python3
"""Generate calibration layer sets (docs/layerset.md) that expose tile
quantization, wave quantization, alignment and bandwidth effects on an H200.

Pure stdlib.  Deterministic: sampling uses a fixed seed, so re-running
reproduces the files byte for byte.

    python3 -m calibrate.measure.sweeps.gen_sweeps [--out DIR]

Every line carries "sweep":"<name>" so results can be sliced per experiment.
A shape may appear in several sweeps on purpose: each sweep is meant to be
read as one complete series, and repeats double as a repeatability check.
"""
import argparse
import json
import math
import os
import random

SEED = 20240611
MAX_BYTES = 4.0e9          # per-problem footprint cap (inputs + weights + outputs)
BYTES = {"fp16": 2, "bf16": 2, "fp32": 4, "tf32": 4, "int8": 1}

# Sizes straddling the usual CTA tile edges (64/128/256) and a few off-grid ones.
TILE_EDGES = [64, 96, 127, 128, 129, 192, 255, 256, 257, 384, 511, 512,
              513, 768, 1024, 1536, 2048, 4096]


# ---------------------------------------------------------------- footprints

def out_bytes(dtype):
    # int8 GEMM/conv accumulate and usually write int32 (cuBLASLt IMMA).
    return 4 if dtype == "int8" else BYTES[dtype]


def gemm_bytes(p):
    b, e = p.get("batch", 1), BYTES[p["dtype"]]
    return b * ((p["M"] * p["K"] + p["K"] * p["N"]) * e + p["M"] * p["N"] * out_bytes(p["dtype"]))


def conv_out_hw(p):
    (sh, sw), (ph, pw), (dh, dw) = p["stride"], p["pad"], p["dilation"]
    P = (p["H"] + 2 * ph - dh * (p["R"] - 1) - 1) // sh + 1
    Q = (p["W"] + 2 * pw - dw * (p["S"] - 1) - 1) // sw + 1
    return P, Q


def conv_bytes(p):
    P, Q = conv_out_hw(p)
    e = BYTES[p["dtype"]]
    x = p["N"] * p["C"] * p["H"] * p["W"] * e
    w = p["K"] * (p["C"] // p["groups"]) * p["R"] * p["S"] * e
    y = p["N"] * p["K"] * P * Q * out_bytes(p["dtype"])
    return x + w + y


def mem_bytes(p):
    e = BYTES[p["dtype"]]
    op = p["op"]
    if op == "eltwise":
        return (p["inputs"] + 1) * p["elems"] * e
    if op == "pool":
        return 2 * p["N"] * p["C"] * p["H"] * p["W"] * e   # output <= input
    if op == "reduce":
        return (p["outer"] * p["inner"] + p["outer"]) * e
    if op == "softmax":
        return 2 * p["outer"] * p["inner"] * e
    if op == "copy":
        return (p["elems_in"] + p["elems_out"]) * e
    raise ValueError(op)


def footprint(p):
    op = p["op"]
    if op == "gemm":
        return gemm_bytes(p)
    if op == "conv":
        return conv_bytes(p)
    return mem_bytes(p)


# ---------------------------------------------------------------- record makers

def gemm(sweep, dtype, M, N, K, batch=1):
    p = {"sweep": sweep, "op": "gemm", "dtype": dtype, "M": M, "N": N, "K": K}
    if batch != 1:
        p["batch"] = batch
    return p


def conv(sweep, dtype, N, C, H, K, R, stride=1, pad=None, dil=1, groups=1, W=None, S=None):
    S = R if S is None else S
    W = H if W is None else W
    if pad is None:           # "same" padding, as CNNs use
        pad = (dil * (R - 1) // 2, dil * (S - 1) // 2)
    elif isinstance(pad, int):
        pad = (pad, pad)
    return {"sweep": sweep, "op": "conv", "dtype": dtype, "N": N, "C": C, "H": H,
            "W": W, "K": K, "R": R, "S": S, "stride": [stride, stride],
            "pad": list(pad), "dilation": [dil, dil], "groups": groups}


# ---------------------------------------------------------------- GEMM sweeps

def gemm_fp16():
    d, out = "fp16", []
    # Tile quantization: M,N just below / on / above tile edges.  K fixed and
    # moderate so the mainloop is long enough to dominate the prologue.
    for M in TILE_EDGES:
        for N in TILE_EDGES:
            out.append(gemm("gemm_tile_grid", d, M, N, 1024))
    # Wave quantization: with M=4096 and a 128x128/256x128 tile, each +64..128
    # in N adds 16-32 CTAs; steps of 64 walk through several 132-CTA waves.
    for N in range(64, 4096 + 1, 64):
        out.append(gemm("gemm_wave_n", d, 4096, N, 4096))
    # Same at a smaller M so the tail wave is a larger fraction of the work.
    for N in range(128, 4096 + 1, 128):
        out.append(gemm("gemm_wave_n_m1024", d, 1024, N, 2048))
    # K sweep: prologue/epilogue amortisation and split-K regime (small MN).
    ks = [64, 96, 128, 192, 256, 384, 512, 768, 1000, 1024, 1536, 2048,
          3072, 4095, 4096, 4097, 6144, 8192]
    for MN in (512, 2048):
        for K in ks:
            out.append(gemm("gemm_k_sweep_mn%d" % MN, d, MN, MN, K))
    # Squares: peak throughput curve and alignment (odd sizes lose 16B loads).
    sq = [256, 384, 511, 512, 513, 768, 1000, 1023, 1024, 1025, 1536, 2000,
          2047, 2048, 2049, 3000, 3072, 4000, 4095, 4096, 4097, 5000, 6144,
          7000, 8191, 8192]
    for s in sq:
        out.append(gemm("gemm_square", d, s, s, s))
    # Alignment: K and N offsets by 1,2,4,8 from 1024 (vector width effects).
    for off in (0, 1, 2, 4, 6, 8, 16):
        out.append(gemm("gemm_align_k", d, 2048, 2048, 1024 + off))
        out.append(gemm("gemm_align_n", d, 2048, 1024 + off, 2048))
        out.append(gemm("gemm_align_m", d, 1024 + off, 2048, 2048))
    # Batched: many small problems fill the machine through the batch dim.
    for b in (2, 4, 8, 16, 32, 64):
        for (M, N, K) in ((64, 64, 64), (128, 128, 64), (256, 256, 64),
                          (197, 197, 64), (512, 512, 128), (1024, 1024, 64),
                          (1024, 64, 1024)):
            out.append(gemm("gemm_batched", d, M, N, K, b))
    # Skinny: FC layers at small batch (GEMV-like, bandwidth bound).
    for M in (1, 2, 4, 8, 16, 24, 32, 48, 64):
        for (N, K) in ((1000, 512), (1000, 2048), (1000, 4096), (4096, 4096),
                       (4096, 25088), (1024, 1024), (1280, 1280)):
            out.append(gemm("gemm_skinny_m", d, M, N, K))
    # Skinny in N (few output channels over many pixels, e.g. a 1x1 conv head).
    for N in (1, 8, 16, 32, 64):
        for M in (12544, 100352):
            out.append(gemm("gemm_skinny_n", d, M, N, 256))
    out += gemm_random(d, 120, "gemm_random")
    return out


def gemm_random(dtype, n, sweep, align=None):
    """Log-uniform M,N,K in [16, 8192]; a third rounded to multiples of 8
    (network-like), a third to 64 (tile aligned), the rest left raw."""
    rng = random.Random(SEED + hash_str(dtype + sweep))
    out = []
    while len(out) < n:
        dims = [int(round(math.exp(rng.uniform(math.log(16), math.log(8192))))) for _ in range(3)]
        mode = rng.random()
        if align:
            dims = [max(align, d // align * align) for d in dims]
        elif mode < 1 / 3:
            dims = [max(8, d // 8 * 8) for d in dims]
        elif mode < 2 / 3:
            dims = [max(64, d // 64 * 64) for d in dims]
        batch = rng.choice([1, 1, 1, 1, 2, 8, 32]) if dims[0] * dims[1] < 1 << 20 else 1
        p = gemm(sweep, dtype, dims[0], dims[1], dims[2], batch)
        if footprint(p) < MAX_BYTES:
            out.append(p)
    return out


def hash_str(s):
    # Stable across runs (Python's hash() is salted per process).
    return sum((i + 1) * ord(c) for i, c in enumerate(s))


def gemm_other(dtype):
    """Smaller version of the fp16 set: enough to fit a per-dtype peak and
    check that tile/alignment behaviour carries over."""
    out = []
    for M in (64, 127, 128, 129, 256, 257, 1024, 4096):
        for N in (128, 129, 1024, 4096):
            out.append(gemm("gemm_tile_grid", dtype, M, N, 1024))
    for N in range(256, 4096 + 1, 384):
        out.append(gemm("gemm_wave_n", dtype, 4096, N, 4096))
    for s in (256, 512, 1000, 1024, 2048, 2049, 4095, 4096, 4097, 8192):
        out.append(gemm("gemm_square", dtype, s, s, s))
    for K in (64, 256, 1024, 4096, 8192):
        out.append(gemm("gemm_k_sweep_mn512", dtype, 512, 512, K))
    for off in (0, 1, 2, 4, 8):
        out.append(gemm("gemm_align_k", dtype, 2048, 2048, 1024 + off))
    for M in (1, 8, 32, 64):
        out.append(gemm("gemm_skinny_m", dtype, M, 4096, 4096))
        out.append(gemm("gemm_skinny_m", dtype, M, 1000, 2048))
    for b in (4, 32):
        out.append(gemm("gemm_batched", dtype, 256, 256, 64, b))
        out.append(gemm("gemm_batched", dtype, 1024, 1024, 64, b))
    out += gemm_random(dtype, 20, "gemm_random", align=4 if dtype == "int8" else None)
    return out


# ---------------------------------------------------------------- conv sweeps

CHANNELS = [3, 8, 12, 16, 24, 32, 36, 48, 60, 64, 96, 100, 120, 128, 192,
            200, 256, 384, 500, 512, 1024]

# ResNet-like body layers (C, H, K, R, stride): used for batch sweeps.
RESNET_LAYERS = [(64, 56, 64, 3, 1), (128, 28, 128, 3, 1), (256, 14, 256, 3, 1),
                 (512, 7, 512, 3, 1), (256, 56, 64, 1, 1), (2048, 7, 512, 1, 1),
                 (64, 56, 256, 1, 1), (128, 56, 128, 3, 2)]


def conv_fp16():
    d, out = "fp16", []
    # Channel sweeps (alignment: C,K not multiple of 8 force padding or slow
    # kernels; tile: K around 64/128/256) at 3x3 and 1x1, fixed 32x28x28.
    for R in (1, 3):
        for fixed in (64, 256):
            for c in CHANNELS:
                out.append(conv("conv_c_sweep_r%d_k%d" % (R, fixed), d, 32, c, 28, fixed, R))
                out.append(conv("conv_k_sweep_r%d_c%d" % (R, fixed), d, 32, fixed, 28, c, R))
    # Spatial sweep: output pixels (GEMM M = N*P*Q) around tile/wave edges.
    for H in (7, 8, 13, 14, 15, 16, 27, 28, 29, 32, 55, 56, 57, 64, 112, 224):
        out.append(conv("conv_hw_sweep_c64_r3", d, 16, 64, H, 64, 3))
        out.append(conv("conv_hw_sweep_c128_r3", d, 16, 128, H, 128, 3))
        out.append(conv("conv_hw_sweep_c256_r1", d, 16, 256, H, 256, 1))
    # Batch sweep on representative ResNet layers: from launch/latency bound
    # (N=1, a fraction of one wave) to throughput bound.
    for N in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        for (C, H, K, R, s) in RESNET_LAYERS:
            out.append(conv("conv_batch_sweep", d, N, C, H, K, R, stride=s))
    # Strided: downsampling 3x3 s2 and 1x1 s2 projection shortcuts.
    for N in (1, 32, 128):
        for (C, H, K) in ((64, 56, 128), (128, 56, 128), (256, 28, 256),
                          (512, 14, 512), (256, 56, 512)):
            out.append(conv("conv_stride2_r3", d, N, C, H, K, 3, stride=2))
            out.append(conv("conv_stride2_r1", d, N, C, H, K * 2 if C == 256 else K, 1, stride=2))
    # Dilated 3x3 (DeepLab-style): same MACs, different im2col footprint.
    for N in (1, 16):
        for (C, H) in ((64, 56), (256, 28), (512, 28), (1024, 14)):
            out.append(conv("conv_dilation2", d, N, C, H, C, 3, dil=2))
    # Grouped (ResNeXt 32 groups; RegNet/ShuffleNet style few groups).
    for g in (2, 4, 8, 32):
        for (C, H) in ((128, 56), (256, 28), (512, 14), (1024, 7)):
            out.append(conv("conv_grouped_r3", d, 32, C, H, C, 3, groups=g))
        out.append(conv("conv_grouped_r1", d, 32, 256, 28, 256, 1, groups=g))
    # Depthwise: memory bound, no tensor cores; 3x3/5x5/7x7 and both strides.
    for R in (3, 5, 7):
        for C in (16, 32, 64, 96, 144, 192, 240, 384, 480, 576, 672, 960, 1024):
            H = 112 if C <= 32 else 56 if C <= 96 else 28 if C <= 240 else 14
            out.append(conv("conv_depthwise_r%d" % R, d, 32, C, H, C, R, groups=C))
            if C in (32, 96, 144, 240, 672):
                out.append(conv("conv_depthwise_r%d_s2" % R, d, 32, C, H, C, R, stride=2, groups=C))
    for N in (1, 8, 64, 256):   # depthwise batch sweep
        out.append(conv("conv_depthwise_batch", d, N, 144, 56, 144, 3, groups=144))
    # Filter size sweep, incl. Inception's asymmetric 1x7 / 7x1.
    for R in (1, 3, 5, 7):
        for C in (64, 256):
            out.append(conv("conv_rs_sweep", d, 32, C, 28, C, R))
    for C in (128, 192):
        out.append(conv("conv_rs_asym", d, 32, C, 17, C, 1, S=7))
        out.append(conv("conv_rs_asym", d, 32, C, 17, C, 7, S=1))
    # Stems: C=3 cannot use aligned tensor-core loads; ResNet 7x7 s2 and the
    # MobileNet/EfficientNet 3x3 s2.
    for N in (1, 8, 32, 64, 128, 256):
        out.append(conv("conv_stem_r7", d, N, 3, 224, 64, 7, stride=2, pad=3))
        out.append(conv("conv_stem_r3", d, N, 3, 224, 32, 3, stride=2, pad=1))
    out += conv_random(d, 100, "conv_random")
    return out


def conv_random(dtype, n, sweep, align=1):
    """CNN-plausible random convs: channels from a mix of aligned and odd
    values, spatial matched to channel depth like real networks."""
    rng = random.Random(SEED + hash_str(dtype + sweep))
    chans = [16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 256, 320,
             384, 448, 512, 768, 1024, 20, 44, 72, 100, 150, 200]
    out = []
    while len(out) < n:
        C, K = rng.choice(chans), rng.choice(chans)
        if align > 1:
            C, K = -(-C // align) * align, -(-K // align) * align
        H = rng.choice([7, 14, 17, 28, 35, 56] if max(C, K) > 128 else [28, 56, 112])
        R = rng.choice([1, 1, 3, 3, 3, 5])
        s = rng.choice([1, 1, 1, 2])
        N = rng.choice([1, 4, 16, 32, 64, 128])
        p = conv(sweep, dtype, N, C, H, K, R, stride=s)
        if conv_bytes(p) < MAX_BYTES:
            out.append(p)
    return out


def conv_other(dtype):
    """Smaller set for bf16/fp32/tf32/int8.  int8 (IMMA) needs C,K multiple
    of 4, so odd channel counts are rounded up there."""
    align = 4 if dtype == "int8" else 1
    a = (lambda c: -(-c // align) * align)
    out = []
    for c in (3, 8, 12, 16, 24, 60, 64, 100, 128, 200, 256, 500, 512, 1024):
        for R in (1, 3):
            out.append(conv("conv_c_sweep_r%d_k64" % R, dtype, 32, a(c), 28, 64, R))
            out.append(conv("conv_k_sweep_r%d_c64" % R, dtype, 32, 64, 28, a(c), R))
    for N in (1, 32, 128):
        for (C, H, K, R, s) in RESNET_LAYERS:
            out.append(conv("conv_batch_sweep", dtype, N, C, H, K, R, stride=s))
    for (C, H) in ((64, 56), (256, 28), (512, 14)):
        out.append(conv("conv_stride2_r3", dtype, 32, C, H, C * 2 if C < 512 else C, 3, stride=2))
        out.append(conv("conv_grouped_r3", dtype, 32, C * 2, H, C * 2, 3, groups=32))
    for R in (3, 5):
        for C in (32, 96, 240, 672):
            H = 112 if C <= 32 else 56 if C <= 96 else 28 if C <= 240 else 14
            out.append(conv("conv_depthwise_r%d" % R, dtype, 32, C, H, C, R, groups=C))
    for N in (1, 32, 128):
        out.append(conv("conv_stem_r7", dtype, N, a(3), 224, 64, 7, stride=2, pad=3))
    out.append(conv("conv_dilation2", dtype, 16, 256, 28, 256, 3, dil=2))
    out += conv_random(dtype, 15, "conv_random", align=align)
    return out


# ---------------------------------------------------------------- memory-bound

def decades(lo_exp, hi_exp, per_decade=2):
    vals = []
    for e in range(lo_exp, hi_exp + 1):
        for f in ((1, 3) if per_decade == 2 else (1, 2, 5))[:per_decade]:
            v = f * 10 ** e
            if v <= 10 ** hi_exp:
                vals.append(v)
    return vals


def memory_set():
    out = []
    add = lambda p: out.append(p) if mem_bytes(p) <= MAX_BYTES else None
    # Eltwise bandwidth curve: launch-bound (1e3) -> L2-resident -> HBM-bound.
    for dt in ("fp16", "fp32"):
        for inputs in (1, 2, 3):
            for e in decades(3, 9, 2 if dt == "fp16" else 1):
                add({"sweep": "eltwise_decades", "op": "eltwise", "dtype": dt, "elems": e, "inputs": inputs})
    # Fine power-of-two walk across the L2 capacity (~50 MB) for Add.
    for k in range(14, 30):
        add({"sweep": "eltwise_pow2_l2", "op": "eltwise", "dtype": "fp16", "elems": 1 << k, "inputs": 2})
    # Odd sizes: tail handling / vector width misalignment.
    for e in (1_000_001, 3_211_265, 12_845_057, 102_760_449):
        add({"sweep": "eltwise_odd", "op": "eltwise", "dtype": "fp16", "elems": e, "inputs": 1})
    # Activation-tensor sizes of real CNN layers (N x C x H x W).
    for N in (1, 16, 128):
        for (C, H) in ((64, 112), (256, 56), (512, 28), (1024, 14), (2048, 7), (32, 112), (144, 56)):
            add({"sweep": "eltwise_cnn", "op": "eltwise", "dtype": "fp16", "elems": N * C * H * H, "inputs": 2})
            add({"sweep": "eltwise_cnn", "op": "eltwise", "dtype": "fp16", "elems": N * C * H * H, "inputs": 1})
    out += pool_set()
    out += reduce_set()
    out += softmax_set()
    out += copy_set()
    return [p for p in out if mem_bytes(p) <= MAX_BYTES]


def pool(sweep, dtype, N, C, H, R, stride, pad, mode):
    return {"sweep": sweep, "op": "pool", "dtype": dtype, "N": N, "C": C, "H": H,
            "W": H, "R": R, "S": R, "stride": [stride, stride], "pad": [pad, pad], "mode": mode}


def pool_set():
    out = []
    for N in (1, 8, 32, 128, 256):   # ResNet stem maxpool
        out.append(pool("pool_max3_s2_resnet", "fp16", N, 64, 112, 3, 2, 1, "max"))
    for N in (1, 32, 128):           # GoogLeNet/AlexNet/SqueezeNet style (pad 0)
        for (C, H) in ((64, 112), (192, 56), (480, 28), (96, 55), (256, 27)):
            out.append(pool("pool_max3_s2_p0", "fp16", N, C, H, 3, 2, 0, "max"))
    for N in (1, 32, 128):           # DenseNet transition avgpool 2x2 s2
        for (C, H) in ((128, 56), (256, 28), (512, 14)):
            out.append(pool("pool_avg2_s2", "fp16", N, C, H, 2, 2, 0, "avg"))
    for N in (1, 32, 128):           # Inception branch avgpool 3x3 s1 p1
        for (C, H) in ((192, 35), (768, 17), (1280, 8)):
            out.append(pool("pool_avg3_s1", "fp16", N, C, H, 3, 1, 1, "avg"))
    for N in (1, 64):
        out.append(pool("pool_fp32", "fp32", N, 64, 112, 3, 2, 1, "max"))
        out.append(pool("pool_fp32", "fp32", N, 256, 28, 2, 2, 0, "avg"))
    return out


def reduce_set():
    out = []
    # Global average pool of real network heads: outer = N*C, inner = H*W.
    for N in (1, 8, 32, 128, 256):
        for (C, hw) in ((512, 49), (2048, 49), (1280, 49), (1024, 49), (960, 49),
                        (576, 49), (1792, 64), (2048, 64), (768, 49)):
            out.append({"sweep": "reduce_gap", "op": "reduce", "dtype": "fp16", "outer": N * C, "inner": hw})
    # Squeeze-and-excitation pools inside blocks (large inner).
    for N in (1, 32):
        for (C, hw) in ((96, 3136), (144, 3136), (240, 784), (672, 196)):
            out.append({"sweep": "reduce_se", "op": "reduce", "dtype": "fp16", "outer": N * C, "inner": hw})
    # Outer x inner grid: parallelism vs. per-row length trade-off.
    for o in (1, 16, 256, 4096, 65536, 1 << 20):
        for i in (16, 256, 4096, 65536, 1 << 20):
            if o * i <= 1 << 30:
                out.append({"sweep": "reduce_grid", "op": "reduce", "dtype": "fp16", "outer": o, "inner": i})
    for (o, i) in ((4096, 49), (65536, 4096), (16, 1 << 20)):
        out.append({"sweep": "reduce_fp32", "op": "reduce", "dtype": "fp32", "outer": o, "inner": i})
    return out


def softmax_set():
    out = []
    for o in (1, 32, 1024, 16384, 262144):
        for i in (10, 100, 1000, 1024, 4096, 32000):
            if o * i <= 1 << 30:
                out.append({"sweep": "softmax_grid", "op": "softmax", "dtype": "fp16", "outer": o, "inner": i})
    for (o, i) in ((256, 1000), (16384, 1024), (1024, 32000)):
        out.append({"sweep": "softmax_fp32", "op": "softmax", "dtype": "fp32", "outer": o, "inner": i})
    return out


def copy_set():
    out = []
    for e in decades(3, 9):      # Transpose / Concat: same in and out
        out.append({"sweep": "copy_same", "op": "copy", "dtype": "fp16", "elems_in": e, "elems_out": e})
    for e in (10 ** 5, 10 ** 7, 10 ** 8):
        out.append({"sweep": "copy_slice", "op": "copy", "dtype": "fp16", "elems_in": e, "elems_out": e // 4})
        out.append({"sweep": "copy_upsample", "op": "copy", "dtype": "fp16", "elems_in": e // 4, "elems_out": e})
        out.append({"sweep": "copy_pad", "op": "copy", "dtype": "fp16", "elems_in": e, "elems_out": e * 9 // 8})
    for e in (10 ** 6, 10 ** 8):
        out.append({"sweep": "copy_fp32", "op": "copy", "dtype": "fp32", "elems_in": e, "elems_out": e})
    return out


# ---------------------------------------------------------------- output

def dedup(rows):
    """Drop exact repeats within a sweep (keeps cross-sweep repeats)."""
    seen, out = set(), []
    for r in rows:
        key = json.dumps(r, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def check(rows, name):
    for r in rows:
        assert footprint(r) < MAX_BYTES * 1.0001, (name, r, footprint(r))
        if r["op"] == "conv":
            P, Q = conv_out_hw(r)
            assert P > 0 and Q > 0 and r["C"] % r["groups"] == 0 and r["K"] % r["groups"] == 0, r
            if r["dtype"] == "int8":
                assert r["C"] % 4 == 0 and r["K"] % 4 == 0, r


def write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def grouped_width_set():
    """Grouped 3x3 convs by channels per group (cg): which widths cuDNN runs
    natively in NHWC and what the others cost (RegNet group widths 8..232)."""
    d, out = "fp16", []
    for cg in (4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 96, 112, 120, 128, 168, 232, 256):
        for groups in sorted({max(2, 256 // cg), max(2, 1024 // cg)}):
            C = cg * groups
            for N in (1, 16, 128):
                for (H, s) in ((56, 1), (56, 2), (14, 1)):
                    if C >= 1024 and H == 56:
                        H = 28
                    out.append(conv("grouped_width_r3", d, N, C, H, C, 3, stride=s, groups=groups))
    return out


def build_all():
    files = {"gemm_fp16.jsonl": gemm_fp16(), "conv_fp16.jsonl": conv_fp16(),
             "grouped_fp16.jsonl": grouped_width_set()}
    for dt in ("bf16", "fp32", "tf32", "int8"):
        files["gemm_%s.jsonl" % dt] = gemm_other(dt)
        files["conv_%s.jsonl" % dt] = conv_other(dt)
    files["memory.jsonl"] = memory_set()
    return {k: dedup(v) for k, v in files.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    total = 0
    for name, rows in build_all().items():
        check(rows, name)
        write(os.path.join(args.out, name), rows)
        sweeps = len({r["sweep"] for r in rows})
        print("%-18s %5d lines  %2d sweeps" % (name, len(rows), sweeps))
        total += len(rows)
    print("%-18s %5d lines" % ("total", total))


if __name__ == "__main__":
    main()
