// Measuring layers: one layer → one output object, and the whole-file driver.
#pragma once

#include <stdexcept>
#include <string>

#include "layer.hpp"
#include "timing.hpp"

namespace tw {

struct Context;

// The CUDA context is unusable (sticky error); the run cannot continue.
struct FatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The layer's input object plus measured_us, min_us, spread, algo, status and
// reason/error. Per-layer problems become status values; throws FatalError
// only when the context is broken afterwards.
Json measure_layer(Context& ctx, const Layer& layer, uint64_t seed);

struct MeasureOptions {
  std::string layers_path;
  std::string output_path;
  int limit = 0;  // 0 = all layers
  std::string command;  // argv joined, for the header
  TimingConfig timing;
};

// Returns the process exit code.
int run_measure(const MeasureOptions& opts);

}  // namespace tw
