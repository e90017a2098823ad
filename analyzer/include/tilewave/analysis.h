// Stages 7-9 and the result: cost every kernel on a GPU, schedule the step, aggregate. The typed result all
// views (table, JSON, CSV) read.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilewave/gpu_model.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/lowering.h"
#include "tilewave/schedule.h"

namespace tilewave {

struct KernelResult {
  Kernel kernel;
  std::optional<KernelCost> cost;  // absent for unmodelled kernels
  // The group --by op puts it in: its head op, "Conv (depthwise)" and
  // "Conv (grouped)" apart from dense convolutions.
  std::string op_group;
  bool grouped_conv = false;  // a depthwise or grouped convolution
};

struct Totals {
  int64_t flops = 0;
  int64_t bytes = 0;
  double time_us = 0;          // the step as a user times it (docs/model.md "Schedule")
  // time_us on the fastest and the slowest machines of the host's kind that
  // calibration measured (docs/model.md "Schedule"); time_us under graph replay.
  double time_low_us = 0, time_high_us = 0;
  double gpu_busy_us = 0;      // the kernels' device time alone
  double host_busy_us = 0;     // the host's issue time (a plain loop)
  bool host_bound = false;     // the host, not the GPU, sets the step
  // What bounds the step: "host", or the bound of the kernels with the most
  // device time (NetworkTotals::bound(), docs/model.md "Schedule").
  std::string bound;
  double utilization = 0;      // useful FLOPs / (step time x peak)
  double gpu_busy_utilization = 0;  // useful FLOPs / (GPU busy time x peak)
  int64_t dram_bytes = 0;             // bytes less those found in L2
  int64_t l2_hit_bytes = 0;
  double bandwidth_utilization = 0;   // over the step (docs/model.md "Bandwidth utilization")
  double throughput_per_s = 0;  // samples (batch items) per second
  int kernels = 0;
  // Time-weighted loss breakdown of the whole network, fractions of time.
  Losses losses;
};

// Kernels grouped by what they run (the head op, as `ops` names it) or by
// what bounds them: counts, time, FLOPs, utilization and share of the time.
struct KernelGroup {
  std::string name;
  int kernels = 0;
  double time_us = 0;
  int64_t flops = 0;
  int64_t dram_bytes = 0, l2_hit_bytes = 0;
  double utilization = 0;  // the group's FLOPs / (its time x peak)
  double bandwidth_utilization = 0;  // over its time (docs/model.md "Bandwidth utilization")
  // Two shares, never one unnamed (docs/report.md "Shares"): of the step time (Totals::time_us),
  // and of the kernels' device time (Totals::gpu_busy_us), which a host-bound step does not fill.
  double step_share = 0;
  double gpu_busy_share = 0;
};

// What became of one ONNX node: it heads kernels of its own, is fused into
// a kernel another node heads, launches nothing (shape arithmetic, folded
// constants), or sits in an unmodelled kernel. `kernels` indexes
// Analysis::kernels.
// What became of an ONNX node (docs/model.md "Node facts"): it heads a
// kernel, is fused into another node's kernel, launches nothing (shape
// arithmetic, constants the runtime folds), or lands in an unmodelled kernel.
enum class Fate { kernel, fused, free, unmodelled };
const char* fate_name(Fate f);  // "kernel", "fused", "free", "unmodelled"

struct NodeFate {
  std::string name, op;
  Fate fate = Fate::free;
  std::vector<int> kernels;
  // Facts of the node itself (docs/model.md "Node facts"), as onnx-tool
  // reports them: weights are its initializer inputs, stored as the
  // execution configuration stores them (fp32 under autocast); activations
  // are its other inputs and its outputs, at the activation precision.
  int64_t params = 0;
  int64_t weight_bytes = 0;
  int64_t activation_read_bytes = 0, activation_write_bytes = 0;
  double time_us = 0;  // its kernels' device time (the kernels it heads)
  double step_share = 0, gpu_busy_share = 0;  // as KernelGroup's
  // Over the kernels it heads: utilization and losses weighted by their time;
  // the longest of them (Analysis::kernels index, -1: none costed) gives its bound and main loss.
  double utilization = 0;
  Losses losses;
  int longest_kernel = -1;
};

// Memory of the whole network for the batch: every weight once, and the
// most activation bytes alive at once when nodes run in graph order (each
// tensor from its producer to its last reader; graph inputs and outputs
// included).
struct MemoryFacts {
  int64_t params = 0;
  int64_t weight_bytes = 0;
  int64_t peak_activation_bytes = 0;
  std::string peak_at;  // the node that runs when the peak is reached
};

// The parts of the result that only some views read, built when a caller
// asks for them (docs/model.md "Result parts"). The totals, the kernels with
// their costs, the schedule, the notes and the network's weights are always
// built; `rank` and calibration's network fits read nothing more.
struct ResultParts {
  bool node_facts = true;  // Analysis::nodes_fate and memory's peak activations
  bool groupings = true;   // each kernel's op_group and grouped_conv; by_op, by_name, by_bound
};
constexpr ResultParts kTotalsOnly{false, false};

// The step's 80% prediction interval (docs/model.md "Prediction intervals"):
// the prediction times the 10th and 90th percentiles of measured / predicted
// over the held-out networks of its regime and class that calibrated the GPU.
struct PredictionInterval {
  // The share of measured settings the interval is meant to hold: its factors are the GPU file's
  // (1 - coverage) / 2 and (1 + coverage) / 2 quantiles of measured / predicted (calibrate/fit/intervals.py
  // reads this value through the Python module).
  static constexpr double coverage = 0.8;
  std::string regime;         // "graph", "loop_gpu" (the GPU sets the step) or "loop_host"
  std::string network_class;  // "attention" (a softmax or attention kernel) or "no_attention"
  double low_factor = 0, high_factor = 0;  // the GPU file's percentiles; 0: none measured
  double low_us = 0, high_us = 0;          // time_us times them
  // Whose residuals: "held-out networks" (measured on this GPU) or, in a carried file, "networks on a GPU
  // carried over" (measured on another GPU whose file was carried from the same donor).
  std::string basis;
  std::string why_none;  // when not measured(): why the answer states none
  bool measured() const { return high_us > 0; }
};

struct Analysis {
  std::string model_path;
  std::string model_name;  // file stem
  std::string gpu_id, gpu_name;
  double peak_tflops = 0;
  double dram_gbs = 0;       // the GPU's DRAM bandwidth: the roofline's slope
  double l2_gbs = 0;         // the rate of bytes found in L2 (l2_bw_factor x DRAM)
  Trust gpu_trust = Trust::datasheet;
  // Where the GPU's parameters came from, by owner ("main loop", "memory
  // system", "kernel launch", "runtime"): "<gpu>: <rule>", "fitted …" or
  // "architecture defaults" (docs/calibration.md "Carry-over").
  std::vector<std::pair<std::string, std::string>> gpu_param_sources;
  int64_t batch = 0;
  ExecutionConfig exec;      // runtime, dtype, amp, layout, launch mode
  DType dtype = DType::fp16;  // exec.dtype
  std::string runtime;       // exec's runtime profile's name
  bool runtime_calibrated = false;  // the GPU file has parameters fitted on this runtime
  bool execution_calibrated = false;  // ... and a set fitted on this layout and precision (exec.params_key())
  double launch_gap_us = 0;  // graph replay: the GPU's wait before each kernel (in the schedule, not a kernel's time)
  std::string host_id, host_name, host_trust;  // the host description the loop schedule used
  double host_spread_low = 1, host_spread_high = 1;  // HostModel::spread_low/high of that host
  Schedule schedule;         // both timelines, one entry per costed kernel
  int nodes = 0, free_nodes = 0;
  std::vector<KernelResult> kernels;
  std::vector<std::string> unmodelled;  // "<node> (<op>): <reason>"
  // Unmodelled kernels by cause: one line per reason, however many kernels it hits.
  struct UnmodelledCause {
    std::string reason;
    int kernels = 0;
    std::string first;  // "<node> (<op>)"
  };
  std::vector<UnmodelledCause> unmodelled_causes;
  bool partial = false;  // some kernels are left out of the totals
  std::vector<std::string> notes;       // assumptions made while loading
  bool over_memory = false;  // the batch does not fit the GPU's memory (memory_fit_note, among the notes)
  Totals total;
  PredictionInterval interval;  // none for a partial answer
  std::vector<NodeFate> nodes_fate;   // per ONNX node, in graph order
  MemoryFacts memory;
  std::vector<KernelGroup> by_op;     // by head op, convolutions by kind (depthwise, grouped); longest first
  std::vector<KernelGroup> by_name;   // by what a kernel runs ("Conv+bias+Relu"), as nsys sums a kernel name
  std::vector<KernelGroup> by_bound;  // by kernel bound (bound_name), alphabetical
  ResultParts parts;  // which of the parts above were built (AnalyzeOptions::parts)
};

// More unmodelled kernels than this (or any compute kernel) make a model's
// totals an error unless partial answers are allowed (docs/errors.md).
constexpr int kMaxUnmodelledKernels = 3;

struct AnalyzeOptions {
  LoadOptions load;
  ExecutionConfig exec;
  // The host that issues a plain loop's ops; null: builtin_host().
  std::shared_ptr<const HostModel> host;
  ResultParts parts;  // every part unless the caller reads fewer (kTotalsOnly)
};

Analysis analyze_model(const Model& model, const GpuModel& gpu, const AnalyzeOptions& options);
// The GPU with the runtime's parameter set applied (unless it already is).
GpuModel gpu_for(const GpuModel& gpu, const RuntimeProfile& runtime);
// The same, then the set fitted on the configuration's layout and precision
// (runtime_params["eager nchw amp"]), where the GPU file has one.
GpuModel gpu_for(const GpuModel& gpu, const ExecutionConfig& exec);
// Totals only: the network's predicted time from an existing lowering, for
// calibration loops that cost the same kernels under many parameter sets.
double network_time_us(const KernelGraph& lowered, const GpuModel& gpu);
// A note when the weights and one kernel's activations exceed the GPU's
// memory (GPU files with memory_gb); nullopt when they fit. weight_bytes:
// MemoryFacts::weight_bytes (docs/model.md "Node facts").
std::optional<std::string> memory_fit_note(int64_t weight_bytes, const KernelGraph& lowered, const GpuModel& gpu);
// Why the totals cannot stand for the model: a compute kernel (conv, GEMM,
// attention) is unmodelled, or more than kMaxUnmodelledKernels are; nullopt if
// they can. The message names the first such node, its op and the reason.
std::optional<std::string> incomplete_reason(const Analysis& a);
// Convenience: load + graph + lower + cost.
Analysis analyze_file(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options);

// A model file read and parsed once, then analysed under many
// configurations (batches, GPUs, runtimes: sweep, report, compare, advise).
struct ModelFile {
  std::string path;
  std::shared_ptr<const onnx::ModelProto> proto;  // never changed: each analysis loads a copy
  explicit ModelFile(const std::string& path);    // InputError naming the file, as load_onnx
  Model load(const LoadOptions& options) const;   // as load_onnx, from a copy
  Analysis analyze(const GpuModel& gpu, const AnalyzeOptions& options) const;
};

}  // namespace tilewave
