#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/: per harness, valid seeds plus one file per class
of bad input (empty, random bytes, bit-flipped, truncated, cut mid-record),
from a fixed random seed, so that the files are reproducible. The fuzz_replay
tests run every harness over these on every build (docs/robustness.md).

usage: python3 tests/fuzz/make_corpus.py --tilewave build/analyzer/tilewave
"""
import argparse
import gzip
import json
import pathlib
import random
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fuzz" / "corpus"


def bad_variants(rng, name, data, out_dir):
    """The classes of bad input, from one valid file's bytes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "empty").write_bytes(b"")
    for size in (1, 64, 4096):
        (out_dir / f"random_{size}").write_bytes(bytes(rng.getrandbits(8) for _ in range(size)))
    for k in range(4):
        flipped = bytearray(data)
        for _ in range(1 + k * 3):
            i = rng.randrange(len(flipped))
            flipped[i] ^= 1 << rng.randrange(8)
        (out_dir / f"{name}_bitflip_{k}").write_bytes(bytes(flipped))
    for frac in (0.1, 0.5, 0.9):
        (out_dir / f"{name}_truncated_{int(frac * 100)}").write_bytes(data[: int(len(data) * frac)])
    # The same bytes twice: a valid prefix with trailing garbage.
    (out_dir / f"{name}_doubled").write_bytes(data + data[: len(data) // 3])


def layer_set_seeds(tilewave):
    """Valid lines of every op, from real models, plus hand-written edge lines."""
    lines = []
    for model, runtime in (("tests/data/tiny_cnn.onnx", "eager"), ("onnx_models/mobilenet_v2.onnx", "inductor"),
                           ("onnx_models/corpus/legacy/hf_bert_L4_H256_eager.onnx", "eager")):
        out = subprocess.run([tilewave, "layers", "--extract", str(ROOT / model), "--runtime", runtime, "--batch", "2"],
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            j = json.loads(line)
            j["model"] = pathlib.Path(model).stem  # no paths of this machine in committed files
            lines.append(json.dumps(j, separators=(",", ":")))
    lines += [
        '{"header":true,"gpu":"NVIDIA H200"}',
        '{"op":"pool","N":1,"C":64,"H":112,"W":112,"R":3,"S":3,"stride":[2,2],"pad":[1,1],"mode":"max"}',
        '{"op":"conv_transpose","N":1,"C":64,"H":28,"W":28,"K":32,"R":4,"S":4,"stride":[2,2],"pad":[1,1]}',
        '{"op":"gemm","M":4096,"N":2560,"K":4096,"dtype":"int8"}',
        '{"op":"attention","batch_heads":96,"q_len":197,"kv_len":197,"head_dim":64}',
        '{"op":"copy","elems_in":100,"elems_out":200}',
        '{"op":"eltwise","elems":4096,"inputs":1,"strided":true}',
        '{"op":"transform","elems_in":1000,"elems_out":1000}',
        '# a comment',
        '',
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tilewave", required=True)
    args = ap.parse_args()
    rng = random.Random(9)

    seeds = layer_set_seeds(args.tilewave)
    d = OUT / "layer_set"
    d.mkdir(parents=True, exist_ok=True)
    (d / "seed_models.jsonl").write_text(seeds)
    bad_variants(rng, "layers", seeds.encode()[:3000], d)
    # Cut mid-record, wrong types, out-of-range and overflowing fields: one
    # file each, since a layer set stops at its first bad line.
    for i, line in enumerate([
        '{"op":"conv","N":1,"C":3,"H":224,"W":224,"K":64,"R":7,"S":7,"stride":[2,2],"pad":[3,',
        '{"op":"gemm","M":"1","N":2,"K":3}',
        '{"op":"gemm","M":9223372036854775807,"N":9223372036854775807,"K":2}',
        '{"op":"eltwise","elems":1,"inputs":1,"extra_bytes":-5}',
        '{"op":"conv","N":1,"C":0,"H":1,"W":1,"K":1,"R":1,"S":1}',
        '{"header":1}',
        '[' * 100 + ']' * 100,
    ]):
        (d / f"edge_{i}.jsonl").write_text(line + "\n")

    d = OUT / "gpu"
    h200 = (ROOT / "gpu_models" / "h200.json").read_bytes()
    bad_variants(rng, "h200", h200, d)
    j = json.loads(h200)
    edge = {
        "wrong_types": dict(j, name=5, sms="132"),
        "zero_efficiency": dict(j, eltwise_bw_efficiency=0),
        "arch_path": dict(j, arch="../arch/hopper"),
        "runtime_params_list": dict(j, runtime_params=[1, 2]),
    }
    for name, obj in edge.items():
        (d / f"{name}.json").write_text(json.dumps(obj))
    (d / "deep_nesting.json").write_text('{"a":' * 10000 + "1" + "}" * 10000)
    # Files may be gzip-compressed (json_input.h): whole, and cut short.
    packed = gzip.compress(h200, mtime=0)
    (d / "h200.json.gz").write_bytes(packed)
    (d / "h200_cut.json.gz").write_bytes(packed[: len(packed) // 2])

    d = OUT / "onnx"
    tiny = (ROOT / "tests" / "data" / "tiny_cnn.onnx").read_bytes()
    bad_variants(rng, "tiny_cnn", tiny, d)
    # Transformers are seeds (tests/fuzz/CMakeLists.txt), not copied here:
    # the working tree travels to the GPU machine under a size limit.

    d = OUT / "space"
    bad_variants(rng, "mobilenetv2", (ROOT / "onnx_models" / "spaces" / "mobilenetv2.json").read_bytes(), d)
    edge = {
        # 8x8 input and four stride-2 stages: candidates shrink below 1x1.
        "shrinks": {"family": "resnet", "input": [3, 8, 8], "stages": [
            {"depth": [1], "width": [8], "bottleneck": [0], "stride": [2]}] * 4},
        "unknown_family": {"family": "vit", "stages": [{}]},
        "fractional_depth": {"family": "regnet", "stages": [{"depth": [2.5], "w0": [24], "wa": [8], "wm": [2],
                                                             "group_width": [8], "bottleneck": [1], "se": [0]}]},
        "huge_width": {"family": "mbconv", "stages": [{"depth": [16], "width": [4096], "expansion": [16],
                                                       "kernel": [9], "se": [1], "stride": [1]}]},
    }
    for name, obj in edge.items():
        (d / f"{name}.json").write_text(json.dumps(obj))

    d = OUT / "trace"
    trace_seeds(d)
    bad_variants(rng, "steps", (d / "steps.json").read_bytes(), d)


def trace_seeds(d):
    """Kineto's shapes for `check --trace`: two profiler steps, launches tied
    by correlation, ops with Input Dims tied by External id, flow and metadata
    events, older category names, gzip; and edge cases."""
    d.mkdir(parents=True, exist_ok=True)
    names = ["void convolve_common_engine_float_NHWC<__half>", "sm90_xmma_fprop_implicit_gemm_f16f16",
             "void at::native::vectorized_elementwise_kernel<4>", "void at::native::max_pool_forward_nhwc<c10::Half>",
             "void at::native::reduce_kernel<512, 1>", "sm80_xmma_gemm_f16f16_f16f32"]
    events = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}}]
    corr, cpu, gpu = 1, 0.0, 1000.0
    for step in (1, 2):
        start = cpu
        for k, name in enumerate(names):
            events.append({"ph": "X", "cat": "cpu_op", "name": "aten::op", "ts": cpu, "dur": 3,
                           "args": {"External id": corr, "Input Dims": [[1, 8, 16, 16], [8, 8, 3, 3], []]}})
            events.append({"ph": "X", "cat": "Runtime" if step == 1 else "cuda_runtime", "name": "cudaLaunchKernel",
                           "ts": cpu + 1, "dur": 2, "args": {"correlation": corr, "External id": corr}})
            events.append({"ph": "s", "id": corr, "cat": "ac2g", "ts": cpu + 1})
            events.append({"ph": "X", "cat": "Kernel" if step == 1 else "kernel", "name": name, "ts": gpu,
                           "dur": 2.0 + k, "args": {"correlation": corr, "External id": corr, "device": 0}})
            corr, cpu, gpu = corr + 1, cpu + 4, gpu + 3.0 + k
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": start,
                       "dur": cpu - start})
        cpu += 50
    text = json.dumps({"schemaVersion": 1, "traceEvents": events})
    (d / "steps.json").write_text(text)
    (d / "steps.json.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
    edge = {
        "bare_list": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 1}],
        "no_kernels": {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}]},
        "huge_duration": {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 1e308},
                                          {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e308}]},
        "steps_without_correlation": {"traceEvents": [
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 5},
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "ts": 10, "dur": 5},
            {"ph": "X", "cat": "kernel", "name": "k", "ts": 12, "dur": 1}]},
        "nested_dims": {"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "ts": 0, "dur": 1,
             "args": {"External id": 1, "Input Dims": [[[1, 2], [3, -4]], "x", 5.5]}},
            {"ph": "X", "cat": "kernel", "name": "cat", "ts": 0, "dur": 1, "args": {"External id": 1}}]},
    }
    for name, obj in edge.items():
        (d / f"{name}.json").write_text(json.dumps(obj))


if __name__ == "__main__":
    main()
