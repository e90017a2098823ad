// Stage 8: a kernel graph costed as a network. Each kernel's own cost
// (cost_layer) plus the terms only a network has: the L2 hits its tensor
// edges give (docs/model.md "Inside a network"), then the schedule of the
// step (docs/model.md "Schedule"). The one place these terms are computed:
// analysis, calibration and search all call it. Needs no ONNX: any producer of a KernelGraph (the
// ONNX loader and lowering, a search space) can be costed.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "tilewave/kernel_cost.h"
#include "tilewave/ir/kernel_graph.h"
#include "tilewave/schedule.h"

namespace tilewave {

struct NetworkTotals {
  double time_us = 0;      // the step: the schedule's step time
  // The step on the fastest and the slowest machines of the host's kind
  // (Schedule::step_low_us, step_high_us); time_us under graph replay.
  double time_low_us = 0, time_high_us = 0;
  double gpu_busy_us = 0;  // the kernels' device time alone
  double host_busy_us = 0; // the host's issue time (loop launches)
  bool host_bound = false;
  int64_t flops = 0, bytes = 0;
  int kernels = 0;         // costed kernels
  int unmodelled = 0;      // kernels left out
  Losses weighted_us;      // each loss share times its kernel's time, summed (µs)
  // The kernels' device time by their bound (index: Bound), summed (µs).
  std::array<double, kBoundCount> busy_us_by_bound{};
  // What sets the step (docs/model.md "Schedule"): "host" when host-bound,
  // else the bound_name() of the kernels with the most device time.
  const char* bound() const;
  // The time-weighted loss split of the network (fractions of time_us).
  Losses losses() const;
  // Two parts of one network (search-space blocks) add up.
  NetworkTotals& operator+=(const NetworkTotals& o);
};

// How the step is launched, for the schedule stage: graph replay (the
// default; no host needed) or a plain loop issued by `host`.
struct StepModel {
  Launch launch = Launch::graph;
  const HostModel* host = nullptr;  // loop: required (null: builtin_host())
};

// `per_kernel`, when given, gets each kernel's device cost in the network
// (nullopt for unmodelled kernels); `schedule`, the step on both timelines.
// Throws InputError(where) when the totals pass 2^63.
NetworkTotals cost_network(const KernelGraph& graph, const CostModel& model,
                           std::vector<std::optional<KernelCost>>* per_kernel = nullptr,
                           const std::string& where = "", const StepModel& step = {}, Schedule* schedule = nullptr);

// Each kernel's own time inside the network (L2 hits, no launch gap), as a
// profiler reports it; 0 for unmodelled kernels.
std::vector<double> kernel_device_times_us(const KernelGraph& graph, const CostModel& model);

}  // namespace tilewave
