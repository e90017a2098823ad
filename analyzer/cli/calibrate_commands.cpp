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
#include "tilewave/output_file.h"
#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/progress.h"
#include "tilewave/benchmark_fit.h"
#include "tilewave/carry_over.h"
#include "tilewave/gpu_file.h"
#include "tilewave/json_input.h"
#include "tilewave/error.h"
#include "tilewave/report.h"
#include "tilewave/view_registry.h"
#include "tilewave/version.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {

// The GPUs a comma-separated option names, each loaded as --gpu would be.
std::vector<GpuModel> gpus_of(const CommonOptions& o, const std::string& list, const char* what) {
  std::vector<GpuModel> out;
  for (const auto& id : split_list(list, what)) {
    CommonOptions one = o;
    one.gpu = id;
    out.push_back(gpu_of(one));
  }
  return out;
}

void check_holdout(double holdout) {
  if (!(holdout >= 0 && holdout < 1)) throw UsageError("--holdout", "must be in [0, 1)");
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
  for (const auto& s : skipped) note(fmt::format("{}: network {} skipped", path, s));
  return runs;
}

// A provenance record with what made it: the command as typed (or --made-by's)
// and the commit the binary was built from (docs/calibration.md "Provenance").
json stamped(json provenance, const CommonOptions& o) {
  provenance["command"] = o.made_by.empty() ? o.invocation : o.made_by;
  provenance["commit"] = build_commit();
  return provenance;
}

// The architecture files a written GPU file is checked against: --gpu-dir's
// when given, as the file will be read.
std::string arch_dir_for(const GpuModel& gpu, const CommonOptions& o) {
  return gpu_arch_dir(gpu.source_file, o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir);
}

// Writes the GPU file back to --output with fitted parameters and a stamped
// provenance record (gpu_file_with_params, tilewave/gpu_file.h).
void write_calibrated_gpu(const GpuModel& gpu, const std::map<std::string, double>& fitted, const std::string& key,
                          const json& provenance, const CommonOptions& o, Trust trust = Trust::calibrated,
                          const json& runtime_params = nullptr, bool replace_params = false) {
  const json j = gpu_file_with_params(gpu, fitted, key, stamped(provenance, o), trust, runtime_params, replace_params);
  write_gpu_file(o.output, j, arch_dir_for(gpu, o));
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
  Progress progress("tilewave calibrate fit");
  const FitResult fit = fit_parameters(gpu, data, split.train, progress.callback());
  progress.finish();
  for (const auto& [k, v] : fit.params) gpu.params[k] = v;
  const auto after_train = error_stats(gpu, data, split.train);
  const auto after_test = error_stats(gpu, data, split.test.empty() ? split.train : split.test);

  fmt::print(std::cerr, "{} evaluations, train loss {:.4f}\n", fit.evaluations, fit.train_loss);
  fmt::print(std::cerr, "\nheld-out layers, before the fit (starting parameters):\n");
  write_error_stats_table(std::cerr, before);
  fmt::print(std::cerr, "\nheld-out layers, after the fit:\n");
  write_error_stats_table(std::cerr, after_test);

  write_calibrated_gpu(gpu, fit.params, "calibration",
                       {{"data", measured},
                        {"dtype", dtype},
                        {"date", utc_now()},
                        {"layers_fitted", split.train.size()},
                        {"layers_held_out", split.test.size()},
                        {"holdout_seed", seed},
                        {"train_loss", fit.train_loss},
                        {"held_out", error_stats_json(after_test)},
                        {"train", error_stats_json(after_train)}},
                       o);
  return 0;
}

int cmd_calibrate_fit_networks(const CommonOptions& o, const std::string& netbench, const std::string& models_dir,
                               int seed, double holdout, double kernel_match, const std::string& kernel_times) {
  check_holdout(holdout);
  const GpuModel gpu = gpu_of(o);
  const auto nets = read_network_measurements(netbench, models_dir);
  const std::vector<KernelInNetwork> kernels =
      kernel_times.empty() ? std::vector<KernelInNetwork>{} : read_kernel_times(kernel_times, nets);
  NetworkFitOptions options;
  options.seed = unsigned(seed);
  options.holdout = holdout;
  options.kernel_match = kernel_match;
  options.kernel_times_path = kernel_times;
  Progress progress("tilewave calibrate fit-networks");
  const NetworkFit fit =
      fit_networks(gpu, runtime_named(o.runtime, "--runtime"), nets, kernels, options, progress.callback());
  progress.finish();
  if (!fit.mismatched.empty())
    fmt::print(std::cerr, "not fitted, kernel counts differ by more than {:.0f}%: {}\n", 100 * kernel_match,
               joined(fit.mismatched));
  fmt::print(std::cerr, "fitting network-scope parameters on {} measurements of {} networks ({} networks held out)\n",
             fit.runs_fitted, fit.networks_fitted, fit.held_out.size());
  write_network_fit_errors(std::cerr, fit, "before");
  json kernel_stage = nullptr;
  if (fit.kernel_stage) {
    fmt::print(std::cerr, "fitting the L2 terms on {} kernels timed inside the fitted networks\n", fit.kernels_fitted);
    kernel_stage = {{"data", kernel_times}, {"kernels_fitted", fit.kernels_fitted},
                    {"train_loss", fit.kernel_stage->train_loss}};
  }
  write_network_fit_errors(std::cerr, fit, "after");
  GpuModel out = gpu;
  for (const auto& [k, v] : fit.params) out.params[k] = v;
  write_calibrated_gpu(out, fit.params, "network_calibration",
                       {{"data", netbench},
                        {"date", utc_now()},
                        {"networks_fitted", fit.networks_fitted},
                        {"networks_held_out", std::vector<std::string>(fit.held_out.begin(), fit.held_out.end())},
                        {"holdout_seed", seed},
                        {"kernel_match", kernel_match},
                        {"runs_not_fitted", fit.mismatched},
                        {"kernel_stage", kernel_stage},
                        {"train_loss", fit.totals.train_loss}},
                       o);
  return 0;
}

int cmd_calibrate_fit_runtime(const CommonOptions& o, const std::string& measured, const std::string& models_dir,
                              const std::string& class_times_path, const std::vector<std::string>& params) {
  const GpuModel gpu = gpu_of(o);
  const RuntimeProfile& runtime = runtime_named(o.runtime, "--runtime");
  const auto runs = read_network_measurements(measured, models_dir, runtime.name());
  std::set<std::string> names;
  for (const auto& run : runs) names.insert(run.name);
  fmt::print(std::cerr, "fitting {} parameters of runtime {} on {} runs ({} networks)\n", params.size(), runtime.name(),
             runs.size(), names.size());
  const std::vector<ClassTime> class_times =
      class_times_path.empty() ? std::vector<ClassTime>{} : read_class_times(class_times_path, runs);
  if (!class_times_path.empty() && class_times.empty())
    throw InputError(class_times_path, fmt::format("no class times for the runs of {}", measured));
  Progress progress("tilewave calibrate fit-runtime");
  const RuntimeFit r = fit_runtime(gpu, runtime, runs, class_times, params, progress.callback());
  progress.finish();
  write_runtime_fit(std::cerr, r, runs.size());
  json j = read_json_file(gpu.source_file, "GPU file");
  json set = {{"params", json::object()}};
  for (const auto& [k, v] : r.fit.params) set["params"][k] = stored_param(v);
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
  set["fitted_on"] = stamped(set["fitted_on"], o);
  j["runtime_params"][runtime.name()] = set;
  write_gpu_file(o.output, j, arch_dir_for(gpu, o));
  return 0;
}

int cmd_calibrate_validate(const CommonOptions& o, const std::vector<std::string>& measured, const std::string& dtype, int seed,
                           double holdout, const std::string& predictions) {
  check_holdout(holdout);
  const GpuModel gpu = gpu_of(o);
  const auto data = measurements_of(measured, dtype);
  const Split split = holdout_split(data.size(), holdout, unsigned(seed));
  const auto& subset = holdout > 0 ? split.test : split.train;
  const auto stats = error_stats(gpu, data, subset);
  if (!predictions.empty())
    write_output(predictions, [&](std::ostream& os) {
      for (size_t i : subset) {
        json j = data[i].entry.object;
        j.update(cost_to_json(cost_layer(data[i].entry.layer, gpu), true));
        os << json_text(j) << "\n";
      }
    });
  write_output(o.output, [&](std::ostream& os) {
    const ValidationRun run{gpu, measured, dtype, holdout, seed, subset.size()};
    ViewRegistry::global().write(os, "calibrate validate", o.format, ValidationViewInput{run, stats});
  });
  return 0;
}

}  // namespace tilewave::cli

namespace tilewave::cli {

// Parameters carry by what they are a property of (library:
// carry_over.h; docs/calibration.md "Carry-over"). `--gpu` names the donors,
// comma-separated, in the order of preference.
int cmd_calibrate_carry(const CommonOptions& o, const std::string& to) {
  const std::vector<GpuModel> donors = gpus_of(o, o.gpu, "--gpu");
  CommonOptions target_opt = o;
  target_opt.gpu = to;
  const GpuModel target = gpu_of(target_opt);
  const CarryOver c = carry_over(target, donors);
  json file = carried_gpu_file(target, donors, c, utc_now());
  file["carried_over"] = stamped(file["carried_over"], o);
  write_gpu_file(o.output, file, arch_dir_for(target, o));
  std::map<std::string, int> by_donor;
  for (const auto& [k, p] : c.params) ++by_donor[p.from];
  fmt::print(std::cerr, "{}: {} of {} parameters carried ({}); the rest stay at its architecture's defaults\n",
             target.id, c.params.size(), param_table().size(), fmt::format("{}", fmt::join(
                 [&] {
                   std::vector<std::string> parts;
                   for (const auto& [id, n] : by_donor) parts.push_back(fmt::format("{} from {}", n, id));
                   return parts;
                 }(),
                 ", ")));
  return 0;
}

}  // namespace tilewave::cli

namespace tilewave::cli {

// docs/calibration.md "From a published benchmark".
int cmd_calibrate_from_benchmark(const CommonOptions& o, const std::vector<std::string>& results,
                                 const std::string& models_dir, const std::string& from, int seed,
                                 const std::string& predictions, bool fit_scales) {
  GpuModel start = gpu_of(o);
  std::vector<std::string> carried_from;
  if (start.trust == Trust::datasheet) {
    // A datasheet file has no parameters of its own: carried first, by the owner rules.
    const CarryOver c = carry_over(start, gpus_of(o, from, "--from"));
    start = with_carried(start, c);
    carried_from = c.donors;
    // A carried interval is how a GPU carried over missed; once fitted to this GPU's own results the
    // file is no longer that, and its own residuals are timm's, not measured here: it states none.
    start = without_intervals(start);
  }
  std::vector<BenchmarkRun> runs;
  for (const auto& path : results) {
    int missing = 0;
    auto file_runs = read_timm_results(path, models_dir, &missing);
    fmt::print(std::cerr, "{}: {} rows with an export ({} without), {}\n", path, file_runs.size(), missing,
               file_runs.empty() ? "?" : file_runs.front().exec.name());
    runs.insert(runs.end(), file_runs.begin(), file_runs.end());
  }
  // The loops in published results were issued by a host no one measured: --host says whose to assume.
  const auto host = std::make_shared<const HostModel>(host_named(o));
  Progress progress("tilewave calibrate from-benchmark");
  const BenchmarkFit fit = fit_benchmark(start, runs, *host, unsigned(seed), progress.callback(), fit_scales);
  progress.finish();
  if (fit.failed)
    fmt::print(std::cerr, "{} runs could not be analysed and are left out (first: {})\n", fit.failed,
               fit.failures.empty() ? "?" : fit.failures.front());
  fmt::print(std::cerr, "fitted on {} families, {} held out (seed {}); {} evaluations: memory-rate scale {:.3f}, "
                        "main-loop scale {:.3f}\n",
             fit.fit_families.size(), fit.held_out_families.size(), seed, fit.evaluations, fit.scales.memory_rate,
             fit.scales.main_loop);
  write_benchmark_errors(std::cerr, fit.before,
                         fit_scales ? "before the fit (the starting parameters):" : "the GPU file as it is (--no-fit):");
  if (fit_scales) write_benchmark_errors(std::cerr, fit.after, "after the fit:");
  if (!predictions.empty())
    write_output(predictions, [&](std::ostream& os) {
      const std::set<std::string> held(fit.held_out_families.begin(), fit.held_out_families.end());
      for (size_t i = 0; i < runs.size(); ++i)
        os << json_text(json{{"source", std::filesystem::path(runs[i].source).filename().string()},
                   {"model", runs[i].model}, {"family", runs[i].family}, {"kind", runs[i].kind},
                   {"img_size", runs[i].img_size}, {"batch", runs[i].batch},
                   {"subset", held.count(runs[i].family) ? "held-out" : "fit"},
                   {"measured_us", runs[i].measured_us}, {"gmacs", runs[i].gmacs},
                   {"before_us", fit.before_us[i]}, {"after_us", fit.after_us[i]}})
           << "\n";
    });
  if (!fit_scales) return 0;  // judged only: nothing to write
  json held_rows = json::array();
  for (const auto& e : fit.after)
    held_rows.push_back({{"source", std::filesystem::path(e.source).filename().string()}, {"subset", e.subset},
                         {"kind", e.kind}, {"n", e.n}, {"median", e.median}, {"p90", e.p90},
                         {"median_ratio", e.median_ratio}, {"tau", e.tau}, {"tau_gmacs", e.tau_gmacs}});
  std::vector<std::string> files;
  for (const auto& r : results) files.push_back(std::filesystem::path(r).filename().string());
  json origins = json::object();
  const std::string scaled_by = fmt::format("fitted from {} ({} families)", fmt::join(files, ", "),
                                            fit.fit_families.size());
  for (const auto& [k, v] : fit.gpu.params) {
    const bool moved = std::abs(v - start.params.at(k)) > 1e-12;
    if (moved) origins[k] = scaled_by;
    else if (start.param_origin.count(k)) origins[k] = start.param_origin.at(k);
  }
  std::map<std::string, double> values(fit.gpu.params.begin(), fit.gpu.params.end());
  json runtime_sets = json::object();
  for (const auto& [key, set] : fit.gpu.runtime_params) {
    json p = json::object();
    for (const auto& [k, v] : set) p[k] = stored_param(v);
    runtime_sets[key] = {{"params", p}, {"fitted_on", scaled_by}};
  }
  write_calibrated_gpu(fit.gpu, values, "from_benchmark",
                       {{"results", files},
                        {"carried_from", carried_from},
                        {"date", utc_now()},
                        {"seed", seed},
                        {"scales", {{"memory_rate", fit.scales.memory_rate}, {"main_loop", fit.scales.main_loop}}},
                        {"fit_families", fit.fit_families},
                        {"held_out_families", fit.held_out_families},
                        {"runs", runs.size()},
                        {"runs_failed", fit.failed},
                        {"host", host->id},
                        {"errors", held_rows},
                        {"params", origins}},
                       o, Trust::fitted_from_benchmark, runtime_sets.empty() ? json(nullptr) : runtime_sets,
                       /*replace_params=*/true);
  return 0;
}

}  // namespace tilewave::cli
