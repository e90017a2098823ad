// `tilewave calibrate fit|validate`: docs/calibration.md shows both in use.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "output.h"
#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {

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

// The measurements of one precision ("all": every one) from several files.
std::vector<Measurement> measurements_of(const std::vector<std::string>& paths, const std::string& dtype) {
  if (dtype != "all" && !parse_dtype(dtype))
    throw InputError("--dtype", fmt::format("unknown precision '{}' (fp32, tf32, fp16, bf16, int8 or all)", dtype));
  std::vector<Measurement> kept;
  for (const auto& path : paths)
    for (auto& m : read_measurements(path))
      if (dtype == "all" || dtype_name(m.entry.layer.dtype) == dtype) kept.push_back(std::move(m));
  if (kept.empty()) throw InputError(paths.front(), fmt::format("no measured {} layers", dtype));
  return kept;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

std::vector<NetworkRun> read_network_measurements(const std::string& path, const std::string& models_dir,
                                                  const std::string& runtime = "") {
  std::vector<std::string> skipped;
  auto runs = read_network_runs(path, models_dir, runtime, &skipped);
  for (const auto& s : skipped) fmt::print(std::cerr, "tilewave: note: {}: network {} skipped\n", path, s);
  return runs;
}

// Writes the GPU file back with fitted parameters and a provenance record;
// its facts and sources are kept as they were.
void write_calibrated_gpu(const GpuModel& gpu, const std::map<std::string, double>& fitted, const std::string& key,
                          const json& provenance, const std::string& output, const std::string& trust = "calibrated",
                          const json& runtime_params = nullptr) {
  std::ifstream f(gpu.source_file);
  json j = json::parse(f);
  json params = j.contains("params") ? j["params"] : json::object();
  for (const auto& [k, v] : fitted) params[k] = std::round(v * 1e5) / 1e5;
  j["params"] = params;
  if (!runtime_params.is_null()) j["runtime_params"] = runtime_params;
  j["trust"] = trust;
  j[key] = provenance;
  write_output(output, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int cmd_calibrate_fit(const CommonOptions& o, const std::vector<std::string>& measured, const std::string& dtype, int seed,
                      double holdout) {
  check_holdout(holdout);
  GpuModel gpu = gpu_of(o);
  const auto data = measurements_of(measured, dtype);
  const Split split = holdout_split(data.size(), holdout, unsigned(seed));
  fmt::print(std::cerr, "fitting {} parameters on {} layers ({} held out)...\n",
             std::count_if(param_table().begin(), param_table().end(),
                           [](auto& p) { return p.fit_min < p.fit_max && p.scope == ParamScope::layer; }),
             split.train.size(), split.test.size());
  const auto before = error_stats(gpu, data, split.test.empty() ? split.train : split.test);
  const FitResult fit = fit_parameters(gpu, data, split.train);
  for (const auto& [k, v] : fit.params) gpu.params[k] = v;
  const auto after_train = error_stats(gpu, data, split.train);
  const auto after_test = error_stats(gpu, data, split.test.empty() ? split.train : split.test);

  fmt::print(std::cerr, "{} evaluations, train loss {:.4f}\n", fit.evaluations, fit.train_loss);
  fmt::print(std::cerr, "\nheld-out layers, before the fit (starting parameters):\n");
  print_stats(std::cerr, before);
  fmt::print(std::cerr, "\nheld-out layers, after the fit:\n");
  print_stats(std::cerr, after_test);

  write_calibrated_gpu(gpu, fit.params, "calibration",
                       {{"data", measured},
                        {"dtype", dtype},
                        {"date", utc_now()},
                        {"layers_fitted", split.train.size()},
                        {"layers_held_out", split.test.size()},
                        {"holdout_seed", seed},
                        {"train_loss", fit.train_loss},
                        {"held_out", stats_json(after_test)},
                        {"train", stats_json(after_train)}},
                       o.output);
  return 0;
}

// One kernel's device time inside a network run (calibrate/eltwise_in_network.py).
struct KernelInNetwork {
  size_t run;        // index into the network measurements
  std::string node;  // the kernel's first node
  double measured_us;
};

std::vector<KernelInNetwork> read_kernel_times(const std::string& path, const std::vector<NetworkRun>& nets) {
  std::vector<KernelInNetwork> out;
  for_each_json_line(path, "kernel times", [&](const json& j, const std::string& where) {
    if (!j.contains("model") || !j.contains("batch") || !j.contains("node") || !j.contains("measured_us"))
      throw InputError(where, "needs model, batch, node and measured_us");
    for (size_t r = 0; r < nets.size(); ++r)
      if (nets[r].name == j["model"].get<std::string>() && nets[r].model.batch == j["batch"].get<int64_t>())
        out.push_back({r, j["node"].get<std::string>(), j["measured_us"].get<double>()});
  });
  return out;
}

int cmd_calibrate_fit_networks(const CommonOptions& o, const std::string& netbench, const std::string& models_dir,
                               int seed, double holdout, double kernel_match, const std::string& kernel_times) {
  check_holdout(holdout);
  GpuModel gpu = gpu_of(o);
  const auto nets = read_network_measurements(netbench, models_dir);
  // Hold out whole networks (every batch of a model), so the held-out ones
  // are architectures the fit never saw.
  std::vector<std::string> names;
  for (const auto& n : nets)
    if (std::find(names.begin(), names.end(), n.name) == names.end()) names.push_back(n.name);
  const Split by_name = holdout_split(names.size(), holdout, unsigned(seed));
  std::set<std::string> held;
  for (size_t i : by_name.test) held.insert(names[i]);
  AnalyzeOptions opt;
  opt.runtime = &runtime_of(o);
  // The kernels each run lowers to; no parameter changes them.
  std::vector<std::set<std::string>> kernel_names(nets.size());
  std::vector<int> kernel_count(nets.size());
  for (size_t i = 0; i < nets.size(); ++i) {
    const Model& m = nets[i].model;
    for (const auto& k : lower_model(m, build_layer_graph(m), *opt.runtime, opt.dtype).kernels) {
      kernel_names[i].insert(k.name);
      ++kernel_count[i];
    }
  }
  // Read and check the kernel times before any work is reported.
  const std::vector<KernelInNetwork> kernels =
      kernel_times.empty() ? std::vector<KernelInNetwork>{} : read_kernel_times(kernel_times, nets);
  for (const auto& k : kernels)
    if (!kernel_names[k.run].count(k.node))
      throw InputError(kernel_times, fmt::format("no kernel '{}' in {}", k.node, nets[k.run].name));
  std::vector<size_t> train, test;
  std::vector<double> measured;
  // Network-scope terms describe kernels running back to back; a run whose
  // kernels the lowering does not match (framework-inserted copies, unfolded
  // norms) says nothing about them, so it is left out of the fit.
  std::vector<std::string> mismatched;
  for (size_t i = 0; i < nets.size(); ++i) {
    measured.push_back(nets[i].measured_us);
    if (held.count(nets[i].name)) {
      test.push_back(i);
      continue;
    }
    const int predicted = kernel_count[i], counted = nets[i].measured_kernels;
    if (counted > 0 && std::abs(predicted - counted) > kernel_match * counted) {
      mismatched.push_back(fmt::format("{}@{} ({} vs {} kernels)", nets[i].name, nets[i].model.batch, predicted, counted));
      continue;
    }
    train.push_back(i);
  }
  if (!mismatched.empty())
    fmt::print(std::cerr, "not fitted, kernel counts differ by more than {:.0f}%: {}\n", 100 * kernel_match,
               joined(mismatched));
  const PredictFn predict = [&](const GpuModel& g, size_t i) {
    return analyze_model(nets[i].model, g, opt).total.time_us;
  };
  auto report = [&](const char* what, const GpuModel& g) {
    for (const auto* subset : {&train, &test}) {
      std::map<int64_t, std::vector<double>> by_batch;
      for (size_t i : *subset)
        by_batch[nets[i].model.batch].push_back(std::abs(predict(g, i) / nets[i].measured_us - 1));
      for (auto& [b, e] : by_batch)
        fmt::print(std::cerr, "  {:<7} {:<9} batch {:>4}: {:>2} networks, median |error| {:5.1f}%\n", what,
                   subset == &train ? "fitted" : "held-out", b, e.size(), 100 * quantile(e, 0.5));
    }
  };
  fmt::print(std::cerr, "fitting network-scope parameters on {} measurements of {} networks ({} networks held out)\n",
             train.size(), names.size() - held.size(), held.size());
  report("before", gpu);
  std::map<std::string, double> fitted;
  json kernel_stage = nullptr;
  std::vector<ParamScope> on_totals = {ParamScope::network_kernel, ParamScope::network};
  if (!kernel_times.empty()) {
    // The L2 terms from kernels timed inside the fitted networks, where they
    // act alone; then the rest from whole-network latencies.
    std::vector<size_t> kernel_train;
    std::vector<double> kernel_measured;
    for (size_t k = 0; k < kernels.size(); ++k) {
      kernel_measured.push_back(kernels[k].measured_us);
      if (std::find(train.begin(), train.end(), kernels[k].run) != train.end()) kernel_train.push_back(k);
    }
    // One analysis per run and candidate, shared by that run's kernels. The
    // profile's device times include no launch gap, so it is taken off.
    std::map<size_t, std::pair<std::vector<double>, std::map<std::string, double>>> cache;
    const PredictFn predict_kernel = [&](const GpuModel& g, size_t k) {
      const std::vector<double> key = {g.param("l2_bw_factor"), g.param("l2_reuse_fraction")};
      auto& [cached_key, by_node] = cache[kernels[k].run];
      if (cached_key != key) {
        by_node.clear();
        for (const auto& r : analyze_model(nets[kernels[k].run].model, g, opt).kernels)
          if (r.cost) by_node[r.kernel.name] = r.cost->time_us - g.param("launch_gap_us");
        cached_key = key;
      }
      return by_node.at(kernels[k].node);  // checked above
    };
    fmt::print(std::cerr, "fitting the L2 terms on {} kernels timed inside the fitted networks\n", kernel_train.size());
    const FitResult l2 = fit_scope(gpu, {ParamScope::network_kernel}, kernel_train, predict_kernel, kernel_measured);
    for (const auto& [k, v] : l2.params) gpu.params[k] = fitted[k] = v;
    kernel_stage = {{"data", kernel_times}, {"kernels_fitted", kernel_train.size()}, {"train_loss", l2.train_loss}};
    on_totals = {ParamScope::network};
  }
  const FitResult fit = fit_scope(gpu, on_totals, train, predict, measured);
  for (const auto& [k, v] : fit.params) gpu.params[k] = fitted[k] = v;
  report("after", gpu);
  write_calibrated_gpu(gpu, fitted, "network_calibration",
                       {{"data", netbench},
                        {"date", utc_now()},
                        {"networks_fitted", names.size() - held.size()},
                        {"networks_held_out", std::vector<std::string>(held.begin(), held.end())},
                        {"holdout_seed", seed},
                        {"kernel_match", kernel_match},
                        {"runs_not_fitted", mismatched},
                        {"kernel_stage", kernel_stage},
                        {"train_loss", fit.train_loss}},
                       o.output);
  return 0;
}

int cmd_calibrate_fit_runtime(const CommonOptions& o, const std::string& measured, const std::string& models_dir,
                              const std::string& class_times_path, const std::vector<std::string>& params) {
  const GpuModel gpu = gpu_of(o);
  const RuntimeProfile& runtime = runtime_of(o);
  const auto runs = read_network_measurements(measured, models_dir, runtime.name());
  std::set<std::string> names;
  for (const auto& run : runs) names.insert(run.name);
  fmt::print(std::cerr, "fitting {} parameters of runtime {} on {} runs ({} networks)\n", params.size(), runtime.name(),
             runs.size(), names.size());
  const std::vector<ClassTime> class_times =
      class_times_path.empty() ? std::vector<ClassTime>{} : read_class_times(class_times_path, runs);
  if (!class_times_path.empty() && class_times.empty())
    throw InputError(class_times_path, fmt::format("no class times for the runs of {}", measured));
  const RuntimeFit r = fit_runtime(gpu, runtime, runs, class_times, params);
  for (const auto& [c, loss] : r.class_loss) fmt::print(std::cerr, "  class {:<9} train loss {:.4f}\n", c, loss);
  fmt::print(std::cerr, "  network stage: {} of {} runs (kernel count within 10% of the profile's)\n",
             r.network_runs_fitted, runs.size());
  for (const auto& [b, e] : r.median_error_by_batch)
    fmt::print(std::cerr, "  batch {:>4}: median |error| {:5.1f}% before, {:5.1f}% after\n", b, 100 * e.first,
               100 * e.second);
  for (const auto& [k, v] : r.fit.params) fmt::print(std::cerr, "  {} = {:.5g}\n", k, v);
  std::ifstream f(gpu.source_file);
  json j = json::parse(f);
  json set = {{"params", json::object()}};
  for (const auto& [k, v] : r.fit.params) set["params"][k] = std::round(v * 1e5) / 1e5;
  json errors = json::object();
  for (const auto& [b, e] : r.median_error_by_batch) errors[std::to_string(b)] = std::round(e.second * 1e4) / 1e4;
  set["fitted_on"] = {{"runtime", runtime.name()},
                      {"data", measured},
                      {"class_times", class_times_path},
                      {"date", utc_now()},
                      {"networks", std::vector<std::string>(names.begin(), names.end())},
                      {"runs", runs.size()},
                      {"network_runs_fitted", r.network_runs_fitted},
                      {"train_loss", r.fit.train_loss},
                      {"median_error_by_batch", errors}};
  j["runtime_params"][runtime.name()] = set;
  write_output(o.output, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
  return 0;
}

int cmd_calibrate_validate(const CommonOptions& o, const std::vector<std::string>& measured, const std::string& dtype, int seed,
                           double holdout) {
  check_holdout(holdout);
  const GpuModel gpu = gpu_of(o);
  const auto data = measurements_of(measured, dtype);
  const Split split = holdout_split(data.size(), holdout, unsigned(seed));
  const auto& subset = holdout > 0 ? split.test : split.train;
  const auto stats = error_stats(gpu, data, subset);
  if (o.output != "-")
    write_output(o.output, [&](std::ostream& os) {
      for (size_t i : subset) {
        json j = data[i].entry.object;
        j.update(cost_to_json(cost_layer(data[i].entry.layer, gpu)));
        os << j.dump() << "\n";
      }
    });
  if (o.format == "json") {
    std::cout << json{{"gpu", gpu.id}, {"data", measured}, {"holdout", holdout}, {"seed", seed},
                      {"stats", stats_json(stats)}}
                     .dump(2)
              << "\n";
    return 0;
  }
  fmt::print("{} on {} measured {} layers from {} ({}; GPU file trust: {})\n", gpu.id, subset.size(), dtype, joined(measured),
             holdout > 0 ? fmt::format("the {:.0f}% held out with seed {}", 100 * holdout, seed) : "all layers",
             gpu.trust);
  print_stats(std::cout, stats);
  fmt::print("APE = |predicted - measured| / measured; bias = median predicted/measured - 1\n");
  return 0;
}

}  // namespace tilewave::cli

namespace tilewave::cli {

// docs/calibration.md "Other GPUs". Efficiencies are fractions of each GPU's
// own peaks and bandwidth and fixed costs are times of the same driver and
// libraries, so they carry over within an architecture. Across
// architectures only the memory and fixed-cost terms carry; the main-loop
// terms stay at the target architecture's defaults. The ramp scales with
// DRAM bandwidth (bytes in flight = bandwidth x latency); the row rate of
// row-normalisation kernels with SMs x clock.
int cmd_calibrate_carry(const CommonOptions& o, const std::string& to) {
  const GpuModel from = gpu_of(o);
  if (from.trust != "calibrated")
    throw InputError(from.source_file, "carry-over needs a calibrated GPU file (trust: calibrated)");
  CommonOptions target_opt = o;
  target_opt.gpu = to;
  const GpuModel target = gpu_of(target_opt);
  const bool same_arch = from.arch == target.arch;
  const std::set<std::string> arch_specific = {"tc_efficiency",        "tile_reuse_exponent",  "conv_efficiency",
                                               "conv_strided_efficiency", "conv_misaligned_efficiency",
                                               "misaligned_efficiency", "misaligned_n_efficiency", "pipeline_fill_steps",  "tap_overhead_steps",
                                               "wave_overhead_us",     "split_k_overhead_us",  "direct_conv_efficiency",
                                               "grouped_fallback_efficiency"};
  auto carry = [&](const std::map<std::string, double>& params) {
    std::map<std::string, double> out;
    for (const auto& [k, v] : params) {
      if (!same_arch && arch_specific.count(k)) continue;
      if (k == "ramp_mb") out[k] = v * target.dram_bandwidth_gbs / from.dram_bandwidth_gbs;
      else if (k == "row_ns") out[k] = v * (from.sms * from.boost_clock_mhz) / (target.sms * target.boost_clock_mhz);
      else out[k] = v;
    }
    return out;
  };
  const std::map<std::string, double> carried = carry(from.params);
  // Each runtime's own set carries the same way: the same framework and libraries.
  json runtime_sets = json::object();
  for (const auto& [runtime, set] : from.runtime_params) {
    json p = json::object();
    for (const auto& [k, v] : carry(set)) p[k] = std::round(v * 1e5) / 1e5;
    runtime_sets[runtime] = {{"params", p}, {"fitted_on", fmt::format("carried over from {}", from.id)}};
  }
  write_calibrated_gpu(target, carried, "carried_over",
                       {{"from", from.id},
                        {"from_arch", from.arch},
                        {"date", utc_now()},
                        {"scope", same_arch ? "all parameters (same architecture)"
                                            : "memory, fixed-cost and L2 parameters; main-loop parameters are "
                                              "architecture defaults"}},
                       o.output, "carried-over", runtime_sets.empty() ? json(nullptr) : runtime_sets);
  fmt::print(std::cerr, "{} -> {}: {} parameters carried ({})\n", from.id, target.id, carried.size(),
             same_arch ? "same architecture" : "memory and fixed-cost terms only");
  return 0;
}

}  // namespace tilewave::cli
