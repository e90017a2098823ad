// Stage 5b: a kernel graph costed as a network. Each kernel's own cost
// (cost_layer) plus the terms only a network has: the L2 hits its tensor
// edges give, and the launch gap before each kernel (docs/model.md "Inside a
// network"). The one place these terms are computed: analysis, calibration
// and search all call it. Needs no ONNX: any producer of a Lowering (the
// ONNX loader and lowering, a search space) can be costed.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tilewave/kernel_cost.h"
#include "tilewave/lowering.h"

namespace tilewave {

struct NetworkTotals {
  double time_us = 0;
  int64_t flops = 0, bytes = 0;
  int kernels = 0;         // costed kernels
  int unmodelled = 0;      // kernels left out
  Losses weighted_us;      // each loss share times its kernel's time, summed (µs)
  // The time-weighted loss split of the network (fractions of time_us).
  Losses losses() const;
  // Two parts of one network (search-space blocks) add up.
  NetworkTotals& operator+=(const NetworkTotals& o);
};

// `per_kernel`, when given, gets each kernel's cost in the network (nullopt
// for unmodelled kernels); without it nothing per kernel is kept. Throws
// InputError(where) when the totals pass 2^63.
NetworkTotals cost_network(const Lowering& graph, const CostModel& model,
                           std::vector<std::optional<KernelCost>>* per_kernel = nullptr,
                           const std::string& where = "");

// Each kernel's own time inside the network (L2 hits, no launch gap), as a
// profiler reports it; 0 for unmodelled kernels.
std::vector<double> kernel_device_times_us(const Lowering& graph, const CostModel& model);

}  // namespace tilewave
