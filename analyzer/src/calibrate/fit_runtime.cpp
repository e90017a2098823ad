// Fitting a runtime's parameter set to networks as users run them
// (docs/calibration.md "Runtimes").
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/network_cost.h"
#include "tilewave/pipeline.h"

namespace tilewave {

void for_each_json_line(const std::string& path, const char* what,
                        const std::function<void(const nlohmann::json&, const std::string&)>& fn) {
  require_regular_file(path, fmt::format("a {}", what));
  std::ifstream f(path);
  if (!f) throw InputError(path, fmt::format("cannot open {}", what));
  std::string text;
  for (int line = 1; std::getline(f, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, line);
    const nlohmann::json j = parse_json_text(text, where);
    if (!j.is_object()) throw InputError(where, "not a JSON object");
    try {
      fn(j, where);
    } catch (const nlohmann::json::exception& e) {  // a field of another type than the measurement's
      throw InputError(where, fmt::format("a field has the wrong type ({})", e.what()));
    }
  }
}

std::vector<NetworkRun> read_network_runs(const std::string& path, const std::string& models_dir,
                                          const std::string& runtime, std::vector<std::string>* skipped) {
  std::vector<NetworkRun> out;
  for_each_json_line(path, "network measurements", [&](const nlohmann::json& j, const std::string& where) {
    if (j.value("header", false) || j.value("status", std::string()) != "ok") return;
    if (!runtime.empty() && j.value("runtime", std::string()) != runtime) return;
    const auto num = [&](const char* k) { return j.contains(k) && j[k].is_number(); };
    if (!j.contains("model") || !j["model"].is_string() || !num("batch") || !num("latency_ms"))
      throw InputError(where, "needs model (a string), batch and latency_ms (numbers)");
    const double ms = measured_time_us(j["latency_ms"].get<double>() * 1e3, where, "latency_ms") / 1e3;
    const double batch_value = j["batch"].get<double>();
    if (!(batch_value >= 1 && batch_value <= (1 << 24)) || batch_value != std::floor(batch_value))
      throw InputError(where, "batch must be a positive whole number");
    const int64_t batch = int64_t(batch_value);
    std::string stem = j["model"].get<std::string>();
    std::replace(stem.begin(), stem.end(), '/', '_');
    const std::string onnx = (std::filesystem::path(models_dir) / (stem + ".onnx")).string();
    std::error_code missing;
    if (!std::filesystem::exists(onnx, missing)) {
      if (skipped) skipped->push_back(fmt::format("{} (no {})", j["model"].get<std::string>(), onnx));
      return;
    }
    LoadOptions lo;
    lo.batch = batch;
    int kernels = -1;
    for (const char* k : {"kernels", "kernels_per_forward"})
      if (num(k)) kernels = j[k].get<int>();
    out.push_back({j["model"].get<std::string>(), j.value("runtime", std::string()), load_onnx(onnx, lo), ms * 1e3,
                   kernels});
  });
  if (out.empty()) throw InputError(path, fmt::format("no usable network measurements{}",
                                                      runtime.empty() ? "" : " for runtime " + runtime));
  return out;
}

std::string runtime_class(const Layer& layer) {
  const KernelClass c = kernel_class(layer);
  return is_library(c) ? "library" : kernel_class_name(c);
}

std::vector<ClassTime> read_class_times(const std::string& path, const std::vector<NetworkRun>& runs) {
  std::map<std::tuple<std::string, int64_t, std::string>, ClassTime> latest;
  for_each_json_line(path, "class times", [&](const nlohmann::json& j, const std::string& where) {
    if (!j.contains("model") || !j.contains("batch") || !j.contains("class") || !j.contains("measured_us") ||
        !j["measured_us"].is_number() || !j["batch"].is_number() || !j["model"].is_string() || !j["class"].is_string())
      throw InputError(where, "needs model, batch, class and measured_us");
    for (size_t r = 0; r < runs.size(); ++r)
      if (runs[r].name == j["model"].get<std::string>() && runs[r].model.batch == j["batch"].get<int64_t>() &&
          j.value("runtime", std::string()) == runs[r].runtime)
        latest[{runs[r].name, runs[r].model.batch, j["class"].get<std::string>()}] =
            ClassTime{r, j["class"].get<std::string>(),
                      measured_time_us(j["measured_us"].get<double>(), where, "measured_us"), j.value("kernels", 0)};
  });
  std::vector<ClassTime> out;
  for (auto& [key, c] : latest) out.push_back(c);
  return out;
}

namespace {

constexpr double kClassCountMatch = 0.25;
constexpr double kNetworkCountMatch = 0.10;

// The parameters each kernel class's time is fitted with (docs/calibration.md
// "Runtimes"); fixed_us_memory goes with the commonest memory class.
const std::vector<std::pair<std::string, std::vector<std::string>>>& class_params() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> table = {
      {"library", {"tc_efficiency", "fixed_us_gemm", "fixed_us_direct"}},
      {"eltwise", {"eltwise_bw_efficiency", "fixed_us_memory"}},
      {"fused", {"fused_bw_efficiency", "fixed_us_memory"}},
      {"norm", {"norm_bw_efficiency", "norm_max_bw_efficiency", "fixed_us_norm_extra"}},
      {"copy", {"copy_bw_efficiency"}},
      {"pool", {"pool_bw_efficiency", "fixed_us_pool"}},
      {"reduce", {"reduce_bw_efficiency", "fixed_us_reduce_extra"}},
      {"softmax", {"softmax_bw_efficiency"}},
      {"transform", {"transform_bw_efficiency", "fixed_us_transform"}},
  };
  return table;
}

}  // namespace

RuntimeFit fit_runtime(const GpuModel& gpu, const RuntimeProfile& runtime, const std::vector<NetworkRun>& runs,
                       const std::vector<ClassTime>& class_times, const std::vector<std::string>& network_params,
                       const ProgressFn& progress) {
  for (const auto& p : network_params)
    if (!gpu.params.count(p)) throw InputError("--params", fmt::format("unknown model parameter '{}'", p));
  // From the base set, whatever set the file holds for this runtime now, so a
  // refit reproduces itself.
  GpuModel base = gpu;
  base.runtime_params.erase(runtime.name());
  GpuModel current = base.for_runtime(runtime.name());
  AnalyzeOptions opt;
  opt.exec = cuda_graph_harness(runtime, DType::fp16);  // the harness the network sets were timed with
  std::vector<size_t> all(runs.size());
  std::vector<double> measured;
  for (size_t i = 0; i < runs.size(); ++i) {
    all[i] = i;
    measured.push_back(runs[i].measured_us);
  }
  // Lowering depends on no parameter but the layout pass's choices, made on the start's costs: once per run.
  std::vector<KernelGraph> lowered;
  const ExecutionConfig harness = cuda_graph_harness(runtime, opt.exec.dtype);
  const GpuModel start_gpu = gpu_for(current, harness);
  const CostModel start_costs(start_gpu);
  for (const auto& run : runs) {
    if (progress) progress(lowered.size(), runs.size(), "lowering runs");
    lowered.push_back(lower_model(run.model, harness, &start_costs));
  }
  const PredictFn predict = [&](const CostModel& m, size_t i) { return cost_network(lowered[i], m).time_us; };
  auto median_errors = [&](const GpuModel& g) {
    const CostModel model(g);
    std::map<int64_t, std::vector<double>> by_batch;
    for (size_t i : all) by_batch[runs[i].model.batch].push_back(std::abs(predict(model, i) / measured[i] - 1));
    std::map<int64_t, double> out;
    for (auto& [b, e] : by_batch) out[b] = quantile(e, 0.5);
    return out;
  };
  RuntimeFit r;
  const auto before = median_errors(current);
  for (const auto& class_entry : class_params()) {
    const std::string& cls = class_entry.first;  // named, not bound: lambdas below capture it
    const auto& params = class_entry.second;
    std::vector<size_t> items;
    std::vector<double> class_measured;
    for (size_t k = 0; k < class_times.size(); ++k) {
      class_measured.push_back(class_times[k].measured_us);
      const ClassTime& c = class_times[k];
      if (c.kernel_class != cls || c.measured_us < 5.0) continue;
      // A class whose kernels the lowering does not match (engine choices
      // that add kernels) says nothing about its bandwidth: left out.
      int predicted = 0;
      for (const auto& kernel : lowered[c.run].kernels)
        predicted += kernel.layer && runtime_class(*kernel.layer) == cls;
      if (std::abs(predicted - c.kernels) <= kClassCountMatch * c.kernels) items.push_back(k);
    }
    if (items.size() < 2 * params.size() + 2) continue;  // too few runs use this class to fit it
    const PredictFn predict_class = [&](const CostModel& m, size_t k) {
      const size_t run = class_times[k].run;
      const std::vector<double> device = kernel_device_times_us(lowered[run], m);
      double sum = 0;
      for (size_t i = 0; i < device.size(); ++i)
        if (lowered[run].kernels[i].layer && runtime_class(*lowered[run].kernels[i].layer) == cls) sum += device[i];
      return std::max(sum, 1e-3);
    };
    const FitResult f = fit_named(current, params, items, predict_class, class_measured,
                                  prefixed(progress, "class " + cls));
    for (const auto& [k, v] : f.params) current.params[k] = r.fit.params[k] = v;
    r.class_loss[cls] = f.train_loss;
    r.fit.evaluations += f.evaluations;
  }
  if (!network_params.empty()) {
    // Whole-network terms describe kernels running back to back; a run whose
    // kernel count the lowering misses by more than kNetworkCountMatch says
    // nothing about them.
    std::vector<size_t> matched;
    for (size_t i : all) {
      int predicted = 0;
      for (const auto& k : lowered[i].kernels) predicted += k.layer ? 1 : 0;
      const int counted = runs[i].measured_kernels;
      if (counted <= 0 || std::abs(predicted - counted) <= kNetworkCountMatch * counted) matched.push_back(i);
    }
    r.network_runs_fitted = matched.size();
    const FitResult f = fit_named(current, network_params, matched, predict, measured,
                                  prefixed(progress, "network terms"));
    for (const auto& [k, v] : f.params) current.params[k] = r.fit.params[k] = v;
    r.fit.train_loss = f.train_loss;
    r.fit.evaluations += f.evaluations;
  }
  const auto now = median_errors(current);
  for (const auto& [b, e] : before) r.median_error_by_batch[b] = {e, now.at(b)};
  return r;
}

}  // namespace tilewave
