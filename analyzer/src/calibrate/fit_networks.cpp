// Fitting the network-scope terms (L2 reuse, launch gap) to whole networks
// (docs/model.md "Inside a network").
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"
#include "tilewave/pipeline.h"

namespace tilewave {

std::vector<KernelInNetwork> read_kernel_times(const std::string& path, const std::vector<NetworkRun>& runs) {
  std::vector<KernelInNetwork> out;
  for_each_json_line(path, "kernel times", [&](const nlohmann::json& j, const std::string& where) {
    if (!j.contains("model") || !j.contains("batch") || !j.contains("node") || !j.contains("measured_us") ||
        !j["model"].is_string() || !j["batch"].is_number() || !j["node"].is_string() || !j["measured_us"].is_number())
      throw InputError(where, "needs model, batch, node and measured_us");
    for (size_t r = 0; r < runs.size(); ++r)
      if (runs[r].name == j["model"].get<std::string>() && runs[r].model.batch == j["batch"].get<int64_t>())
        out.push_back({r, j["node"].get<std::string>(), measured_time_us(j["measured_us"].get<double>(), where,
                                                                         "measured_us")});
  });
  return out;
}

NetworkFit fit_networks(const GpuModel& start, const RuntimeProfile& runtime, const std::vector<NetworkRun>& nets,
                        const std::vector<KernelInNetwork>& kernels, const NetworkFitOptions& options,
                        const ProgressFn& progress) {
  NetworkFit r;
  GpuModel gpu = start;
  // Hold out whole networks (every batch of a model), so the held-out ones
  // are architectures the fit never saw.
  std::vector<std::string> names;
  for (const auto& n : nets)
    if (std::find(names.begin(), names.end(), n.name) == names.end()) names.push_back(n.name);
  const Split by_name = holdout_split(names.size(), options.holdout, options.seed);
  for (size_t i : by_name.test) r.held_out.insert(names[i]);
  r.networks_fitted = names.size() - r.held_out.size();
  AnalyzeOptions opt;
  opt.exec = cuda_graph_harness(runtime, DType::fp16);  // the harness the network sets were timed with
  opt.parts = kTotalsOnly;  // the fits read the totals and each kernel's time
  // The kernels each run lowers to, the layout pass choosing on the start's costs; the fit keeps them.
  std::vector<std::set<std::string>> kernel_names(nets.size());
  std::vector<int> kernel_count(nets.size());
  const ExecutionConfig harness = cuda_graph_harness(runtime, opt.exec.dtype);
  const GpuModel start_gpu = gpu_for(start, harness);
  const CostModel start_costs(start_gpu);
  for (size_t i = 0; i < nets.size(); ++i) {
    if (progress) progress(i, nets.size(), "lowering runs");
    const Model& m = nets[i].model;
    for (const auto& k : lower_model(m, harness, &start_costs).kernels) {
      kernel_names[i].insert(k.name);
      ++kernel_count[i];
    }
  }
  for (const auto& k : kernels)
    if (!kernel_names[k.run].count(k.node))
      throw InputError(options.kernel_times_path, fmt::format("no kernel '{}' in {}", k.node, nets[k.run].name));
  std::vector<size_t> train, test;
  std::vector<double> measured;
  // Network-scope terms describe kernels running back to back; a run whose
  // kernels the lowering does not match (framework-inserted copies, unfolded
  // norms) says nothing about them, so it is left out of the fit.
  for (size_t i = 0; i < nets.size(); ++i) {
    measured.push_back(nets[i].measured_us);
    if (r.held_out.count(nets[i].name)) {
      test.push_back(i);
      continue;
    }
    const int predicted = kernel_count[i], counted = nets[i].measured_kernels;
    if (counted > 0 && std::abs(predicted - counted) > options.kernel_match * counted) {
      r.mismatched.push_back(
          fmt::format("{}@{} ({} vs {} kernels)", nets[i].name, nets[i].model.batch, predicted, counted));
      continue;
    }
    train.push_back(i);
  }
  r.runs_fitted = train.size();
  const PredictFn predict = [&](const CostModel& m, size_t i) {
    return analyze_model(nets[i].model, m.gpu, opt).total.time_us;
  };
  auto errors = [&](const char* stage, const GpuModel& g) {
    const CostModel model(g);
    for (const auto* subset : {&train, &test}) {
      std::map<int64_t, std::vector<double>> by_batch;
      for (size_t i : *subset)
        by_batch[nets[i].model.batch].push_back(std::abs(predict(model, i) / nets[i].measured_us - 1));
      for (auto& [b, e] : by_batch)
        r.errors.push_back({stage, subset == &train ? "fitted" : "held-out", b, int(e.size()), quantile(e, 0.5)});
    }
  };
  errors("before", gpu);
  std::vector<ParamScope> on_totals = {ParamScope::network_kernel, ParamScope::network};
  if (!kernels.empty()) {
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
    const PredictFn predict_kernel = [&](const CostModel& m, size_t k) {
      const GpuModel& g = m.gpu;
      const std::vector<double> key = {g.param("l2_bw_factor"), g.param("l2_reuse_fraction")};
      auto& [cached_key, by_node] = cache[kernels[k].run];
      if (cached_key != key) {
        by_node.clear();
        for (const auto& res : analyze_model(nets[kernels[k].run].model, g, opt).kernels)
          if (res.cost) by_node[res.kernel.name] = res.cost->time_us;  // device time
        cached_key = key;
      }
      return by_node.at(kernels[k].node);  // checked above
    };
    r.kernels_fitted = kernel_train.size();
    r.kernel_stage = fit_scope(gpu, {ParamScope::network_kernel}, kernel_train, predict_kernel, kernel_measured,
                               prefixed(progress, "kernel terms"));
    for (const auto& [k, v] : r.kernel_stage->params) gpu.params[k] = r.params[k] = v;
    on_totals = {ParamScope::network};
  }
  r.totals = fit_scope(gpu, on_totals, train, predict, measured, prefixed(progress, "network terms"));
  for (const auto& [k, v] : r.totals.params) gpu.params[k] = r.params[k] = v;
  errors("after", gpu);
  return r;
}

}  // namespace tilewave
