#include "tilewave/analysis.h"

#include "node_facts.h"

#include "tilewave_onnx.pb.h"

#include "tilewave/error.h"
#include "tilewave/network_cost.h"
#include "tilewave/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

namespace tilewave {

const char* fate_name(Fate f) {
  switch (f) {
    case Fate::kernel: return "kernel";
    case Fate::fused: return "fused";
    case Fate::free: return "free";
    case Fate::unmodelled: return "unmodelled";
  }
  return "free";
}

GpuModel gpu_for(const GpuModel& base, const RuntimeProfile& runtime) {
  // A GPU already specialised (calibration candidates) keeps its parameters.
  return base.runtime == runtime.name() ? base : base.for_runtime(runtime.name());
}

GpuModel gpu_for(const GpuModel& base, const ExecutionConfig& exec) {
  GpuModel g = gpu_for(base, exec.runtime_profile());
  if (auto it = g.runtime_params.find(exec.params_key()); it != g.runtime_params.end())
    for (const auto& [k, v] : it->second) g.params[k] = v;
  return g;
}

namespace {

// Per owner, the origins of its parameters, most common first ("; " between).
std::vector<std::pair<std::string, std::string>> param_sources(const GpuModel& gpu) {
  const std::pair<ParamOwner, const char*> owners[] = {{ParamOwner::architecture, "main loop"},
                                                       {ParamOwner::memory_system, "memory system"},
                                                       {ParamOwner::launch, "kernel launch"},
                                                       {ParamOwner::runtime, "runtime"}};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [owner, label] : owners) {
    std::map<std::string, int> count;
    for (const auto& p : param_table()) {
      if (p.owner != owner) continue;
      auto it = gpu.param_origin.find(p.name);
      ++count[it == gpu.param_origin.end() ? (gpu.trust == Trust::calibrated ? "fitted on this GPU" : "architecture defaults")
                                           : it->second];
    }
    std::vector<std::pair<int, std::string>> by_count;
    for (const auto& [origin, n] : count) by_count.push_back({-n, origin});
    std::sort(by_count.begin(), by_count.end());
    std::string text;
    for (const auto& [n, origin] : by_count) text += (text.empty() ? "" : "; ") + origin;
    out.push_back({label, text});
  }
  return out;
}

}  // namespace

double network_time_us(const KernelGraph& lowered, const GpuModel& gpu) {
  return cost_network(lowered, CostModel(gpu)).time_us;  // graph replay
}

namespace {

// Costed kernels grouped by `key`, longest total time first.
template <class Key>
std::vector<KernelGroup> group_kernels(const Analysis& a, Key key) {
  std::vector<KernelGroup> groups;
  for (const auto& r : a.kernels) {
    if (!r.cost) continue;
    const std::string name = key(r);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const KernelGroup& x) { return x.name == name; });
    if (g == groups.end()) g = groups.insert(groups.end(), KernelGroup{name});
    ++g->kernels;
    g->time_us += r.cost->time_us;
    g->flops += r.cost->flops;
    g->dram_bytes += dram_bytes(*r.cost);
    g->l2_hit_bytes += r.cost->l2_hit_bytes;
  }
  const double peak = a.peak_tflops * 1e12;
  for (auto& g : groups) {
    g.utilization = g.time_us > 0 && peak > 0 ? double(g.flops) / (g.time_us * 1e-6 * peak) : 0;
    g.bandwidth_utilization =
        bandwidth_utilization(double(g.dram_bytes), double(g.l2_hit_bytes), g.time_us, a.dram_gbs, a.l2_gbs);
    g.step_share = a.total.time_us > 0 ? g.time_us / a.total.time_us : 0;
    g.gpu_busy_share = a.total.gpu_busy_us > 0 ? g.time_us / a.total.gpu_busy_us : 0;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const auto& x, const auto& y) { return x.time_us > y.time_us; });
  return groups;
}

// What became of each node: the kernels that list it, and whether it heads
// one, is fused into one or lands in an unmodelled one (docs/model.md "Node facts").
void add_node_fates(const Model& model, Analysis& a) {
  a.nodes_fate.resize(model.nodes.size());
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    // By name: the other fields keep their defaults.
    a.nodes_fate[i].name = model.nodes[i].name;
    a.nodes_fate[i].op = model.nodes[i].op_type;
  }
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    const Kernel& kernel = a.kernels[k].kernel;
    for (size_t j = 0; j < kernel.nodes.size(); ++j) {
      if (kernel.nodes[j] < 0 || size_t(kernel.nodes[j]) >= a.nodes_fate.size()) continue;
      NodeFate& f = a.nodes_fate[size_t(kernel.nodes[j])];
      f.kernels.push_back(int(k));
      const Fate fate = !a.kernels[k].cost ? Fate::unmodelled : j == 0 ? Fate::kernel : Fate::fused;
      // A node that heads any kernel is a kernel node; unmodelled wins over fused.
      if (f.fate == Fate::free || fate == Fate::kernel || (fate == Fate::unmodelled && f.fate == Fate::fused))
        f.fate = fate;
    }
  }
}

void add_groupings(Analysis& a) {
  // By head op, with convolutions by kind: depthwise and grouped ones run
  // other kernels than dense ones and are EfficientNet's real cost.
  for (auto& r : a.kernels) {
    r.op_group = r.kernel.ops.head();
    if (r.kernel.layer)
      if (const auto* c = std::get_if<ConvProblem>(&r.kernel.layer->problem); c && c->groups > 1) {
        r.grouped_conv = true;
        r.op_group += is_depthwise(*c) ? " (depthwise)" : " (grouped)";
      }
  }
  a.by_op = group_kernels(a, [](const KernelResult& r) { return r.op_group; });
  a.by_name = group_kernels(a, [](const KernelResult& r) { return r.kernel.ops.text(); });
  a.by_bound = group_kernels(a, [](const KernelResult& r) { return std::string(bound_name(r.cost->bound)); });
  std::sort(a.by_bound.begin(), a.by_bound.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
}

// The interval's regime and class from the costed result, its factors from
// the GPU's parameters (docs/model.md "Prediction intervals").
PredictionInterval prediction_interval(const Analysis& a, const GpuModel& gpu) {
  PredictionInterval p;
  if (a.partial) {  // a partial answer's time is not the step's
    p.why_none = "a partial answer";
    return p;
  }
  p.regime = a.exec.launch != Launch::loop ? "graph" : a.total.host_bound ? "loop_host" : "loop_gpu";
  const bool attention = std::any_of(a.kernels.begin(), a.kernels.end(), [](const KernelResult& k) {
    return k.kernel.ops.contains("Softmax") || (k.kernel.layer && kernel_class(*k.kernel.layer) == KernelClass::attention);
  });
  p.network_class = attention ? "attention" : "no_attention";
  const double low = gpu.param(interval_param(p.regime, p.network_class, "low"));
  const double high = gpu.param(interval_param(p.regime, p.network_class, "high"));
  if (!(low > 0) || !(high >= low)) {
    p.why_none = fmt::format("{}'s file measured none under {}", gpu.id, a.runtime);
    return p;
  }
  // A host-bound step's residuals are the host's the corpus was timed with,
  // the default one; a GPU-bound step moves little with the host.
  if (p.regime == "loop_host" && a.host_id != default_host_id()) {
    p.why_none = fmt::format("not measured with host {}: {}'s host-bound intervals were measured with host {}",
                             a.host_id, gpu.id, default_host_id());
    return p;
  }
  p.basis = gpu.trust == Trust::carried_over ? "networks on a GPU carried over" : "held-out networks";
  p.low_factor = low;
  p.high_factor = high;
  p.low_us = a.total.time_us * low;
  p.high_us = a.total.time_us * high;
  return p;
}

}  // namespace

Analysis analyze_model(const Model& model, const GpuModel& base_gpu, const AnalyzeOptions& options) {
  const ExecutionConfig& exec = options.exec;
  const RuntimeProfile& runtime = exec.runtime_profile();
  const GpuModel gpu = gpu_for(base_gpu, exec);
  // The GPU's parameters resolved once: the layout pass's choices, the costs and the result's rates read this one.
  const CostModel cost_model(gpu);
  const KernelGraph lowered = lower_model(model, exec, &cost_model);
  static const HostModel no_host = builtin_host();
  const HostModel& host = options.host ? *options.host : no_host;
  Analysis a;
  a.model_path = model.path;
  a.model_name = std::filesystem::path(model.path).stem().string();
  a.gpu_id = gpu.id;
  a.gpu_name = gpu.name;
  a.peak_tflops = gpu.peak_flops(exec.dtype) / 1e12;
  a.dram_gbs = gpu.dram_bandwidth_gbs;
  a.l2_gbs = gpu.dram_bandwidth_gbs * cost_model.get<param_index("l2_bw_factor")>();
  a.gpu_trust = gpu.trust;
  a.gpu_param_sources = param_sources(gpu);
  a.batch = model.batch;
  a.exec = exec;
  a.exec.runtime = &runtime;
  a.dtype = exec.dtype;
  a.runtime = runtime.name();
  if (exec.launch == Launch::loop || options.host) {  // graph replay needs no host
    a.host_id = host.id;
    a.host_name = host.name;
    a.host_trust = host.trust;
    a.host_spread_low = host.spread_low;
    a.host_spread_high = host.spread_high;
  }
  a.runtime_calibrated = gpu.has_runtime_params(runtime.name());
  a.execution_calibrated = gpu.has_runtime_params(exec.params_key());
  a.launch_gap_us = std::max(0.0, cost_model.get<param_index("launch_gap_us")>());
  a.nodes = int(model.nodes.size());
  a.notes = model.notes;
  a.memory = network_weights(model, exec);
  if (auto why = memory_fit_note(a.memory.weight_bytes, lowered, gpu)) {
    a.notes.push_back(*why);
    a.over_memory = true;
  }
  a.free_nodes = lowered.free_nodes;
  std::vector<std::optional<KernelCost>> costs;
  const NetworkTotals totals =
      cost_network(lowered, cost_model, &costs, model.path, StepModel{exec.launch, &host}, &a.schedule);
  for (size_t i = 0; i < lowered.kernels.size(); ++i) {
    const Kernel& k = lowered.kernels[i];
    if (!k.layer) {
      a.unmodelled.push_back(fmt::format("{} ({}): {}", k.name, k.ops.text(), k.unmodelled_reason));
      a.partial = true;
      auto cause = std::find_if(a.unmodelled_causes.begin(), a.unmodelled_causes.end(),
                                [&](const auto& c) { return c.reason == k.unmodelled_reason; });
      if (cause == a.unmodelled_causes.end())
        a.unmodelled_causes.push_back({k.unmodelled_reason, 1, fmt::format("{} ({})", k.name, k.ops.text())});
      else
        ++cause->kernels;
    }
    if (costs[i]) {
      a.total.dram_bytes += dram_bytes(*costs[i]);
      a.total.l2_hit_bytes += costs[i]->l2_hit_bytes;
    }
    a.kernels.push_back({k, std::move(costs[i]), {}, false});
  }
  a.total.flops = totals.flops;
  a.total.bytes = totals.bytes;
  a.total.time_us = totals.time_us;
  a.total.time_low_us = totals.time_low_us;
  a.total.time_high_us = totals.time_high_us;
  a.total.kernels = totals.kernels;
  a.total.gpu_busy_us = totals.gpu_busy_us;
  a.total.host_busy_us = totals.host_busy_us;
  a.total.host_bound = totals.host_bound;
  a.total.bound = totals.bound();
  const double t = totals.time_us;
  if (totals.gpu_busy_us > 0)
    a.total.gpu_busy_utilization = double(a.total.flops) / (totals.gpu_busy_us * 1e-6 * gpu.peak_flops(exec.dtype));
  if (t > 0) {
    a.total.utilization = double(a.total.flops) / (t * 1e-6 * gpu.peak_flops(exec.dtype));
    a.total.throughput_per_s = double(a.batch) / (t * 1e-6);
    a.total.bandwidth_utilization =
        bandwidth_utilization(double(a.total.dram_bytes), double(a.total.l2_hit_bytes), t, a.dram_gbs, a.l2_gbs);
    a.total.losses = totals.losses();
  }
  a.interval = prediction_interval(a, gpu);
  // The parts only some views read, when the caller asks for them (docs/model.md "Result parts").
  a.parts = options.parts;
  if (options.parts.node_facts) {
    add_node_fates(model, a);
    fill_node_facts(model, exec, a);
  }
  if (options.parts.groupings) add_groupings(a);
  return a;
}

std::optional<std::string> memory_fit_note(int64_t weight_bytes, const KernelGraph& lowered, const GpuModel& gpu) {
  if (gpu.memory_gb <= 0) return std::nullopt;
  const double capacity = gpu.memory_gb * 1e9;
  const double weights = double(weight_bytes);
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
      return fmt::format("node '{}' ({}) does tensor-core work tilewave cannot model: {}", r.kernel.name, r.kernel.ops.text(),
                         r.kernel.unmodelled_reason);
  if (int(a.unmodelled.size()) > kMaxUnmodelledKernels)
    return fmt::format("{} kernels cannot be modelled; the first, {}, because {}", a.unmodelled.size(),
                       a.unmodelled_causes.front().first, a.unmodelled_causes.front().reason);
  return std::nullopt;
}

Analysis analyze_file(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options) {
  return analyze_model(load_onnx(path, options.load), gpu, options);
}

ModelFile::ModelFile(const std::string& file) : path(file), proto(read_onnx_file(file)) {}

Model ModelFile::load(const LoadOptions& options) const {
  // A copy: loading writes the batch and input overrides into the protobuf.
  return load_onnx_proto(std::make_shared<onnx::ModelProto>(*proto), path, options);
}

Analysis ModelFile::analyze(const GpuModel& gpu, const AnalyzeOptions& options) const {
  return analyze_model(load(options.load), gpu, options);
}

}  // namespace tilewave
