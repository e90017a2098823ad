// The per-kernel cost model (docs/model.md). Pure functions of a Layer and a
// GpuModel; they return typed results and never print.
#pragma once
#include <array>
#include <optional>
#include <cstdint>
#include <string>

#include "tilewave/gpu_model.h"
#include "tilewave/gpu_params.h"
#include "tilewave/layer.h"

namespace tilewave {

// What limits a kernel (docs/model.md "Per-kernel time"): fixed costs
// (latency), memory traffic, or the work of its compute term, and then what
// takes most of that work: useful work or a main loop below peak (compute),
// padded work in partial tiles (tile), SMs idle in the last wave (wave), or a
// unit slower than the headline peak's (cuda_core: depthwise and direct
// convolutions on CUDA cores).
enum class Bound { compute, memory, latency, tile, wave, cuda_core };
constexpr int kBoundCount = 6;
const char* bound_name(Bound b);  // "compute", "memory", "latency", "tile", "wave", "cuda-core"

enum class CostPath { tensor_gemm, cuda_gemm, direct_conv, memory };
const char* path_name(CostPath p);

// Where the time above the ideal (useful FLOPs at peak) goes, as fractions
// of the kernel's predicted time; utilization + all losses = 1.
struct Losses {
  double tile = 0;        // padded work in partial tiles (and padded channels)
  double wave = 0;        // SMs idle in the last, partial wave
  double efficiency = 0;  // main loop below peak: tile shape, alignment, pipeline fill
  double memory = 0;      // waiting on DRAM beyond the compute time
  double fixed = 0;       // fixed per-kernel cost (launch, prologue)
  // Networks only: the GPU idle between kernels (launch gaps, waiting on the
  // host), docs/model.md "Schedule".
  double idle = 0;
};

// What a loss share is called, the one spelling every view uses: `key` in
// machine-read outputs (JSON's loss fields, CSV's loss_ columns, nas's
// main_loss column, annotate's keys), `label` in prose (the table's "why"
// and "time lost to", the report's bars, the comparison's findings).
enum class LossCause { tile, wave, efficiency, memory, fixed, idle };
struct LossCauseNames {
  const char* key;
  const char* label;
};
LossCauseNames loss_cause_names(LossCause cause);
// Every cause, in the enum's order (the order views list them in).
inline constexpr LossCause kLossCauses[] = {LossCause::tile,   LossCause::wave,  LossCause::efficiency,
                                            LossCause::memory, LossCause::fixed, LossCause::idle};
// The share of `losses` lost to `cause`.
double loss_share(const Losses& losses, LossCause cause);
// The largest share, the reason a kernel or a network is slow (ties: the
// earlier cause in the enum's order); nullopt when every share is 0.
std::optional<LossCause> main_loss(const Losses& losses);

struct KernelCost {
  CostPath path = CostPath::memory;
  std::string kernel;      // name built from the chosen config
  int64_t flops = 0;       // useful FLOPs
  int64_t bytes = 0;       // bytes moved (model's estimate)
  int64_t l2_hit_bytes = 0;  // of those, inputs found in L2 (networks only)
  double intensity = 0;    // flops / bytes
  double peak_flops = 0;   // peak of the unit the kernel runs on
  // GEMM-like paths only:
  TileShape tile;
  int split_k = 1;
  int64_t tiles = 0;
  int64_t waves = 0;
  double tile_eff = 1;
  double wave_eff = 1;
  double mainloop_eff = 1;
  bool aligned = true;
  // A short-row softmax (MemoryProblem::warp_rows): its 32-thread warps, the
  // values each thread holds and each warp's shuffle steps (docs/model.md
  // "Memory-bound kernels").
  int64_t warps = 0;
  int64_t values_per_thread = 0;
  int64_t shuffles_per_warp = 0;
  // Time terms in microseconds.
  double compute_us = 0, memory_us = 0, fixed_us = 0, time_us = 0;
  // Of compute_us, the part that does not scale with the work: per-wave
  // overhead and pipeline fill of GEMM-like kernels, not their taps' set-up
  // (docs/model.md "Per-kernel time").
  double compute_fixed_us = 0;
  // The ramp term of memory time, before traffic reaches its rate (docs/model.md "Memory time"): part of
  // memory_us unless a memory-bound kernel's own per-element rate bounds it instead.
  double ramp_us = 0;
  Bound bound = Bound::latency;
  double utilization = 0;  // flops / (time * peak of the GPU's headline unit for the dtype)
  // What a memory-bound kernel uses of the GPU, where `utilization` reads ~0:
  // the busier memory level's share of its rate (docs/model.md "Bandwidth
  // utilization").
  double bandwidth_utilization = 0;
  Losses losses;
};

// A GPU's model parameters looked up once, for costing many kernels: the
// GPU file keeps them by name, the cost functions read these fields. Holds a
// reference to the GpuModel, which must outlive it.
struct CostModel {
  explicit CostModel(const GpuModel& gpu);
  // How many this thread has built: tests hold one analysis to one
  // (docs/model.md "Pipeline", stage 7).
  static int64_t built_on_this_thread();
  const GpuModel& gpu;
  // Every parameter of kGpuParams (gpu_params.h), by its index there: the
  // code reads one as get<param_index("tc_efficiency")>(), so a new
  // parameter needs no field here (docs/model.md "Parameters").
  std::array<double, kGpuParamCount> values;
  template <size_t I>
  double get() const {
    static_assert(I < kGpuParamCount, "a parameter of kGpuParams");
    return values[I];
  }
  double memory_bw_efficiency[kMemoryOpCount];      // by MemoryOp: <class>_bw_efficiency
  double memory_max_bw_efficiency[kMemoryOpCount];  // by MemoryOp: a rate its kernels never beat, L2 or not
  double memory_fixed_us[kMemoryOpCount];           // by MemoryOp: fixed_us_memory, or the class's own
};

// The busier of DRAM (bytes from DRAM / (time x DRAM bandwidth)) and L2 (L2
// hits / (time x the L2 rate)), as Nsight Compute's "Memory Throughput" takes
// the busiest unit; 0 without time (docs/model.md "Bandwidth utilization").
double bandwidth_utilization(double dram_bytes, double l2_hit_bytes, double time_us, double dram_gbs, double l2_gbs);
// The bytes a kernel moves to or from DRAM: its bytes less its L2 hits (a
// hit count may include operand re-reads the byte count leaves out).
int64_t dram_bytes(const KernelCost& c);

// One kernel of a lowered network, whose layout transforms the layout pass
// made kernels of their own. `l2_hit_bytes`: bytes it finds in or leaves in L2.
KernelCost cost_kernel(const Layer& layer, const CostModel& model, double l2_hit_bytes = 0);
// A layer on its own, as calibration measures it (buffers rotated beyond
// L2): one library call on channels_last tensors, with the layout transforms
// the call runs around a kernel that needs NCHW (docs/model.md "Grouped
// convolutions"); otherwise cost_kernel. `l2_hit_bytes`: what it finds in
// L2 where it was timed without rotating buffers (a layer set's field).
KernelCost cost_layer(const Layer& layer, const CostModel& model, double l2_hit_bytes = 0);
KernelCost cost_layer(const Layer& layer, const GpuModel& gpu);

}  // namespace tilewave
