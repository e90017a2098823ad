// `tilewave calibrate fit|validate`: docs/calibration.md shows both in use.
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "output.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {

GpuModel gpu_of(const CommonOptions& o) {
  return load_gpu(o.gpu, o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir);
}

void check_holdout(double holdout) {
  if (!(holdout >= 0 && holdout < 1)) throw InputError("--holdout", "must be in [0, 1)");
}

void print_stats(std::ostream& os, const std::vector<ErrorStats>& stats) {
  fmt::print(os, "{:<16} {:>6} {:>10} {:>10} {:>10} {:>9} {:>10}\n", "op class", "layers", "median APE", "p90 APE",
             "within25%", "Spearman", "bias");
  for (const auto& s : stats)
    fmt::print(os, "{:<16} {:>6} {:>9.1f}% {:>9.1f}% {:>9.1f}% {:>9.3f} {:>+9.1f}%\n", s.group, s.n,
               100 * s.median_ape, 100 * s.p90_ape, 100 * s.within_25, s.spearman,
               100 * (std::exp(s.median_log_ratio) - 1));
}

json stats_json(const std::vector<ErrorStats>& stats) {
  json rows = json::array();
  for (const auto& s : stats)
    rows.push_back({{"class", s.group}, {"n", s.n}, {"median_ape", s.median_ape}, {"p90_ape", s.p90_ape},
                    {"within_25", s.within_25}, {"spearman", s.spearman}, {"median_log_ratio", s.median_log_ratio}});
  return rows;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int cmd_calibrate_fit(const CommonOptions& o, const std::string& measured, int seed, double holdout) {
  check_holdout(holdout);
  GpuModel gpu = gpu_of(o);
  const auto data = read_measurements(measured);
  const Split split = holdout_split(data.size(), holdout, unsigned(seed));
  fmt::print(std::cerr, "fitting {} parameters on {} layers ({} held out)...\n",
             std::count_if(param_table().begin(), param_table().end(), [](auto& p) { return p.fit_min < p.fit_max; }),
             split.train.size(), split.test.size());
  const auto before = error_stats(gpu, data, split.test.empty() ? split.train : split.test);
  const FitResult fit = fit_parameters(gpu, data, split.train);
  for (const auto& [k, v] : fit.params) gpu.params[k] = v;
  const auto after_train = error_stats(gpu, data, split.train);
  const auto after_test = error_stats(gpu, data, split.test.empty() ? split.train : split.test);

  fmt::print(std::cerr, "{} evaluations, train RMS log error {:.3f}\n", fit.evaluations, fit.train_rms_log_error);
  fmt::print(std::cerr, "\nheld-out layers, before the fit (starting parameters):\n");
  print_stats(std::cerr, before);
  fmt::print(std::cerr, "\nheld-out layers, after the fit:\n");
  print_stats(std::cerr, after_test);

  // The GPU file keeps its facts and sources; only params and provenance change.
  std::ifstream f(gpu.source_file);
  json j = json::parse(f);
  json params = j.contains("params") ? j["params"] : json::object();
  for (const auto& [k, v] : fit.params) params[k] = std::round(v * 1e5) / 1e5;
  j["params"] = params;
  j["trust"] = "calibrated";
  j["calibration"] = {{"data", measured},
                      {"date", utc_now()},
                      {"layers_fitted", split.train.size()},
                      {"layers_held_out", split.test.size()},
                      {"holdout_seed", seed},
                      {"train_rms_log_error", fit.train_rms_log_error},
                      {"held_out", stats_json(after_test)},
                      {"train", stats_json(after_train)}};
  write_output(o.output, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
  return 0;
}

int cmd_calibrate_validate(const CommonOptions& o, const std::string& measured, int seed, double holdout) {
  check_holdout(holdout);
  const GpuModel gpu = gpu_of(o);
  const auto data = read_measurements(measured);
  const Split split = holdout_split(data.size(), holdout, unsigned(seed));
  const auto& subset = holdout > 0 ? split.test : split.train;
  const auto stats = error_stats(gpu, data, subset);
  if (o.format == "json") {
    std::cout << json{{"gpu", gpu.id}, {"data", measured}, {"holdout", holdout}, {"seed", seed},
                      {"stats", stats_json(stats)}}
                     .dump(2)
              << "\n";
    return 0;
  }
  fmt::print("{} on {} measured layers from {} ({}; GPU file trust: {})\n", gpu.id, subset.size(), measured,
             holdout > 0 ? fmt::format("the {:.0f}% held out with seed {}", 100 * holdout, seed) : "all layers",
             gpu.trust);
  print_stats(std::cout, stats);
  fmt::print("APE = |predicted - measured| / measured; bias = median predicted/measured - 1\n");
  return 0;
}

}  // namespace tilewave::cli
