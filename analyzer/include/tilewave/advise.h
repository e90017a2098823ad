// `tilewave advise` (docs/report.md): concrete changes, each with its gain
// predicted by analysing the changed model, never one predicted slower.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tilewave/analysis.h"
#include "tilewave/run_options.h"

namespace tilewave {

struct Advice {
  std::string kind;    // channels | batch | runtime | dtype
  std::string change;  // what to do
  std::string detail;  // where, and what it changes
  Totals before, after;
  double gain = 0;     // throughput after / before - 1: always > min_gain
  // Why the changed model is priced on parameters not fitted for it ("" when
  // they are): the same trust mark `analyze` shows for that configuration.
  std::string not_fitted{};
};

// Tries each kind of change on `model` (analysed as `base`), keeps those
// predicted at least `min_gain` faster (in samples per second), best first.
std::vector<Advice> advise(const ModelFile& model, const GpuModel& gpu, const AnalyzeOptions& options,
                           const Analysis& base, double min_gain = 0.01);

// `tilewave advise PATH` as the CLI and the Python module run it: the model
// analysed with `o`, shown to `on_analysis` before any change is tried (the
// CLI warns of unmodelled kernels there, Python refuses them), then advised.
struct AdviseRun {
  Analysis analysis;
  std::vector<Advice> advice;
};
AdviseRun advise_file(const std::string& path, const RunOptions& o,
                      const std::function<void(const Analysis&)>& on_analysis = {});

}  // namespace tilewave
