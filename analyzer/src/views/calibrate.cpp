// `tilewave calibrate`'s tables and JSON (docs/calibration.md): the error
// statistics per op class (fit, validate) and per results file (from-benchmark).
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format.h"
#include "tilewave/json_input.h"
#include "tilewave/report.h"

using nlohmann::json;

namespace tilewave {

void write_error_stats_table(std::ostream& os, const std::vector<ErrorStats>& stats) {
  fmt::print(os, "{:<16} {:>6} {:>10} {:>10} {:>10} {:>9} {:>10}\n", "op class", "layers", "median APE", "p90 APE",
             "within25%", "Spearman", "bias");
  for (const auto& s : stats)
    fmt::print(os, "{:<16} {:>6} {:>9.1f}% {:>9.1f}% {:>9.1f}% {:>9.3f} {:>+9.1f}%\n", s.group, s.n,
               100 * s.median_ape, 100 * s.p90_ape, 100 * s.within_25, s.spearman,
               100 * (std::exp(s.median_log_ratio) - 1));
}

json error_stats_json(const std::vector<ErrorStats>& stats) {
  json rows = json::array();
  for (const auto& s : stats)
    rows.push_back({{"class", s.group}, {"n", s.n}, {"median_ape", s.median_ape}, {"p90_ape", s.p90_ape},
                    {"within_25", s.within_25}, {"spearman", s.spearman}, {"median_log_ratio", s.median_log_ratio}});
  return rows;
}

json validation_to_json(const ValidationRun& run, const std::vector<ErrorStats>& stats) {
  return views::versioned({{"gpu", run.gpu.id},
                           {"data", run.files},
                           {"holdout", run.holdout},
                           {"seed", run.seed},
                           {"stats", error_stats_json(stats)}});
}

void write_validation_table(std::ostream& os, const ValidationRun& run, const std::vector<ErrorStats>& stats) {
  std::string files;
  for (const auto& p : run.files) files += (files.empty() ? "" : " ") + p;
  fmt::print(os, "{} on {} measured {} layers from {} ({}; GPU file trust: {})\n", run.gpu.id, run.layers, run.dtype,
             files,
             run.holdout > 0 ? fmt::format("the {:.0f}% held out with seed {}", 100 * run.holdout, run.seed)
                             : "all layers",
             trust_name(run.gpu.trust));
  write_error_stats_table(os, stats);
  fmt::print(os, "APE = |predicted - measured| / measured; bias = median predicted/measured - 1\n");
}

void write_benchmark_errors(std::ostream& os, const std::vector<BenchmarkError>& rows, const std::string& title) {
  fmt::print(os, "{}\n  {:<58} {:<8} {:<7} {:>4} {:>7} {:>7} {:>6} {:>6} {:>6}\n", title, "results file", "subset",
             "kind", "n", "median", "p90", "ratio", "tau", "GMACs");
  for (const auto& e : rows)
    fmt::print(os, "  {:<58} {:<8} {:<7} {:>4} {:>6.1f}% {:>6.1f}% {:>6.2f} {:>6.2f} {:>6.2f}\n",
               std::filesystem::path(e.source).filename().string(), e.subset, e.kind, e.n, 100 * e.median,
               100 * e.p90, e.median_ratio, e.tau, e.tau_gmacs);
}

void write_network_fit_errors(std::ostream& os, const NetworkFit& fit, const std::string& stage) {
  for (const auto& e : fit.errors)
    if (e.stage == stage)
      fmt::print(os, "  {:<7} {:<9} batch {:>4}: {:>2} networks, median |error| {:5.1f}%\n", e.stage, e.subset, e.batch,
                 e.n, 100 * e.median);
}

void write_runtime_fit(std::ostream& os, const RuntimeFit& r, size_t runs) {
  for (const auto& [c, loss] : r.class_loss) fmt::print(os, "  class {:<9} train loss {:.4f}\n", c, loss);
  fmt::print(os, "  network stage: {} of {} runs (kernel count within 10% of the profile's)\n", r.network_runs_fitted,
             runs);
  for (const auto& [b, e] : r.median_error_by_batch)
    fmt::print(os, "  batch {:>4}: median |error| {:5.1f}% before, {:5.1f}% after\n", b, 100 * e.first,
               100 * e.second);
  for (const auto& [k, v] : r.fit.params) fmt::print(os, "  {} = {:.5g}\n", k, v);
}

}  // namespace tilewave
