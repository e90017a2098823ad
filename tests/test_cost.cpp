// Tile and wave counts worked on paper, the alignment cliff, loss accounting.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "test_helpers.h"
#include "tilewave/kernel_cost.h"

using namespace tilewave;

namespace tilewave::test {
GpuModel paper_gpu(int sms, int tile_m, int tile_n, int tile_k) {
  nlohmann::json j = {{"name", "paper"},
                      {"arch", "ampere"},
                      {"sms", sms},
                      {"boost_clock_mhz", 1410},
                      {"dram_bandwidth_gbs", 2000},
                      {"tensor_tflops", {{"fp16", 312}}},
                      {"cuda_core_tflops", {{"fp32", 19.5}, {"fp16", 78}}}};
  GpuModel g = gpu_from_json(j, "paper", "paper.json", std::string(TILEWAVE_GPU_DIR) + "/arch");
  TileShape t;
  t.m = tile_m, t.n = tile_n, t.k = tile_k, t.ctas_per_sm = 1;
  g.precisions[DType::fp16].tiles = {t};
  return g;
}
}  // namespace tilewave::test

namespace {
Layer gemm(int64_t m, int64_t n, int64_t k, DType d = DType::fp16) {
  Layer l;
  l.problem = GemmProblem{m, n, k, 1};
  l.dtype = d;
  return l;
}
// A depthwise R x R convolution of N x C x HW x HW, padded to keep its size.
Layer depthwise(int64_t n, int64_t c, int64_t hw, int64_t r) {
  Layer l;
  ConvProblem p;
  p.N = n, p.C = p.K = p.groups = c, p.H = p.W = hw, p.R = p.S = r, p.pad = {r / 2, r / 2};
  l.problem = p;
  return l;
}
}  // namespace

TEST_CASE("1792x1792 GEMM with 256x128 tiles on 108 SMs: 98 tiles, one wave") {
  const GpuModel g = test::paper_gpu(108, 256, 128);
  const KernelCost c = cost_layer(gemm(1792, 1792, 1792), g);
  CHECK(c.tiles == 98);
  CHECK(c.waves == 1);
  CHECK(c.split_k == 1);
  CHECK(c.tile_eff == doctest::Approx(1.0));
  CHECK(c.wave_eff == doctest::Approx(98.0 / 108.0));
}

TEST_CASE("tile quantization: one row more than a tile costs a whole row of tiles") {
  const GpuModel g = test::paper_gpu(108, 128, 128);
  const KernelCost c = cost_layer(gemm(129, 1024, 4096), g);
  CHECK(c.tiles / c.split_k == 2 * 8);
  CHECK(c.tile_eff == doctest::Approx(129.0 / 256.0));
}

TEST_CASE("wave quantization: 109 tiles on 108 SMs take two waves") {
  const GpuModel g = test::paper_gpu(108, 128, 128);
  const KernelCost c = cost_layer(gemm(128 * 109, 128, 8192), g);
  CHECK(c.tiles == 109);
  CHECK(c.waves == 2);
  CHECK(c.wave_eff == doctest::Approx(109.0 / 216.0));
}

TEST_CASE("split-K fills idle SMs when M x N makes few tiles") {
  const GpuModel g = test::paper_gpu(108, 128, 128);
  const KernelCost c = cost_layer(gemm(128, 128, 65536), g);
  CHECK(c.split_k > 1);
  CHECK(c.tiles == c.split_k);
}

TEST_CASE("alignment cliff: a 4095^3 fp16 GEMM is several times slower than 4096^3 on the H200") {
  const GpuModel g = test::gpu("h200");
  const KernelCost fast = cost_layer(gemm(4096, 4096, 4096), g);
  const KernelCost slow = cost_layer(gemm(4095, 4095, 4095), g);
  CHECK(fast.aligned);
  CHECK_FALSE(slow.aligned);
  CHECK(slow.time_us / fast.time_us > 3.0);
  CHECK(fast.bound == Bound::compute);
}

TEST_CASE("utilization and losses add up to the whole kernel time") {
  const GpuModel g = test::gpu("h200");
  for (const Layer& l : {gemm(4096, 4096, 4096), gemm(100, 300, 500), gemm(1, 1000, 1000)}) {
    const KernelCost c = cost_layer(l, g);
    const Losses& x = c.losses;
    CHECK(c.utilization + x.tile + x.wave + x.efficiency + x.memory + x.fixed == doctest::Approx(1.0));
    CHECK(c.utilization > 0);
    CHECK(c.utilization < 1);
    CHECK(c.time_us == doctest::Approx(std::max(c.compute_us, c.memory_us) + c.fixed_us));
  }
}

TEST_CASE("a tiny kernel is latency bound, a big one compute bound, an elementwise one memory bound") {
  const GpuModel g = test::gpu("h200");
  CHECK(cost_layer(gemm(8, 8, 8), g).bound == Bound::latency);
  CHECK(cost_layer(gemm(8192, 8192, 8192), g).bound == Bound::compute);
  Layer add;
  MemoryProblem m;
  m.elems = 1 << 26;
  m.inputs = 2;
  add.problem = m;
  const KernelCost c = cost_layer(add, g);
  CHECK(c.bound == Bound::memory);
  CHECK(c.utilization == 0);
  // 3 x 2^26 fp16 values at the bandwidth the GPU file allows, plus the ramp.
  const double bytes = 3.0 * (1 << 26) * 2, bw = g.dram_bandwidth_gbs * 1e3;
  const double expected_us = bytes / (bw * g.param("eltwise_bw_efficiency")) +
                             std::min(bytes, g.param("ramp_mb") * 1e6) / (bw * g.param("ramp_bw_efficiency"));
  CHECK(c.memory_us == doctest::Approx(expected_us));
}

TEST_CASE("a layout transform streams at its own rate from its first byte: no ramp, whatever its size") {
  const GpuModel g = test::gpu("h200");
  const double bw = g.dram_bandwidth_gbs * 1e3;
  for (int64_t elems : {int64_t(1) << 12, int64_t(1) << 20, int64_t(1) << 26}) {
    Layer transform;
    MemoryProblem m;
    m.op = MemoryOp::transform;
    m.elems_in = m.elems_out = elems;
    transform.problem = m;
    const KernelCost c = cost_layer(transform, g);
    // Read once and written once in fp16; an eltwise kernel of the same bytes pays the ramp on top.
    const double bytes = 2.0 * double(elems) * 2;
    CHECK(c.bytes == int64_t(bytes));
    CHECK(c.ramp_us == 0);
    CHECK(c.memory_us == doctest::Approx(bytes / (bw * g.param("transform_bw_efficiency"))));
    CHECK(c.fixed_us == doctest::Approx(g.param("fixed_us_transform")));
  }
}

TEST_CASE("depthwise convolution takes the direct CUDA-core path") {
  const GpuModel g = test::gpu("h200");
  const KernelCost c = cost_layer(depthwise(32, 144, 56, 3), g);
  CHECK(c.path == CostPath::direct_conv);
  CHECK(c.peak_flops == doctest::Approx(g.cuda_core_peak_flops(DType::fp16)));
}

TEST_CASE("is_depthwise: the cost path and the kernel class follow the one definition") {
  const GpuModel g = test::gpu("h200");
  Layer times2 = depthwise(32, 144, 56, 3);
  std::get<ConvProblem>(times2.problem).K = 288;  // channel multiplier 2: still one input channel per group
  Layer paired = depthwise(32, 144, 56, 3);
  std::get<ConvProblem>(paired.problem).groups = 72;  // two input channels per group
  for (const Layer* l : {&times2, &paired}) {
    const bool dw = is_depthwise(std::get<ConvProblem>(l->problem));
    CHECK(dw == (l == &times2));
    CHECK((kernel_class(*l) == KernelClass::conv_depthwise) == dw);
    if (dw) CHECK(cost_layer(*l, g).path == CostPath::direct_conv);
  }
  CHECK_FALSE(is_depthwise(1, 1));  // a single channel and group is a plain conv
  CHECK(is_depthwise(2, 2));
}

TEST_CASE("a grouped fallback alone carries its layout transforms; as a network's kernel it leaves them to the layout pass") {
  const GpuModel g = test::gpu("h200");
  Layer l = depthwise(16, 432, 14, 3);
  std::get<ConvProblem>(l.problem).groups = 9;  // RegNet's group width 48: no native NHWC kernel
  const KernelCost lone = cost_layer(l, g), kernel = cost_kernel(l, CostModel(g));
  CHECK(lone.kernel == kernel.kernel);
  CHECK(lone.kernel.find("_fallback") != std::string::npos);
  CHECK(lone.time_us > kernel.time_us);
  // A native width (64) launches no transforms: both costs agree.
  std::get<ConvProblem>(l.problem).C = std::get<ConvProblem>(l.problem).K = 576;
  CHECK(cost_layer(l, g).time_us == doctest::Approx(cost_kernel(l, CostModel(g)).time_us));
}

TEST_CASE("bound: a depthwise convolution its CUDA-core loop sets is cuda-core-bound, not compute-bound") {
  const GpuModel g = test::gpu("h200");
  const KernelCost c = cost_layer(depthwise(32, 144, 56, 5), g);
  // Its compute term sets its time, but at ~1% of the tensor-core peak: the
  // bound names the slower unit, not "compute" (docs/model.md "Per-kernel time").
  CHECK(c.compute_us > c.memory_us);
  CHECK(c.compute_us > c.fixed_us);
  CHECK(c.utilization < 0.02);
  CHECK(c.bound == Bound::cuda_core);
  CHECK(std::string(bound_name(c.bound)) == "cuda-core");
}

TEST_CASE("bound: a kernel is compute-bound only when useful work or its main loop takes most of its compute term") {
  const GpuModel g = test::gpu("h200");
  // A big aligned GEMM: useful work is the largest part.
  const KernelCost big = cost_layer(gemm(8192, 8192, 8192), g);
  CHECK(big.bound == Bound::compute);
  CHECK(big.utilization > big.losses.tile + big.losses.wave);
  // One 64x64 output split 16 ways along K on 132 SMs: most SMs idle in its one wave.
  const KernelCost wave = cost_layer(gemm(64, 64, 16384), g);
  CHECK(wave.waves == 1);
  CHECK(wave.losses.wave > wave.utilization + wave.losses.tile);
  CHECK(wave.compute_us > wave.memory_us);
  CHECK(wave.bound == Bound::wave);
  // Pipeline fill and per-wave overhead are fixed costs of the compute term:
  // a tiny GEMM is latency-bound whatever its unit.
  const KernelCost tiny = cost_layer(gemm(16, 16, 64), g);
  CHECK(tiny.compute_fixed_us > 0);
  CHECK(tiny.bound == Bound::latency);
}

TEST_CASE("an RGB stem pads its 3 channels to 4 and reduces over all taps at once") {
  const GpuModel g = test::gpu("h200");
  Layer l;
  ConvProblem p;
  p.N = 16, p.C = 3, p.K = 64, p.H = p.W = 224, p.R = p.S = 7, p.stride = {2, 2}, p.pad = {3, 3};
  l.problem = p;
  const KernelCost c = cost_layer(l, g);
  CHECK(c.path == CostPath::tensor_gemm);
  CHECK_FALSE(c.aligned);
  // K = 4 x 7 x 7 = 196 padded to whole 64-wide steps: at most 147/196 useful.
  CHECK(c.tile_eff <= 147.0 / 196.0 + 1e-9);
  CHECK(c.tile_eff > 0.5);
}

namespace {
// A dense RGB convolution: N x 3 x HW x HW, K filters of R x R at `stride`, from NCHW memory or NHWC.
Layer rgb_conv(int64_t n, int64_t hw, int64_t k, int64_t r, int64_t stride, bool nchw) {
  Layer l;
  ConvProblem p;
  p.N = n, p.C = 3, p.K = k, p.H = p.W = hw, p.R = p.S = r, p.stride = {stride, stride}, p.nchw = nchw;
  l.problem = p;
  return l;
}
}  // namespace

TEST_CASE("narrow_conv: cuDNN's three first-layer shapes, the 3x3 one not from NCHW, every other narrow shape unaligned") {
  auto kind = [](int64_t k, int64_t r, int64_t stride, bool nchw) {
    return narrow_conv(std::get<ConvProblem>(rgb_conv(1, 224, k, r, stride, nchw).problem), 8, nchw);
  };
  CHECK(kind(64, 7, 2, false) == NarrowConv::first_layer);
  CHECK(kind(64, 7, 2, true) == NarrowConv::first_layer);
  CHECK(kind(32, 7, 2, true) == NarrowConv::first_layer);
  CHECK(kind(64, 3, 2, false) == NarrowConv::first_layer);
  CHECK(kind(64, 3, 2, true) == NarrowConv::unaligned);
  CHECK(kind(32, 3, 2, false) == NarrowConv::unaligned);
  CHECK(kind(128, 7, 2, false) == NarrowConv::unaligned);
  CHECK(kind(192, 16, 16, false) == NarrowConv::unaligned);
  CHECK(kind(4, 3, 2, false) == NarrowConv::none);  // fewer filters than a vector: a direct kernel
  ConvProblem wide = std::get<ConvProblem>(rgb_conv(1, 56, 64, 3, 1, false).problem);
  wide.C = 8;
  CHECK(narrow_conv(wide, 8, false) == NarrowConv::none);
  wide.C = 6, wide.groups = 2, wide.K = 64;
  CHECK(narrow_conv(wide, 8, false) == NarrowConv::none);
}

TEST_CASE("narrow-channel implicit GEMM: 128x32 tiles shared by the SMs, each a set-up and 16-deep steps, by its memory's terms; 0 keeps the padded GEMM") {
  GpuModel g = test::paper_gpu(132, 128, 128, 32);
  const Layer patch = rgb_conv(256, 224, 192, 16, 16, false);
  const KernelCost padded = cost_layer(patch, g);
  CHECK(padded.kernel.find("padded") != std::string::npos);
  g.params["narrow_conv_nhwc_tile_us"] = 0.25;
  g.params["narrow_conv_nhwc_step_us"] = 0.5;
  g.params["narrow_conv_nchw_tile_us"] = 0.75;
  g.params["narrow_conv_nchw_step_us"] = 1.0;
  // 256 x 14 x 14 pixels = 392 tiles of 128, 192 filters = 6 of 32, 3 x 16 x 16 = 768 = 48 steps of 16.
  const double tiles = 392.0 * 6;
  const KernelCost nhwc = cost_layer(patch, g);
  CHECK(nhwc.kernel == "conv_unaligned_nhwc_fp16_128x32x16");
  CHECK(nhwc.compute_us == doctest::Approx(tiles / 132 * (0.25 + 48 * 0.5)));
  CHECK(nhwc.tile_eff == doctest::Approx(1.0));
  const KernelCost nchw = cost_layer(rgb_conv(256, 224, 192, 16, 16, true), g);
  CHECK(nchw.kernel == "conv_unaligned_nchw_fp16_128x32x16");
  CHECK(nchw.compute_us == doctest::Approx(tiles / 132 * (0.75 + 48 * 1.0)));
  CHECK(nchw.path == CostPath::cuda_gemm);
  // Unpadded 3x3/2 over 224: 64 x 111 x 111 = 788,544 pixels in 6,161 tiles of 128; 24 filters in one
  // tile of 32; 3 x 3 x 3 = 27 values in 2 steps of 16.
  const KernelCost stem = cost_layer(rgb_conv(64, 224, 24, 3, 2, false), g);
  CHECK(stem.tile_eff == doctest::Approx(788544.0 * 24 * 27 / (6161.0 * 128 * 32 * 2 * 16)));
  CHECK(stem.compute_us == doctest::Approx(6161.0 / 132 * (0.25 + 2 * 0.5)));
  // A first-layer shape keeps the padded GEMM, and so does fp32.
  CHECK(cost_layer(rgb_conv(64, 224, 64, 7, 2, false), g).kernel.find("padded") != std::string::npos);
  Layer fp32 = patch;
  fp32.dtype = DType::fp32;
  CHECK(cost_layer(fp32, g).kernel.find("unaligned_nhwc") == std::string::npos);
}

TEST_CASE("precisions: int8 is faster than fp16 is faster than fp32 on a big GEMM") {
  const GpuModel g = test::gpu("a100");
  const double t8 = cost_layer(gemm(8192, 8192, 8192, DType::int8), g).time_us;
  const double t16 = cost_layer(gemm(8192, 8192, 8192, DType::fp16), g).time_us;
  const double t32 = cost_layer(gemm(8192, 8192, 8192, DType::fp32), g).time_us;
  CHECK(t8 < t16);
  CHECK(t16 < t32);
  CHECK(cost_layer(gemm(8192, 8192, 8192, DType::fp32), g).path == CostPath::cuda_gemm);
}

namespace {
Layer attention(int64_t bh, int64_t q, int64_t kv, int64_t d, bool masked = false, DType dtype = DType::fp16) {
  Layer l;
  AttentionProblem a;
  a.batch_heads = bh, a.q_len = q, a.kv_len = kv, a.head_dim = a.v_head_dim = d, a.masked = masked;
  l.problem = a;
  l.dtype = dtype;
  return l;
}
// A 132-SM GPU with the fused-attention tile terms set to round numbers.
GpuModel attention_gpu() {
  GpuModel g = test::paper_gpu(132, 128, 128, 32);
  g.params["attention_floor_us"] = 2.0;
  g.params["attention_cta_us"] = 1.0;
  g.params["attention_block_us"] = 1.0;
  g.params["attention_wide_cta_us"] = 1.5;
  g.params["attention_wide_block_us"] = 2.0;
  g.params["attention_mask_block_us"] = 1.5;
  g.params["attention_mask_odd_block_us"] = 5.0;
  return g;
}
}  // namespace

TEST_CASE("fused attention by its tiles: CTAs of 128 queries over SMs, key blocks of 128, a mask by row parity") {
  const GpuModel g = attention_gpu();
  // 768 (batch, head) pairs x ceil(197/128) = 1,536 CTAs: 1536/132 = 11.64 per SM, each with 2 key blocks.
  const double per_sm = 1536.0 / 132;
  CHECK(cost_layer(attention(768, 197, 197, 64), g).compute_us == doctest::Approx(per_sm * (1.0 + 2 * 1.0)));
  CHECK(cost_layer(attention(768, 197, 197, 64), g).fixed_us == doctest::Approx(2.0));
  CHECK(cost_layer(attention(768, 197, 197, 80), g).compute_us == doctest::Approx(per_sm * (1.5 + 2 * 2.0)));
  // An odd mask row (197 keys) costs the odd term per block, an even one (196) the even term.
  CHECK(cost_layer(attention(768, 197, 197, 64, true), g).compute_us == doctest::Approx(per_sm * (1.0 + 2 * 6.0)));
  CHECK(cost_layer(attention(768, 196, 196, 64, true), g).compute_us == doctest::Approx(per_sm * (1.0 + 2 * 2.5)));
  // Fewer CTAs than SMs still take one CTA's time.
  CHECK(cost_layer(attention(4, 49, 49, 32), g).compute_us == doctest::Approx(1.0 + 1.0));
}

TEST_CASE("fused attention: without the tile terms, and in fp32, the GEMM view prices it") {
  const GpuModel with_terms = attention_gpu();
  const GpuModel without = test::paper_gpu(132, 128, 128, 32);
  const KernelCost gemm_view = cost_layer(attention(768, 197, 197, 64), without);
  CHECK(gemm_view.time_us != doctest::Approx(cost_layer(attention(768, 197, 197, 64), with_terms).time_us));
  CHECK(gemm_view.time_us == doctest::Approx(cost_layer(attention(768, 197, 197, 64, true), without).time_us));
  CHECK(cost_layer(attention(768, 197, 197, 64, false, DType::fp32), with_terms).time_us ==
        doctest::Approx(cost_layer(attention(768, 197, 197, 64, false, DType::fp32), without).time_us));
}

TEST_CASE("a GEMM's N that misses the alignment by a partial vector runs at partial_vector_efficiency, an odd one slower") {
  // docs/model.md "GEMM-like kernels".
  GpuModel g = test::gpu("h200");
  g.params["partial_vector_efficiency"] = 0.4;
  g.params["misaligned_n_efficiency"] = 0.1;
  auto at = [&](int64_t n) {
    Layer l;
    l.dtype = DType::fp16;
    l.problem = GemmProblem{2048, n, 2048, 1};
    return cost_layer(l, g).mainloop_eff;
  };
  CHECK(at(196) == doctest::Approx(at(200) * 0.4));
  CHECK(at(195) < at(196) * 0.5);  // an odd N: the odd factor (the tile chosen may differ)
}

TEST_CASE("a batched half-precision GEMM with an odd N loads element by element and does not split K") {
  // docs/model.md "GEMM-like kernels": cuBLAS's align1 kernels.
  GpuModel g = test::gpu("h200");
  auto cost = [&](int64_t n, int64_t k, int64_t batch) {
    Layer l;
    l.dtype = DType::fp16;
    l.problem = GemmProblem{64, n, k, batch};
    return cost_layer(l, g);
  };
  const KernelCost odd = cost(49, 2048, 16);
  CHECK(odd.kernel.find("align1") != std::string::npos);
  CHECK(odd.split_k == 1);
  CHECK(odd.mainloop_eff > 0.5);  // no odd factor: the loads, not the MMAs, set the pace
  // Twice the load rate nearly halves a long reduction's time; an aligned N does not care.
  const double before = odd.time_us, aligned_before = cost(56, 2048, 16).time_us;
  g.params["elementwise_loads_per_clock"] = 2 * g.param("elementwise_loads_per_clock");
  CHECK(cost(49, 2048, 16).time_us < 0.6 * before);
  CHECK(cost(56, 2048, 16).time_us == doctest::Approx(aligned_before));
  // Unbatched: the split-K kernels at the odd factor, as before.
  CHECK(cost(49, 2048, 1).kernel.find("align1") == std::string::npos);
}

TEST_CASE("a half-precision pointwise conv on NCHW costs as one GEMM per image over its positions") {
  // docs/model.md "Pointwise convolutions on NCHW".
  const GpuModel g = test::gpu("h200");
  for (int64_t side : {7, 14, 56}) {
    Layer conv;
    conv.dtype = DType::fp16;
    ConvProblem p;
    p.N = 64, p.C = 256, p.K = 512, p.H = p.W = side;
    p.nchw = true;
    conv.problem = p;
    Layer per_image;
    per_image.dtype = DType::fp16;
    per_image.problem = GemmProblem{512, side * side, 256, 64};
    CAPTURE(side);
    // The same tiles at the same rate (their bytes differ: the conv reads its filter once, not per image).
    const KernelCost as_conv = cost_layer(conv, g), as_gemm = cost_layer(per_image, g);
    CHECK(as_conv.tiles == as_gemm.tiles);
    CHECK(as_conv.tile_eff == doctest::Approx(as_gemm.tile_eff));
    CHECK(as_conv.mainloop_eff == doctest::Approx(as_gemm.mainloop_eff));
    // On NHWC the batch's positions fill the tiles instead.
    std::get<ConvProblem>(conv.problem).nchw = false;
    if (side == 7) CHECK(cost_layer(conv, g).time_us < as_conv.time_us);
  }
}
