#include "tilewave/analysis.h"

#include "tilewave/error.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace tilewave {

namespace {

// docs/model.md "Inside a network": of an input produced by an earlier
// kernel, the part that the traffic since it was written has not pushed out
// of the share of L2 that `l2_reuse_fraction` allows is still there. Walks
// the kernel graph: each kernel's reads and writes, in launch order.
std::vector<double> l2_hit_bytes(const Lowering& lowered, const GpuModel& gpu) {
  const size_t n = lowered.kernels.size();
  std::vector<double> hits(n, 0.0);
  std::unordered_map<std::string, int> producer;  // tensor -> latest kernel writing it
  std::vector<double> touched(n + 1, 0.0);        // bytes moved by kernels [0, k)
  for (size_t k = 0; k < n; ++k)
    touched[k + 1] = touched[k] + (lowered.kernels[k].layer ? double(min_bytes(*lowered.kernels[k].layer)) : 0.0);
  const double window = gpu.l2_mb * 1e6 * gpu.param("l2_reuse_fraction");
  std::unordered_set<std::string> written_back;
  for (size_t k = 0; k < n; ++k) {
    const Kernel& kernel = lowered.kernels[k];
    for (const TensorRef& in : kernel.reads) {
      auto it = producer.find(in.name);
      if (it == producer.end() || in.bytes <= 0) continue;
      const double size = double(in.bytes);
      // L2 keeps roughly the most recent `window` bytes: of this value, what
      // the traffic since it was written has not pushed out.
      const double kept = std::clamp(window - (touched[k] - touched[it->second + 1]), 0.0, size);
      if (kept <= 0) continue;
      hits[k] += kept;
      // The producer's write of what is read back from L2 stayed in L2 too;
      // its write-back to DRAM overlaps later kernels.
      if (written_back.insert(in.name + "@" + std::to_string(it->second)).second) hits[it->second] += kept;
    }
    for (const TensorRef& out : kernel.writes) producer[out.name] = int(k);
  }
  return hits;
}

}  // namespace

GpuModel gpu_for(const GpuModel& base, const RuntimeProfile& runtime) {
  // A GPU already specialised (calibration candidates) keeps its parameters.
  return base.runtime == runtime.name() ? base : base.for_runtime(runtime.name());
}

std::vector<double> kernel_device_times_us(const Lowering& lowered, const GpuModel& gpu) {
  const std::vector<double> hits = l2_hit_bytes(lowered, gpu);
  const CostModel cost_model(gpu);
  std::vector<double> out(lowered.kernels.size(), 0.0);
  for (size_t i = 0; i < lowered.kernels.size(); ++i)
    if (lowered.kernels[i].layer) out[i] = cost_layer(*lowered.kernels[i].layer, cost_model, hits[i]).time_us;
  return out;
}

double network_time_us(const Lowering& lowered, const GpuModel& gpu) {
  const std::vector<double> device = kernel_device_times_us(lowered, gpu);
  const double gap = std::max(0.0, gpu.param("launch_gap_us"));
  double total = 0;
  for (size_t i = 0; i < device.size(); ++i)
    if (lowered.kernels[i].layer && device[i] > 0) total += device[i] + gap;
  return total;
}

Analysis analyze_model(const Model& model, const GpuModel& base_gpu, const AnalyzeOptions& options) {
  const LayerGraph graph = build_layer_graph(model);
  const RuntimeProfile& runtime = *options.runtime;
  const Lowering lowered = lower_model(model, graph, runtime, options.dtype, OpRegistry::builtin(), options.fuse_attention);
  const GpuModel gpu = gpu_for(base_gpu, runtime);
  Analysis a;
  a.model_path = model.path;
  a.model_name = std::filesystem::path(model.path).stem().string();
  a.gpu_id = gpu.id;
  a.gpu_name = gpu.name;
  a.peak_tflops = gpu.peak_flops(options.dtype) / 1e12;
  a.batch = model.batch;
  a.dtype = options.dtype;
  a.runtime = runtime.name();
  a.runtime_calibrated = gpu.has_runtime_params(runtime.name());
  a.launch_gap_us = std::max(0.0, gpu.param("launch_gap_us"));
  a.nodes = int(model.nodes.size());
  a.notes = model.notes;
  if (auto why = memory_fit_note(model, lowered, gpu, options.dtype)) a.notes.push_back(*why);
  a.free_nodes = lowered.free_nodes;
  Losses weighted;
  const std::vector<double> hits = l2_hit_bytes(lowered, gpu);
  const CostModel cost_model(gpu);
  for (size_t i = 0; i < lowered.kernels.size(); ++i) {
    const Kernel& k = lowered.kernels[i];
    KernelResult r{k, std::nullopt};
    if (k.layer) {
      r.cost = cost_in_network(*k.layer, cost_model, hits[i]);
      r.cost->l2_hit_bytes = int64_t(hits[i]);
      const KernelCost& c = *r.cost;
      if (__builtin_add_overflow(a.total.flops, c.flops, &a.total.flops) ||
          __builtin_add_overflow(a.total.bytes, c.bytes, &a.total.bytes))
        throw InputError(model.path, "the network's total FLOPs or bytes exceed 2^63, the most tilewave counts; "
                                     "use a smaller --batch or input");
      a.total.time_us += c.time_us;
      weighted.tile += c.losses.tile * c.time_us;
      weighted.wave += c.losses.wave * c.time_us;
      weighted.efficiency += c.losses.efficiency * c.time_us;
      weighted.memory += c.losses.memory * c.time_us;
      weighted.fixed += c.losses.fixed * c.time_us;
      ++a.total.kernels;
    } else {
      a.unmodelled.push_back(fmt::format("{} ({}): {}", k.name, k.ops, k.unmodelled_reason));
      a.partial = true;
      auto cause = std::find_if(a.unmodelled_causes.begin(), a.unmodelled_causes.end(),
                                [&](const auto& c) { return c.reason == k.unmodelled_reason; });
      if (cause == a.unmodelled_causes.end())
        a.unmodelled_causes.push_back({k.unmodelled_reason, 1, fmt::format("{} ({})", k.name, k.ops)});
      else
        ++cause->kernels;
    }
    a.kernels.push_back(std::move(r));
  }
  const double t = a.total.time_us;
  if (t > 0) {
    a.total.utilization = double(a.total.flops) / (t * 1e-6 * gpu.peak_flops(options.dtype));
    a.total.throughput_per_s = double(a.batch) / (t * 1e-6);
    a.total.losses = {weighted.tile / t, weighted.wave / t, weighted.efficiency / t, weighted.memory / t,
                      weighted.fixed / t};
  }
  return a;
}

std::optional<std::string> memory_fit_note(const Model& model, const Lowering& lowered, const GpuModel& gpu,
                                           DType dtype) {
  if (gpu.memory_gb <= 0) return std::nullopt;
  const double capacity = gpu.memory_gb * 1e9;
  double weights = 0;
  for (const auto& name : model.initializers) weights += double(std::max<int64_t>(model.numel(name), 0));
  weights *= dtype_bytes(dtype);
  double largest_tensor = 0, largest_kernel = 0;
  for (const auto& k : lowered.kernels) {
    double moved = 0;
    for (const auto* refs : {&k.reads, &k.writes})
      for (const auto& r : *refs) {
        largest_tensor = std::max(largest_tensor, double(r.bytes));
        moved += double(r.bytes);
      }
    largest_kernel = std::max(largest_kernel, moved);
  }
  if (weights + largest_kernel <= capacity) return std::nullopt;
  return fmt::format("this batch does not fit in the {}'s {:.0f} GB: the weights ({:.1f} GB) and one kernel's "
                     "inputs and outputs ({:.1f} GB; largest tensor {:.1f} GB) need more; the prediction assumes it "
                     "would run",
                     gpu.name, gpu.memory_gb, weights / 1e9, largest_kernel / 1e9, largest_tensor / 1e9);
}

std::optional<std::string> incomplete_reason(const Analysis& a) {
  for (const auto& r : a.kernels)
    if (!r.cost && r.kernel.compute)
      return fmt::format("node '{}' ({}) does tensor-core work tilewave cannot model: {}", r.kernel.name, r.kernel.ops,
                         r.kernel.unmodelled_reason);
  if (int(a.unmodelled.size()) > kMaxUnmodelledKernels)
    return fmt::format("{} kernels cannot be modelled; the first, {}, because {}", a.unmodelled.size(),
                       a.unmodelled_causes.front().first, a.unmodelled_causes.front().reason);
  return std::nullopt;
}

Analysis analyze_file(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options) {
  return analyze_model(load_onnx(path, options.load), gpu, options);
}

}  // namespace tilewave
