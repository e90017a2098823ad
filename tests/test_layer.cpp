// Conv output shapes, FLOPs and bytes per op family, computed by hand.
#include <doctest/doctest.h>

#include "tilewave/layer.h"

using namespace tilewave;

TEST_CASE("conv output size follows the ONNX formula") {
  ConvProblem p;
  p.H = 224, p.W = 224, p.R = 7, p.S = 7, p.stride = {2, 2}, p.pad = {3, 3};
  CHECK(p.P() == 112);
  CHECK(p.Q() == 112);
  p.H = p.W = 56, p.R = p.S = 3, p.stride = {1, 1}, p.pad = {2, 2}, p.dilation = {2, 2};
  CHECK(p.P() == 56);  // dilated 3x3 covers 5x5
  p.H = p.W = 14, p.R = p.S = 1, p.stride = {2, 2}, p.pad = {0, 0}, p.dilation = {1, 1};
  CHECK(p.P() == 7);
}

TEST_CASE("transposed conv output size inverts the forward one") {
  ConvProblem p;
  p.transposed = true;
  p.H = p.W = 7, p.R = p.S = 4, p.stride = {2, 2}, p.pad = {1, 1};
  CHECK(p.P() == 14);
}

TEST_CASE("FLOPs: 2 x MACs for conv and gemm, none for memory-bound kernels") {
  Layer conv;
  ConvProblem c;
  c.N = 1, c.C = 64, c.H = c.W = 56, c.K = 64, c.R = c.S = 3, c.pad = {1, 1};
  conv.problem = c;
  CHECK(useful_flops(conv) == 2LL * 56 * 56 * 64 * 64 * 9);

  ConvProblem dw = c;
  dw.groups = 64;
  conv.problem = dw;
  CHECK(useful_flops(conv) == 2LL * 56 * 56 * 64 * 9);

  Layer gemm;
  gemm.problem = GemmProblem{128, 256, 512, 4};
  CHECK(useful_flops(gemm) == 2LL * 128 * 256 * 512 * 4);

  Layer relu;
  MemoryProblem m;
  m.elems = 1000;
  relu.problem = m;
  CHECK(useful_flops(relu) == 0);
}

TEST_CASE("bytes: operands read once, outputs written once, in the layer's dtype") {
  Layer gemm;
  gemm.problem = GemmProblem{64, 32, 16, 1};
  gemm.dtype = DType::fp16;
  CHECK(min_bytes(gemm) == 2 * (64 * 16 + 16 * 32 + 64 * 32));
  gemm.dtype = DType::fp32;
  CHECK(min_bytes(gemm) == 4 * (64 * 16 + 16 * 32 + 64 * 32));

  Layer add;
  MemoryProblem m;
  m.op = MemoryOp::eltwise;
  m.elems = 100;
  m.inputs = 2;
  add.problem = m;
  add.dtype = DType::fp16;
  CHECK(min_bytes(add) == 2 * 300);

  Layer gap;
  MemoryProblem r;
  r.op = MemoryOp::reduce;
  r.outer = 16 * 2048;
  r.inner = 49;
  gap.problem = r;
  gap.dtype = DType::fp16;
  CHECK(min_bytes(gap) == 2 * (16 * 2048 * 49 + 16 * 2048));

  // A 1x1 stride-2 conv reads only the pixels it samples.
  Layer down;
  ConvProblem c;
  c.N = 1, c.C = 256, c.H = c.W = 56, c.K = 512, c.stride = {2, 2};
  down.problem = c;
  down.dtype = DType::fp16;
  CHECK(min_bytes(down) == 2 * (28 * 28 * 256 + 28 * 28 * 512 + 512 * 256));
}

TEST_CASE("dtype names round-trip") {
  for (auto d : {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::int8})
    CHECK(parse_dtype(dtype_name(d)) == d);
  CHECK_FALSE(parse_dtype("fp64").has_value());
}
