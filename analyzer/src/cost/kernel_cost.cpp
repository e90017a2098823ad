// Implements docs/model.md; section names in comments refer to it.
#include "tilewave/kernel_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "tilewave/passes.h"

namespace tilewave {

LossCauseNames loss_cause_names(LossCause cause) {
  switch (cause) {
    case LossCause::tile: return {"tile", "tile quantization"};
    case LossCause::wave: return {"wave", "wave quantization"};
    case LossCause::efficiency: return {"efficiency", "main-loop efficiency"};
    case LossCause::memory: return {"memory", "memory bound"};
    case LossCause::fixed: return {"fixed", "fixed per-kernel cost"};
    case LossCause::idle: return {"idle", "GPU idle between kernels"};
  }
  return {"?", "?"};
}

double loss_share(const Losses& l, LossCause cause) {
  switch (cause) {
    case LossCause::tile: return l.tile;
    case LossCause::wave: return l.wave;
    case LossCause::efficiency: return l.efficiency;
    case LossCause::memory: return l.memory;
    case LossCause::fixed: return l.fixed;
    case LossCause::idle: return l.idle;
  }
  return 0;
}

std::optional<LossCause> main_loss(const Losses& l) {
  // max_element keeps the first of equal shares.
  const auto* best = std::max_element(std::begin(kLossCauses), std::end(kLossCauses), [&](LossCause x, LossCause y) {
    return loss_share(l, x) < loss_share(l, y);
  });
  if (!(loss_share(l, *best) > 0)) return std::nullopt;
  return *best;
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    case Bound::latency: return "latency";
    case Bound::tile: return "tile";
    case Bound::wave: return "wave";
    case Bound::cuda_core: return "cuda-core";
  }
  return "?";
}

const char* path_name(CostPath p) {
  switch (p) {
    case CostPath::tensor_gemm: return "tensor_gemm";
    case CostPath::cuda_gemm: return "cuda_gemm";
    case CostPath::direct_conv: return "direct_conv";
    case CostPath::memory: return "memory";
  }
  return "?";
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
double bandwidth_bytes_per_us(const CostModel& m) { return m.gpu.dram_bandwidth_gbs * 1e3; }

// docs/model.md "Memory time": streaming at the class's share of DRAM
// bandwidth, plus the ramp every kernel pays before its traffic reaches that
// rate (too few bytes in flight, write-back of the previous kernel's lines).
// Bytes found in L2 (a network's producer-consumer reuse, docs/model.md
// "Inside a network") move at the L2 rate instead.
// cuDNN's layout transforms pay no ramp: inside networks they run at one
// rate from a megabyte up (docs/model.md "Memory time").
bool pays_ramp(MemoryOp op) { return op != MemoryOp::transform; }
double ramp_time_us(double bytes, double l2_hit_bytes, const CostModel& m) {
  const double dram = bytes - std::clamp(l2_hit_bytes, 0.0, bytes);
  const double ramp_bytes = std::min(dram, m.get<param_index("ramp_mb")>() * 1e6);
  return ramp_bytes / (bandwidth_bytes_per_us(m) * m.get<param_index("ramp_bw_efficiency")>());
}
double memory_time_us(double bytes, double l2_hit_bytes, double class_efficiency, const CostModel& m,
                      bool ramps = true) {
  const double bw = bandwidth_bytes_per_us(m);
  const double hits = std::clamp(l2_hit_bytes, 0.0, bytes);
  const double dram = bytes - hits;
  return dram / (bw * class_efficiency) + (ramps ? ramp_time_us(bytes, hits, m) : 0.0) +
         hits / (bw * m.get<param_index("l2_bw_factor")>());
}

// An implicit GEMM: `batch` independent M x N x (taps*K) products. A
// convolution's reduction runs over `taps` = R*S filter positions, each over
// K = C/groups channels in chunks of the tile's k, so each tap pads its
// channels to the chunk (docs/model.md "GEMM-like kernels").
struct GemmView {
  int64_t M, N, K, batch;
  int64_t useful_macs;
  int64_t bytes;         // operand traffic before split-K partials
  bool aligned;
  double path_factor;    // conv efficiencies for convolutions, alignment factor for GEMMs
  bool padded = false;   // channels padded up to the alignment (convolutions)
  int64_t taps = 1;      // filter positions (R*S) of a convolution; 1 for a GEMM
  bool gather_taps = false;  // grouped: narrow groups pack several taps into one k-step
  // An odd dimension: the kernel loads its operands element by element and
  // does not split K (cuBLAS's align1 kernels); path_factor is then 1.
  bool elementwise_loads = false;
};

// docs/model.md "Per-kernel time": what limits a kernel. Its fixed costs
// (fixed_us, and of a compute term that sets its time the part that does not
// scale with the work) against the rest; then memory, or the largest part of
// the compute term's work: useful work (compute), tile or wave quantization,
// or the rest, a main loop below peak (compute) or a unit slower than the
// headline peak's (cuda_core). Ties go to the earlier.
Bound kernel_bound(const KernelCost& c, double headline_peak_flops) {
  if (c.memory_us > c.compute_us) return c.fixed_us >= c.memory_us ? Bound::latency : Bound::memory;
  const double work_us = c.compute_us - c.compute_fixed_us;
  if (c.fixed_us + c.compute_fixed_us >= work_us) return Bound::latency;
  const double t = c.time_us, useful_us = c.utilization * t, tile_us = c.losses.tile * t, wave_us = c.losses.wave * t;
  const bool slower_unit = c.peak_flops > 0 && c.peak_flops < headline_peak_flops;
  const std::pair<double, Bound> parts[] = {{useful_us, Bound::compute},
                                            {tile_us, Bound::tile},
                                            {wave_us, Bound::wave},
                                            {work_us - useful_us - tile_us - wave_us,
                                             slower_unit ? Bound::cuda_core : Bound::compute}};
  return std::max_element(std::begin(parts), std::end(parts),
                          [](const auto& x, const auto& y) { return x.first < y.first; })
      ->second;
}

// Finishes a cost: time from its terms, the bound, utilization and the loss
// chain of docs/model.md "Utilization and losses". The after_* times are ideal times on the
// kernel's own unit after each quantization step.
void finish(KernelCost& c, const CostModel& m, DType dtype, double after_tile_us, double after_wave_us) {
  const double busy = std::max(c.compute_us, c.memory_us);
  c.time_us = busy + c.fixed_us;
  c.bound = Bound::latency;  // a kernel of no time
  c.intensity = c.bytes > 0 ? double(c.flops) / double(c.bytes) : 0.0;
  const double t = c.time_us;
  if (t <= 0) return;
  c.utilization = double(c.flops) / (t * 1e-6 * m.gpu.peak_flops(dtype));
  const double ideal_unit_us = c.peak_flops > 0 ? double(c.flops) / c.peak_flops * 1e6 : 0.0;
  c.losses.tile = std::max(0.0, after_tile_us - ideal_unit_us) / t;
  c.losses.wave = std::max(0.0, after_wave_us - after_tile_us) / t;
  c.losses.memory = std::max(0.0, c.memory_us - c.compute_us) / t;
  c.losses.fixed = c.fixed_us / t;
  // What is left: main loop below its unit's peak, and (CUDA-core kernels)
  // the gap between that unit and the tensor cores.
  c.losses.efficiency = std::max(0.0, 1.0 - c.utilization - c.losses.tile - c.losses.wave -
                                          c.losses.memory - c.losses.fixed);
  c.bound = kernel_bound(c, m.gpu.peak_flops(dtype));
}

// cuBLAS's align1 kernels, whatever the GPU: CUTLASS's sm75 tensor-op
// kernels at these tiles (their names in the H200's pointwise sweep,
// calibrate/data/h200/pointwise_paths).
const std::vector<TileShape> kElementwiseTiles = {{32, 32, 64, 8}, {64, 64, 32, 4}, {128, 128, 32, 2}};

// docs/model.md "GEMM-like kernels": every candidate tile and split-K factor
// is costed and the fastest kept, as library heuristics and autotuners do.
KernelCost cost_gemm(const GemmView& g, DType dtype, const CostModel& m, double hits) {
  const GpuModel& gpu = m.gpu;
  const PrecisionSpec& prec = gpu.precision(dtype);
  const double peak_flops = prec.peak_tflops * 1e12;
  const double sm_macs_per_us = peak_flops / 2 / gpu.sms * 1e-6;
  const double eff_top = m.get<param_index("tc_efficiency")>() * g.path_factor;
  const double reuse_exp = m.get<param_index("tile_reuse_exponent")>();
  double best_reuse = 0;
  for (const auto& t : prec.tiles) best_reuse = std::max(best_reuse, double(t.m) * t.n / (t.m + t.n));
  const int max_split = g.elementwise_loads ? 1 : std::max(1, int(m.get<param_index("max_split_k")>()));
  const double sm_elements_per_us = m.get<param_index("elementwise_loads_per_clock")>() * gpu.boost_clock_mhz;
  const double bw_eff = m.get<param_index("gemm_bw_efficiency")>();
  const double wave_overhead = m.get<param_index("wave_overhead_us")>();
  const double fill_steps = m.get<param_index("pipeline_fill_steps")>();
  const double tap_steps = m.get<param_index("tap_overhead_steps")>();
  const int64_t partial_bytes_per_elem = 4;  // split-K partial sums are fp32/int32

  KernelCost best;
  best.time_us = std::numeric_limits<double>::infinity();
  for (const TileShape& tile : g.elementwise_loads ? kElementwiseTiles : prec.tiles) {
    const int64_t mn_tiles = ceil_div(g.M, tile.m) * ceil_div(g.N, tile.n) * g.batch;
    const int64_t concurrent = int64_t(gpu.sms) * tile.ctas_per_sm;
    const double reuse = double(tile.m) * tile.n / (tile.m + tile.n);
    const double mainloop_eff = eff_top * std::pow(reuse / best_reuse, reuse_exp);
    const int64_t tiles_for_sharing = mn_tiles;
    for (int split = 1; split <= max_split; split *= 2) {
      // Split K only to fill idle SMs, and never below a few K-steps per split.
      // Grouped kernels pack the taps of a group narrower than a k-step into
      // shared steps instead of padding each tap to a whole step.
      const int64_t k_steps = g.gather_taps && g.K < tile.k ? ceil_div(g.taps * g.K, tile.k)
                                                             : g.taps * ceil_div(g.K, tile.k);
      if (split > 1 && (mn_tiles * (split / 2) >= concurrent || k_steps / split < 4)) break;
      const int64_t k_per_split = ceil_div(k_steps, split) * tile.k;
      const int64_t tiles = mn_tiles * split;
      const int64_t waves = ceil_div(tiles, concurrent);
      const double executed_macs = double(tiles) * tile.m * tile.n * k_per_split;
      // A CTA fills its load pipeline before the first MMA and drains its
      // accumulators after the last: a few k-steps' worth of time it pays
      // however short its own K loop is.
      const double step_us = double(tile.m) * tile.n * tile.k / (sm_macs_per_us / tile.ctas_per_sm * mainloop_eff);
      // Element-by-element loads bound the main loop by the tile's operand
      // elements, (m + n) * k per step, not by its MMAs; the pipeline fill
      // still takes MMA steps.
      // An SM's loads are shared by the CTAs it holds, fewer than
      // ctas_per_sm when the tiles do not fill the GPU.
      const int64_t sharing = std::min<int64_t>(tile.ctas_per_sm, ceil_div(tiles_for_sharing, gpu.sms));
      const double loop_step_us =
          g.elementwise_loads
              ? std::max(step_us, double(tile.m + tile.n) * tile.k * double(sharing) / sm_elements_per_us)
              : step_us;
      // Moving to the next filter tap costs a convolution extra address and
      // predicate set-up, which small channel counts cannot hide.
      // Later waves overlap this set-up with the main loop of the CTAs still
      // running (warp-specialised, persistent kernels), so only the first
      // wave pays it in full.
      const double taps_per_cta = g.taps > 1 ? double(g.taps) / split : 0.0;
      const double mainloop_us = loop_step_us * double(k_per_split / tile.k);
      const double setup_us = step_us * (fill_steps + taps_per_cta * tap_steps);
      KernelCost c;
      c.path = prec.unit == Unit::tensor ? CostPath::tensor_gemm : CostPath::cuda_gemm;
      c.tile = tile;
      c.split_k = split;
      c.tiles = tiles;
      c.waves = waves;
      c.tile_eff = double(g.useful_macs) / executed_macs;
      c.wave_eff = double(tiles) / double(waves * concurrent);
      c.mainloop_eff = mainloop_eff;
      c.aligned = g.aligned;
      c.flops = 2 * g.useful_macs;
      c.peak_flops = peak_flops;
      const int64_t partials = split > 1 ? 2 * int64_t(split) * g.M * g.N * g.batch * partial_bytes_per_elem : 0;
      c.bytes = g.bytes + partials;
      c.compute_us = waves * (mainloop_us + wave_overhead) + setup_us;
      // Per-wave overhead and pipeline fill do not grow with the work; the taps' set-up does, with the taps.
      c.compute_fixed_us = waves * wave_overhead + step_us * fill_steps;
      c.memory_us = memory_time_us(double(c.bytes), hits, bw_eff, m);
      c.ramp_us = ramp_time_us(double(c.bytes), hits, m);
      // Partial sums are reduced in log2(split) rounds (a tree or serial
      // fix-up per pair of splits), each a global-memory round trip.
      c.fixed_us = m.get<param_index("fixed_us_gemm")>() + std::log2(double(split)) * m.get<param_index("split_k_overhead_us")>();
      const double ideal_us = double(c.flops) / peak_flops * 1e6;
      const double after_tile = ideal_us / c.tile_eff;
      finish(c, m, dtype, after_tile, after_tile / c.wave_eff);
      if (c.time_us < best.time_us) best = c;
    }
  }
  // The name is the configuration (CUTLASS style), so model and measurement can join on it.
  best.kernel = fmt::format("{}_{}_{}_{}{}", path_name(best.path), dtype_name(dtype), best.tile.name(),
                            g.padded ? "padded" : g.elementwise_loads ? "align1" : (g.aligned ? "align" : "unaligned"),
                            best.split_k > 1 ? fmt::format("_splitk{}", best.split_k) : "");
  return best;
}

bool dims_aligned(int64_t a, int64_t b, int align) { return a % align == 0 && b % align == 0; }

// docs/model.md "GEMM-like kernels": a GEMM's main-loop factor from the
// alignment of its row-major operands' rows, K and N. A dimension that misses
// the alignment but is a multiple of 2 elements still loads narrower vectors
// (the libraries' align2/align4 kernels); an odd one loads element by element.

double gemm_alignment_factor(int64_t k, int64_t n, int align, const CostModel& m) {
  const int64_t missed = k % align ? k : (n % align ? n : 0);
  if (missed == 0) return 1.0;
  if (missed % 2 == 0) return m.get<param_index("partial_vector_efficiency")>();
  return k % align ? m.get<param_index("misaligned_efficiency")>() : m.get<param_index("misaligned_n_efficiency")>();
}

// docs/model.md "GEMM-like kernels": a batched half-precision GEMM whose
// misaligned K (else N) is odd runs cuBLAS's align1 kernels, which load
// element by element and do not split K; an unbatched one gets split-K
// kernels at the odd factor (the H200 layer sweep's cuBLASLt choices).
bool elementwise_gemm(int64_t k, int64_t n, int64_t batch, DType dtype, int align) {
  const int64_t missed = k % align ? k : (n % align ? n : 0);
  return (dtype == DType::fp16 || dtype == DType::bf16) && batch > 1 && missed % 2 == 1;
}

GemmView gemm_view(int64_t M, int64_t N, int64_t K, int64_t batch, int64_t useful_macs, int64_t bytes, DType dtype,
                   int align, const CostModel& m) {
  GemmView g{M, N, K, batch, useful_macs, bytes, dims_aligned(K, N, align), gemm_alignment_factor(K, N, align, m)};
  g.elementwise_loads = elementwise_gemm(K, N, batch, dtype, align);
  if (g.elementwise_loads) g.path_factor = 1.0;
  return g;
}

KernelCost cost_direct_conv(const ConvProblem& p, int64_t bytes, DType dtype, const CostModel& m, double hits) {
  KernelCost c;
  c.path = CostPath::direct_conv;
  c.flops = 2 * p.macs();
  c.bytes = bytes;
  c.peak_flops = m.gpu.cuda_core_peak_flops(dtype);
  c.compute_us = double(c.flops) / (c.peak_flops * m.get<param_index("direct_conv_efficiency")>()) * 1e6;
  c.memory_us = memory_time_us(double(bytes), hits, m.get<param_index("direct_bw_efficiency")>(), m);
  c.ramp_us = ramp_time_us(double(bytes), hits, m);
  c.fixed_us = m.get<param_index("fixed_us_direct")>();
  const double ideal_us = double(c.flops) / c.peak_flops * 1e6;
  finish(c, m, dtype, ideal_us, ideal_us);
  c.kernel = fmt::format("direct_conv_{}_{}x{}", dtype_name(dtype), p.R, p.S);
  return c;
}

// docs/model.md "Attention": the fused kernel by its own tiles. A CTA owns
// kAttentionQueryTile queries of one (batch, head) and walks the keys in
// blocks of kAttentionKeyTile; the SMs run the CTAs back to back.
constexpr int64_t kAttentionQueryTile = 128, kAttentionKeyTile = 128;

KernelCost cost_fused_attention(const AttentionProblem& a, int64_t bytes, DType dtype, const CostModel& m,
                                double hits) {
  KernelCost c;
  c.path = CostPath::tensor_gemm;
  c.flops = 2 * a.macs();
  c.bytes = bytes;
  c.peak_flops = m.gpu.precision(dtype).peak_tflops * 1e12;
  const bool wide = std::max(a.head_dim, a.v_head_dim) > 64;
  const double cta_us = wide ? m.get<param_index("attention_wide_cta_us")>() : m.get<param_index("attention_cta_us")>();
  double block_us = wide ? m.get<param_index("attention_wide_block_us")>() : m.get<param_index("attention_block_us")>();
  if (a.masked)
    block_us += a.kv_len % 2 ? m.get<param_index("attention_mask_odd_block_us")>()
                             : m.get<param_index("attention_mask_block_us")>();
  const int64_t key_blocks = ceil_div(a.kv_len, kAttentionKeyTile);
  c.tiles = a.batch_heads * ceil_div(a.q_len, kAttentionQueryTile);
  c.waves = ceil_div(c.tiles, m.gpu.sms);
  c.compute_us = std::max(1.0, double(c.tiles) / m.gpu.sms) * (cta_us + double(key_blocks) * block_us);
  c.memory_us = memory_time_us(double(bytes), hits, m.get<param_index("gemm_bw_efficiency")>(), m);
  c.ramp_us = ramp_time_us(double(bytes), hits, m);
  c.fixed_us = m.get<param_index("attention_floor_us")>();
  // The tile loss: the queries and keys the last tiles pad.
  const double ideal_us = double(c.flops) / c.peak_flops * 1e6;
  const double padded_us = ideal_us * double(round_up(a.q_len, kAttentionQueryTile)) / double(a.q_len) *
                           double(key_blocks * kAttentionKeyTile) / double(a.kv_len);
  finish(c, m, dtype, padded_us, padded_us);
  c.kernel = fmt::format("attention_fused_{}_{}{}", dtype_name(dtype), wide ? "wide" : "narrow",
                         a.masked ? "_masked" : "");
  return c;
}

// docs/model.md "Grouped convolutions": cuDNN's NHWC grouped kernels take
// power-of-two group widths; other widths (RegNet's 24, 48, 56, 120 ...) run
// per-group or CUDA-core engines in NCHW. `transform_us`: the layout
// transforms a lone call runs around it (cost_layer), else 0.
KernelCost grouped_fallback_cost(KernelCost c, DType dtype, const CostModel& m, double transform_us) {
  const double t_old = c.time_us;
  const double ideal_us = c.peak_flops > 0 ? double(c.flops) / c.peak_flops * 1e6 : 0.0;
  const double after_tile = ideal_us + c.losses.tile * t_old, after_wave = after_tile + c.losses.wave * t_old;
  c.compute_fixed_us /= m.get<param_index("grouped_fallback_efficiency")>();
  c.compute_us = c.compute_us / m.get<param_index("grouped_fallback_efficiency")>() + transform_us;
  finish(c, m, dtype, after_tile, after_wave);
  c.kernel += "_fallback";
  return c;
}

// The transforms a lone call on channels_last tensors runs around a kernel
// that needs NCHW (the layout pass's rule, conv_kernel_layout): input and
// output there and back, at transform_bw_efficiency.
double lone_transform_us(const ConvProblem& p, DType dtype, int align, const CostModel& m) {
  if (conv_kernel_layout(p, dtype, align, Layout::nhwc) == Layout::nhwc) return 0;
  const double tensor_bytes = double(p.N * (p.C * p.H * p.W + p.K * p.P() * p.Q()) * dtype_bytes(dtype));
  return memory_time_us(2 * tensor_bytes, 0, m.get<param_index("transform_bw_efficiency")>(), m,
                        pays_ramp(MemoryOp::transform));
}

// docs/model.md "Narrow-channel convolutions": cuDNN's implicit GEMM over
// channels too few for vector loads walks fixed 128x32x16 tiles, each step
// gathering its operands element by element; the SMs share the tiles.
KernelCost cost_unaligned_conv(const ConvProblem& p, int64_t bytes, DType dtype, const CostModel& m, double hits,
                               double tile_us, double step_us) {
  const TileShape tile{128, 32, 16, 1};
  const int64_t pixels = p.N * p.P() * p.Q();
  const int64_t k_steps = ceil_div(p.C * p.R * p.S, tile.k);
  KernelCost c;
  c.path = p.nchw ? CostPath::cuda_gemm : CostPath::tensor_gemm;
  c.tile = tile;
  c.tiles = ceil_div(pixels, tile.m) * ceil_div(p.K, tile.n);
  c.waves = ceil_div(c.tiles, m.gpu.sms);
  c.split_k = 1;
  c.aligned = false;
  c.flops = 2 * p.macs();
  c.peak_flops = m.gpu.peak_flops(p.nchw ? DType::fp32 : dtype);
  c.bytes = bytes;
  c.tile_eff = double(p.macs()) / (double(c.tiles) * tile.m * tile.n * double(k_steps) * tile.k);
  c.wave_eff = 1.0;  // steps, not whole tiles, are shared out: no wave tail
  c.mainloop_eff = 1.0;
  c.compute_us = double(c.tiles) / m.gpu.sms * (tile_us + double(k_steps) * step_us);
  c.memory_us = memory_time_us(double(bytes), hits, m.get<param_index("gemm_bw_efficiency")>(), m);
  c.ramp_us = ramp_time_us(double(bytes), hits, m);
  c.fixed_us = m.get<param_index("fixed_us_gemm")>();
  const double ideal_us = c.peak_flops > 0 ? double(c.flops) / c.peak_flops * 1e6 : 0.0;
  finish(c, m, dtype, ideal_us / c.tile_eff, ideal_us / c.tile_eff);
  c.kernel = fmt::format("conv_unaligned_{}_{}_{}", p.nchw ? "nchw" : "nhwc", dtype_name(dtype), tile.name());
  return c;
}

KernelCost cost_conv(const ConvProblem& p, int64_t bytes, DType dtype, const CostModel& m, double hits, bool lone) {
  const int64_t cg = p.C / p.groups, kg = p.K / p.groups;
  const int align = m.gpu.precision(dtype).align;
  if ((dtype == DType::fp16 || dtype == DType::bf16) && narrow_conv(p, align, p.nchw) == NarrowConv::unaligned) {
    const double tile_us = p.nchw ? m.get<param_index("narrow_conv_nchw_tile_us")>()
                                  : m.get<param_index("narrow_conv_nhwc_tile_us")>();
    const double step_us = p.nchw ? m.get<param_index("narrow_conv_nchw_step_us")>()
                                  : m.get<param_index("narrow_conv_nhwc_step_us")>();
    if (tile_us > 0 || step_us > 0) return cost_unaligned_conv(p, bytes, dtype, m, hits, tile_us, step_us);
  }
  if (p.nchw && is_dense_half_pointwise(p, dtype)) {
    // Left on NCHW by the layout pass: one GEMM per image, [K x C] by
    // [C x HW], as cuBLAS runs it; an image's positions, not the batch's,
    // fill a tile, and HW is the GEMM's N (docs/model.md "Pointwise
    // convolutions on NCHW").
    const int64_t hw = p.P() * p.Q();
    KernelCost gemm = cost_gemm(gemm_view(p.K, hw, p.C, p.N, p.macs(), bytes, dtype, align, m), dtype, m, hits);
    gemm.kernel = "conv_nchw_" + gemm.kernel;
    return gemm;
  }
  const bool aligned = dims_aligned(cg, kg, align);
  // Implicit GEMM (docs/model.md "GEMM-like kernels"): misaligned
  // channels are padded up to the alignment, which shows up as tile loss.
  const int64_t pixels = p.transposed ? p.N * p.H * p.W : p.N * p.P() * p.Q();
  // Channels below one vector (RGB stems) are gathered across taps into one
  // flat reduction, padded to 4, as first-layer kernels do; wider channel
  // counts are padded to the alignment and reduced tap by tap.
  const bool narrow = cg < align;
  const int64_t cg_pad = narrow ? round_up(cg, 4) : (aligned ? cg : round_up(cg, align));
  const int64_t kg_pad = kg % align == 0 ? kg : round_up(kg, align);
  const bool strided = p.stride[0] > 1 || p.stride[1] > 1;
  const double conv_factor = m.get<param_index("conv_efficiency")>() * (aligned ? 1.0 : m.get<param_index("conv_misaligned_efficiency")>()) *
                             (strided ? m.get<param_index("conv_strided_efficiency")>() : 1.0);
  const int64_t taps = narrow ? 1 : p.R * p.S;
  GemmView g{pixels, kg_pad, narrow ? cg_pad * p.R * p.S : cg_pad, p.groups, p.macs(), bytes, true, conv_factor,
             !aligned, taps, p.groups > 1};
  const bool depthwise_like = cg < align || kg < align;
  if (is_depthwise(p)) return cost_direct_conv(p, bytes, dtype, m, hits);
  KernelCost gemm = cost_gemm(g, dtype, m, hits);
  gemm.aligned = aligned;
  if (grouped_fallback(p, align))
    return grouped_fallback_cost(gemm, dtype, m, lone ? lone_transform_us(p, dtype, align, m) : 0.0);
  if (p.groups > 1 && depthwise_like) {
    KernelCost direct = cost_direct_conv(p, bytes, dtype, m, hits);
    if (direct.time_us < gemm.time_us) return direct;
  }
  gemm.kernel = "conv_" + gemm.kernel;
  return gemm;
}

KernelCost cost_memory(const MemoryProblem& p, int64_t bytes, DType dtype, const CostModel& m, double hits) {
  KernelCost c;
  c.path = CostPath::memory;
  c.bytes = bytes;
  c.peak_flops = m.gpu.peak_flops(dtype);
  c.memory_us = memory_time_us(double(bytes), hits, m.memory_bw_efficiency[int(p.op)], m, pays_ramp(p.op));
  // docs/model.md "Memory-bound kernels": a kernel limited by its own
  // per-element work (the BatchNorm pass) gains nothing from L2 beyond it.
  c.ramp_us = pays_ramp(p.op) ? ramp_time_us(double(bytes), hits, m) : 0.0;
  c.memory_us = std::max(c.memory_us,
                         double(bytes) / (bandwidth_bytes_per_us(m) * m.memory_max_bw_efficiency[int(p.op)]));
  if (p.op == MemoryOp::row_norm && p.row_moments) {
    // docs/model.md "Memory-bound kernels": a block per row walks its row
    // alone; rows run in waves of the resident blocks.
    const double resident = std::max(1.0, std::floor(m.gpu.sms * m.get<param_index("row_blocks_per_sm")>()));
    c.tiles = p.outer;
    c.waves = int64_t(std::ceil(double(p.outer) / resident));
    const double hit = bytes > 0 ? std::min(1.0, hits / double(bytes)) : 0.0;
    const double element_ns = (1 - hit) * m.get<param_index("row_block_element_ns")>() +
                              hit * m.get<param_index("row_block_l2_element_ns")>();
    const double block_us = m.get<param_index("row_block_us")>() + double(p.inner) * element_ns * 1e-3;
    c.memory_us = std::max(c.memory_us, double(c.waves) * block_us);
  } else if (p.op == MemoryOp::row_norm && p.warp_rows && p.inner <= kWarpRowsMaxValues) {
    // docs/model.md "Memory-bound kernels": PyTorch's short-row softmax holds
    // each row in registers, a power of two of values over up to 32 threads,
    // two rows a thread group up to 128 values, and reduces each row by
    // shuffles (a max, then a sum); bound by its warps' issue where its bytes
    // are few, and by one warp's chain where its rows are. Sets that do not
    // fit the warp terms charge row_ns, as for any row.
    int64_t padded = 1, steps = 0;
    while (padded < p.inner) padded *= 2;
    const int64_t threads_per_row = std::min<int64_t>(padded, 32);
    while ((int64_t(1) << steps) < threads_per_row) ++steps;
    const int64_t rows_per_group = padded <= 128 ? 2 : 1;
    const int64_t rows_per_warp = rows_per_group * (32 / threads_per_row);
    c.warps = p.outer / rows_per_warp + (p.outer % rows_per_warp != 0);  // no overflow near INT64_MAX rows
    c.values_per_thread = rows_per_group * (padded / threads_per_row);
    c.shuffles_per_warp = 2 * rows_per_group * steps;
    const double value_ns = m.get<param_index("softmax_warp_value_ns")>();
    const double shuffle_ns = m.get<param_index("softmax_warp_shuffle_ns")>();
    const double chain_ns = m.get<param_index("softmax_warp_chain_ns")>();
    if (value_ns > 0 || shuffle_ns > 0 || chain_ns > 0)
      c.memory_us = std::max({c.memory_us,
                              double(c.warps) * (double(c.values_per_thread) * value_ns +
                                                 double(c.shuffles_per_warp) * shuffle_ns) * 1e-3,
                              double(c.values_per_thread) * chain_ns * 1e-3});
    else
      c.memory_us += double(p.outer) * m.get<param_index("row_ns")>() * 1e-3;
  } else if (p.op == MemoryOp::row_norm && p.kept_inside == 1) {
    // docs/model.md "Memory-bound kernels": LayerNorm's row costs more over
    // 4-byte values (an fp32 residual stream under autocast).
    const double factor = p.layer_norm && dtype_bytes(dtype) >= 4 ? m.get<param_index("layer_norm_fp32_row_factor")>() : 1.0;
    c.memory_us += double(p.outer) * m.get<param_index("row_ns")>() * factor * 1e-3;
  }
  if (p.op == MemoryOp::copy && p.resample_planes > 0) {
    // docs/model.md "Memory-bound kernels": each thread walks every plane of
    // its output position in turn; positions beyond the resident threads
    // (row_blocks_per_sm blocks of 512) wait for a second wave.
    const double resident = std::max(1.0, std::floor(m.gpu.sms * m.get<param_index("row_blocks_per_sm")>() * 512));
    const int64_t positions = std::max<int64_t>(1, p.elems_out / p.resample_planes);
    const double waves = std::ceil(double(positions) / resident);
    const double hit = bytes > 0 ? std::min(1.0, hits / double(bytes)) : 0.0;
    const double plane_ns = (1 - hit) * m.get<param_index("resample_plane_ns")>() +
                            hit * m.get<param_index("resample_plane_l2_ns")>();
    c.memory_us = std::max(c.memory_us, waves * double(p.resample_planes) * plane_ns * 1e-3);
  }
  if (p.op == MemoryOp::copy && p.resample_kernel != ResampleKernel::none) {
    // docs/model.md "Memory-bound kernels": each output value's source index
    // (divisions by the output's sides, and by its channels in channels-last
    // memory) costs the SMs more than its bytes cost the memory.
    // Each kernel's parameter, by ResampleKernel (none has no kernel of its own).
    static constexpr std::array<size_t, 4> value_ps_of = {
        kGpuParamCount, param_index("resample_nearest_value_ps"), param_index("resample_nearest_nhwc_value_ps"),
        param_index("resample_linear_nhwc_value_ps")};
    static_assert(size_t(ResampleKernel::linear_nhwc) + 1 == value_ps_of.size());
    const double value_ps = m.values[value_ps_of[size_t(p.resample_kernel)]];
    c.memory_us = std::max(c.memory_us, double(p.elems_out) * value_ps * 1e-6);
  }
  if (p.op == MemoryOp::norm) c.memory_us += double(p.outer) * m.get<param_index("norm_plane_ns")>() * 1e-3;
  if (p.op == MemoryOp::reduce && p.kept_inside == 1)
    c.memory_us += double(p.outer) * m.get<param_index("reduce_row_ns")>() * 1e-3;
  c.fixed_us = m.memory_fixed_us[int(p.op)];
  if (p.op == MemoryOp::eltwise && p.strided) {
    // docs/model.md "Memory-bound kernels": a broadcast operand keeps
    // PyTorch's kernel off its vectorised path; each element's offsets and
    // single-element loads add their time to the traffic's.
    c.memory_us += double(p.elems) * m.get<param_index("strided_element_ps")>() * 1e-6;
    c.fixed_us += m.get<param_index("fixed_us_strided_extra")>();
  } else if (p.op == MemoryOp::eltwise && p.unrolled) {
    // Operands of two types: each element cast as it is loaded, no vector loads.
    c.memory_us += double(p.elems) * m.get<param_index("unrolled_element_ps")>() * 1e-6;
    c.fixed_us += m.get<param_index("fixed_us_unrolled_extra")>();
  }
  if (p.op == MemoryOp::eltwise && p.special_functions > 0) {
    // docs/model.md "Memory-bound kernels": the SMs' arithmetic, not the
    // memory, bounds a kernel of special functions over fast memory.
    c.memory_us = std::max(c.memory_us, double(p.elems) * double(p.special_functions) *
                                            m.get<param_index("special_function_ps")>() * 1e-6);
  }
  finish(c, m, dtype, 0, 0);
  c.kernel = fmt::format("{}_{}", memory_op_name(p.op), dtype_name(dtype));
  return c;
}

}  // namespace

namespace {
thread_local int64_t cost_models_built = 0;  // CostModel::built_on_this_thread()
}  // namespace

int64_t CostModel::built_on_this_thread() { return cost_models_built; }

CostModel::CostModel(const GpuModel& g) : gpu(g) {
  ++cost_models_built;
  for (size_t i = 0; i < kGpuParamCount; ++i) values[i] = g.param(kGpuParams[i].name);
  const double fixed_us_memory = get<param_index("fixed_us_memory")>();
  for (MemoryOp op : {MemoryOp::eltwise, MemoryOp::pool, MemoryOp::reduce, MemoryOp::row_norm, MemoryOp::copy,
                     MemoryOp::fused, MemoryOp::transform, MemoryOp::norm}) {
    memory_bw_efficiency[int(op)] = g.param(std::string(memory_op_name(op)) + "_bw_efficiency");
    memory_max_bw_efficiency[int(op)] = std::numeric_limits<double>::infinity();
    memory_fixed_us[int(op)] = fixed_us_memory;
  }
  memory_max_bw_efficiency[int(MemoryOp::norm)] = g.param("norm_max_bw_efficiency");
  // Frameworks' own pooling kernels and cuDNN's layout transforms have fixed
  // costs of their own; PyTorch's BatchNorm pass and reduce_kernel pay more
  // than an elementwise kernel (docs/model.md "Memory-bound kernels").
  memory_fixed_us[int(MemoryOp::pool)] = g.param("fixed_us_pool");
  memory_fixed_us[int(MemoryOp::transform)] = g.param("fixed_us_transform");
  memory_fixed_us[int(MemoryOp::norm)] = fixed_us_memory + g.param("fixed_us_norm_extra");
  memory_fixed_us[int(MemoryOp::reduce)] = fixed_us_memory + g.param("fixed_us_reduce_extra");
}

KernelCost cost_layer(const Layer& layer, const GpuModel& gpu) { return cost_layer(layer, CostModel(gpu)); }

namespace {

KernelCost cost_problem(const Layer& layer, const CostModel& m, double l2_hit_bytes, bool lone) {
  const int64_t bytes = min_bytes(layer);
  if (auto* c = std::get_if<ConvProblem>(&layer.problem))
    return cost_conv(*c, bytes, layer.dtype, m, l2_hit_bytes, lone);
  if (auto* g = std::get_if<GemmProblem>(&layer.problem)) {
    const int align = m.gpu.precision(layer.dtype).align;
    // Row-major A (MxK) and B (KxN): rows of both must be aligned vectors.
    // K and N misalignment are separate parameters: the libraries fall back
    // to different kernels for each (docs/model.md "GEMM-like kernels").
    return cost_gemm(gemm_view(g->M, g->N, g->K, g->batch, g->macs(), bytes, layer.dtype, align, m), layer.dtype, m,
                     l2_hit_bytes);
  }
  if (auto* a = std::get_if<AttentionProblem>(&layer.problem)) {
    // Measured in half precision only; elsewhere, and where the GPU file has
    // no tile terms, the GEMM view below.
    if ((layer.dtype == DType::fp16 || layer.dtype == DType::bf16) && m.get<param_index("attention_block_us")>() > 0)
      return cost_fused_attention(*a, bytes, layer.dtype, m, l2_hit_bytes);
    // A flash-attention CTA owns a block of queries and the whole value
    // width, and streams every key block through two MMAs (QK^T, then PV):
    // as a GEMM, M = queries, N = value width, K = keys x (d + d_v) / d_v
    // (docs/model.md "Attention").
    const int align = m.gpu.precision(layer.dtype).align;
    const int64_t k = (a->kv_len * (a->head_dim + a->v_head_dim) + a->v_head_dim - 1) / a->v_head_dim;
    const bool aligned = dims_aligned(a->head_dim, a->v_head_dim, align);
    KernelCost c = cost_gemm({a->q_len, a->v_head_dim, k, a->batch_heads, a->macs(), bytes, aligned,
                              aligned ? 1.0 : m.get<param_index("misaligned_efficiency")>()},
                             layer.dtype, m, l2_hit_bytes);
    c.kernel = "attention_" + c.kernel;
    return c;
  }
  return cost_memory(std::get<MemoryProblem>(layer.problem), bytes, layer.dtype, m, l2_hit_bytes);
}

}  // namespace

namespace {

KernelCost with_bandwidth(KernelCost c, const CostModel& m, double l2_hit_bytes) {
  c.l2_hit_bytes = int64_t(l2_hit_bytes);
  c.bandwidth_utilization = bandwidth_utilization(double(dram_bytes(c)), double(c.l2_hit_bytes), c.time_us,
                                                  m.gpu.dram_bandwidth_gbs, m.gpu.dram_bandwidth_gbs * m.get<param_index("l2_bw_factor")>());
  return c;
}

}  // namespace

KernelCost cost_kernel(const Layer& layer, const CostModel& m, double l2_hit_bytes) {
  return with_bandwidth(cost_problem(layer, m, l2_hit_bytes, false), m, l2_hit_bytes);
}

KernelCost cost_layer(const Layer& layer, const CostModel& m, double l2_hit_bytes) {
  return with_bandwidth(cost_problem(layer, m, l2_hit_bytes, true), m, l2_hit_bytes);
}

int64_t dram_bytes(const KernelCost& c) { return std::max<int64_t>(0, c.bytes - c.l2_hit_bytes); }

double bandwidth_utilization(double dram_bytes, double l2_hit_bytes, double time_us, double dram_gbs, double l2_gbs) {
  if (!(time_us > 0)) return 0;
  const double dram = dram_gbs > 0 ? dram_bytes / (time_us * dram_gbs * 1e3) : 0;
  const double l2 = l2_gbs > 0 ? l2_hit_bytes / (time_us * l2_gbs * 1e3) : 0;
  return std::max(dram, l2);
}


}  // namespace tilewave
