#include "tilewave/network_cost.h"

#include <algorithm>
#include <unordered_set>

#include "tilewave/error.h"

namespace tilewave {

namespace {

// docs/model.md "Inside a network": of an input produced by an earlier
// kernel, the part that the traffic since it was written has not pushed out
// of the share of L2 that `l2_reuse_fraction` allows is still there. Walks
// the kernel graph: each kernel's reads and writes, in launch order.
std::vector<double> l2_hit_bytes(const KernelGraph& graph, const CostModel& model) {
  const size_t n = graph.kernels.size();
  const KernelIndex index(graph);
  std::vector<double> hits(n, 0.0);
  std::vector<double> touched(n + 1, 0.0);  // bytes moved by kernels [0, k)
  for (size_t k = 0; k < n; ++k)
    touched[k + 1] = touched[k] + (graph.kernels[k].layer ? double(min_bytes(*graph.kernels[k].layer)) : 0.0);
  const double window = model.gpu.l2_mb * 1e6 * model.gpu.param("l2_reuse_fraction");
  std::unordered_set<std::string> written_back;
  auto is_transform = [&graph](size_t k) {
    return graph.kernels[k].layer && kernel_class(*graph.kernels[k].layer) == KernelClass::transform;
  };
  for (size_t k = 0; k < n; ++k) {
    const Kernel& kernel = graph.kernels[k];
    // A layout transform's scattered access gains nothing from what L2 holds,
    // read or written: inside networks cuDNN's transforms ran 55% slower than
    // predicted with hits (docs/model.md "Inside a network"). What it reads
    // still came from L2, so its producer's write stayed there.
    const bool reader_gains = !is_transform(k);
    for (size_t slot = 0; slot < kernel.reads.size(); ++slot) {
      const TensorRef& in = kernel.reads[slot];
      const int p = index.producer(k, slot);
      if (p < 0 || p >= int(k) || in.bytes <= 0) continue;
      const double size = double(in.bytes);
      // L2 keeps roughly the most recent `window` bytes: of this value, what
      // the traffic since it was written has not pushed out.
      const double kept = std::clamp(window - (touched[k] - touched[size_t(p) + 1]), 0.0, size);
      if (kept <= 0) continue;
      if (reader_gains) hits[k] += kept;
      // The producer's write of what is read back from L2 stayed in L2 too;
      // its write-back to DRAM overlaps later kernels.
      if (!is_transform(size_t(p)) && written_back.insert(in.name + "@" + std::to_string(p)).second)
        hits[size_t(p)] += kept;
    }
  }
  return hits;
}

}  // namespace

NetworkTotals& NetworkTotals::operator+=(const NetworkTotals& o) {
  time_us += o.time_us;
  time_low_us += o.time_low_us;
  time_high_us += o.time_high_us;
  gpu_busy_us += o.gpu_busy_us;
  host_busy_us += o.host_busy_us;
  host_bound = host_busy_us > gpu_busy_us && host_busy_us > 0;
  flops += o.flops;
  bytes += o.bytes;
  kernels += o.kernels;
  unmodelled += o.unmodelled;
  weighted_us.tile += o.weighted_us.tile;
  weighted_us.wave += o.weighted_us.wave;
  weighted_us.efficiency += o.weighted_us.efficiency;
  weighted_us.memory += o.weighted_us.memory;
  weighted_us.fixed += o.weighted_us.fixed;
  weighted_us.idle += o.weighted_us.idle;
  for (int b = 0; b < kBoundCount; ++b) busy_us_by_bound[size_t(b)] += o.busy_us_by_bound[size_t(b)];
  return *this;
}

const char* NetworkTotals::bound() const {
  if (host_bound) return "host";
  // max_element keeps the first of equal times: compute before the others.
  const auto most = std::max_element(busy_us_by_bound.begin(), busy_us_by_bound.end());
  if (!(*most > 0)) return bound_name(Bound::latency);  // no kernel time: the step's fixed costs alone
  return bound_name(Bound(most - busy_us_by_bound.begin()));
}

Losses NetworkTotals::losses() const {
  if (time_us <= 0) return {};
  const Losses& w = weighted_us;
  return {w.tile / time_us, w.wave / time_us, w.efficiency / time_us, w.memory / time_us, w.fixed / time_us,
          w.idle / time_us};
}

NetworkTotals cost_network(const KernelGraph& graph, const CostModel& model,
                           std::vector<std::optional<KernelCost>>* per_kernel, const std::string& where,
                           const StepModel& step, Schedule* schedule) {
  const std::vector<double> hits = l2_hit_bytes(graph, model);
  NetworkTotals t;
  if (per_kernel) per_kernel->assign(graph.kernels.size(), std::nullopt);
  std::vector<LaunchItem> items;
  std::vector<int> item_kernel;
  items.reserve(graph.kernels.size());
  for (size_t i = 0; i < graph.kernels.size(); ++i) {
    const Kernel& k = graph.kernels[i];
    if (!k.layer) {
      ++t.unmodelled;
      continue;
    }
    KernelCost c = cost_kernel(*k.layer, model, hits[i]);
    if (__builtin_add_overflow(t.flops, c.flops, &t.flops) || __builtin_add_overflow(t.bytes, c.bytes, &t.bytes))
      throw InputError(where, "the network's total FLOPs or bytes exceed 2^63, the most tilewave counts; "
                              "use a smaller --batch or input");
    t.weighted_us.tile += c.losses.tile * c.time_us;
    t.weighted_us.wave += c.losses.wave * c.time_us;
    t.weighted_us.efficiency += c.losses.efficiency * c.time_us;
    t.weighted_us.memory += c.losses.memory * c.time_us;
    t.weighted_us.fixed += c.losses.fixed * c.time_us;
    t.busy_us_by_bound[size_t(c.bound)] += c.time_us;
    items.push_back({c.time_us, host_call_of(k), k.host_views});
    item_kernel.push_back(int(i));
    ++t.kernels;
    if (per_kernel) (*per_kernel)[i] = std::move(c);
  }
  static const HostModel fallback = builtin_host();
  Schedule s = schedule_step(items, step.launch, step.host ? *step.host : fallback, model.get<param_index("launch_gap_us")>());
  for (size_t j = 0; j < s.kernels.size(); ++j) s.kernels[j].kernel = item_kernel[j];
  t.time_us = s.step_us;
  t.time_low_us = s.step_low_us;
  t.time_high_us = s.step_high_us;
  t.gpu_busy_us = s.gpu_busy_us;
  t.host_busy_us = s.host_busy_us;
  t.host_bound = s.host_bound;
  // The GPU idle between kernels (launch gaps, the host) is a loss of its own.
  t.weighted_us.idle = s.gpu_idle_us;
  if (schedule) *schedule = std::move(s);
  return t;
}

std::vector<double> kernel_device_times_us(const KernelGraph& graph, const CostModel& model) {
  const std::vector<double> hits = l2_hit_bytes(graph, model);
  std::vector<double> out(graph.kernels.size(), 0.0);
  for (size_t i = 0; i < graph.kernels.size(); ++i)
    if (graph.kernels[i].layer) out[i] = cost_kernel(*graph.kernels[i].layer, model, hits[i]).time_us;
  return out;
}

}  // namespace tilewave
