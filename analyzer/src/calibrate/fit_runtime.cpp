// Fitting a runtime's parameter set to networks as users run them
// (docs/calibration.md "Runtimes").
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"

namespace tilewave {

std::vector<NetworkRun> read_network_runs(const std::string& path, const std::string& models_dir,
                                          const std::string& runtime, std::vector<std::string>* skipped) {
  std::ifstream f(path);
  if (!f) throw InputError(path, "cannot open network measurements");
  std::vector<NetworkRun> out;
  std::string text;
  for (int line = 1; std::getline(f, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", path, line);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
      throw InputError(where, "not valid JSON");
    }
    if (!j.is_object()) throw InputError(where, "not a JSON object");
    if (j.value("header", false) || j.value("status", std::string()) != "ok") continue;
    if (!runtime.empty() && j.value("runtime", std::string()) != runtime) continue;
    const auto num = [&](const char* k) { return j.contains(k) && j[k].is_number(); };
    if (!j.contains("model") || !j["model"].is_string() || !num("batch") || !num("latency_ms"))
      throw InputError(where, "needs model (a string), batch and latency_ms (numbers)");
    const double ms = j["latency_ms"].get<double>();
    const int64_t batch = j["batch"].get<int64_t>();
    if (!(ms > 0) || batch <= 0) throw InputError(where, "latency_ms and batch must be positive");
    std::string stem = j["model"].get<std::string>();
    std::replace(stem.begin(), stem.end(), '/', '_');
    const std::string onnx = (std::filesystem::path(models_dir) / (stem + ".onnx")).string();
    if (!std::filesystem::exists(onnx)) {
      if (skipped) skipped->push_back(fmt::format("{} (no {})", j["model"].get<std::string>(), onnx));
      continue;
    }
    LoadOptions lo;
    lo.batch = batch;
    int kernels = -1;
    for (const char* k : {"kernels", "kernels_per_forward"})
      if (num(k)) kernels = j[k].get<int>();
    out.push_back({j["model"].get<std::string>(), load_onnx(onnx, lo), ms * 1e3, kernels});
  }
  if (out.empty()) throw InputError(path, fmt::format("no usable network measurements{}",
                                                      runtime.empty() ? "" : " for runtime " + runtime));
  return out;
}

RuntimeFit fit_runtime(const GpuModel& gpu, const RuntimeProfile& runtime, const std::vector<NetworkRun>& runs,
                       const std::vector<std::string>& params) {
  for (const auto& p : params)
    if (!gpu.params.count(p)) throw InputError("--params", fmt::format("unknown model parameter '{}'", p));
  const GpuModel start = gpu.for_runtime(runtime.name());
  AnalyzeOptions opt;
  opt.runtime = &runtime;
  std::vector<size_t> all(runs.size());
  std::vector<double> measured;
  for (size_t i = 0; i < runs.size(); ++i) {
    all[i] = i;
    measured.push_back(runs[i].measured_us);
  }
  const PredictFn predict = [&](const GpuModel& g, size_t i) {
    return analyze_model(runs[i].model, g, opt).total.time_us;
  };
  auto median_errors = [&](const GpuModel& g) {
    std::map<int64_t, std::vector<double>> by_batch;
    for (size_t i : all) by_batch[runs[i].model.batch].push_back(std::abs(predict(g, i) / measured[i] - 1));
    std::map<int64_t, double> out;
    for (auto& [b, e] : by_batch) out[b] = quantile(e, 0.5);
    return out;
  };
  RuntimeFit r;
  const auto before = median_errors(start);
  r.fit = fit_named(start, params, all, predict, measured);
  GpuModel after = start;
  for (const auto& [k, v] : r.fit.params) after.params[k] = v;
  const auto now = median_errors(after);
  for (const auto& [b, e] : before) r.median_error_by_batch[b] = {e, now.at(b)};
  return r;
}

}  // namespace tilewave
