// docs/calibration.md "From a published benchmark".
#include "tilewave/benchmark_fit.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlopt.hpp>
#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/lowering.h"
#include "tilewave/network_cost.h"
#include "tilewave/text.h"
#include "tilewave/ranking.h"
#include "tilewave/pipeline.h"

namespace tilewave {

namespace {

namespace fs = std::filesystem;

// A whole text file, refused unless it is a regular file of sane size.
std::string read_text(const std::string& path, const char* what, uintmax_t max_bytes) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path, std::string("no such ") + what);
  if (!fs::is_regular_file(st)) throw InputError(path, std::string("not a regular file (a ") + what + " is one)");
  if (fs::file_size(path, ec) > max_bytes)
    throw InputError(path, fmt::format("larger than {} MB: not a {}", max_bytes >> 20, what));
  return read_regular_file(path, std::string("a ") + what, max_bytes);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

double number(const std::string& s, const std::string& where, const char* column) {
  double v = 0;
  if (!parse_number(s, v) || !std::isfinite(v) || v <= 0)
    throw InputError(where, fmt::format("'{}' is not a positive number ({})", s.substr(0, 40), column));
  return v;
}

// A count (a batch, an image size) from 1 to `max`, checked before it is
// converted: a double past int64 has no int64 value (18446744073709551616
// became -2^63, under the range check, issue 32).
int64_t whole_number(const std::string& s, const std::string& where, const char* column, int64_t max) {
  const double v = number(s, where, column);
  if (v > double(max) || v != std::floor(v))
    throw InputError(where, fmt::format("'{}' is not a whole number up to {} ({})", s.substr(0, 40), max, column));
  return int64_t(v);
}

// Memory-system rates: the bandwidth fractions (docs/calibration.md).
bool is_memory_rate(const ParamInfo& p) { return p.scale == ParamScale::sm_limited_rate; }

const ParamInfo& info(const std::string& name) {
  for (const auto& p : param_table())
    if (name == p.name) return p;
  throw std::logic_error("unknown parameter " + name);
}

double scaled_value(const ParamInfo& p, double v, const BenchmarkScales& s) {
  if (is_memory_rate(p)) return std::clamp(v * s.memory_rate, p.fit_min, p.fit_max);
  if (std::string(p.name) == "tc_efficiency") return std::clamp(v * s.main_loop, p.fit_min, p.fit_max);
  return v;
}


}  // namespace

ExecutionConfig timm_results_harness(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  nlohmann::json j = {{"runtime", name.find("-dynamo") != std::string::npos ? "inductor" : "eager"},
                      {"dtype", "fp16"},
                      {"amp", true},
                      {"launch", "loop"}};
  if (name.find("-nchw-") != std::string::npos) j["layout"] = "nchw";
  else if (name.find("-nhwc-") != std::string::npos) j["layout"] = "nhwc";
  else throw InputError(path, "the file name says neither -nchw- nor -nhwc- (timm's benchmark-infer-amp-<layout>-… names)");
  if (name.find("-amp-") == std::string::npos)
    throw InputError(path, "not an AMP results file (timm's benchmark-infer-amp-… names): its precision is unknown");
  return execution_from_json(j, path);
}

std::vector<BenchmarkRun> read_timm_results(const std::string& csv, const std::string& models_dir, int* missing) {
  const ExecutionConfig exec = timm_results_harness(csv);
  // The exports: (model, image size) -> row.
  const std::string manifest = (fs::path(models_dir) / "manifest.jsonl").string();
  std::map<std::pair<std::string, int64_t>, nlohmann::json> exports;
  {
    std::stringstream ss(read_text(manifest, "manifest of exports", 64u << 20));
    std::string line;
    for (int n = 1; std::getline(ss, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const nlohmann::json row = parse_json_text(line, fmt::format("{}:{}", manifest, n));
      if (!row.is_object() || !row.contains("model") || !row["model"].is_string() || !row.contains("img_size") ||
          !row["img_size"].is_number_integer())
        throw InputError(fmt::format("{}:{}", manifest, n), "a row needs 'model' and an integer 'img_size'");
      if (row.value("status", "") != "ok" || !row.contains("file") || !row["file"].is_string()) continue;
      exports[{row["model"].get<std::string>(), row["img_size"].get<int64_t>()}] = row;
    }
  }
  std::stringstream ss(read_text(csv, "results file", 64u << 20));
  std::string line;
  std::getline(ss, line);
  const std::vector<std::string> header = split_csv_line(line);
  auto column = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw InputError(csv, fmt::format("no column '{}' (timm's results format)", name));
    return size_t(it - header.begin());
  };
  const size_t c_model = column("model"), c_img = column("infer_img_size"), c_step = column("infer_step_time"),
               c_batch = column("infer_batch_size"), c_gmacs = column("infer_gmacs");
  std::vector<BenchmarkRun> runs;
  int absent = 0;
  for (int n = 2; std::getline(ss, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", csv, n);
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw InputError(where, fmt::format("{} cells where the header has {}", cells.size(), header.size()));
    BenchmarkRun r;
    r.source = csv;
    r.model = cells[c_model];
    r.img_size = whole_number(cells[c_img], where, "infer_img_size", 1 << 16);
    r.batch = whole_number(cells[c_batch], where, "infer_batch_size", 1 << 20);
    // In ms: 1e308 is finite, 1000 times it is not (found by adversarial_ops, issue 32).
    r.measured_us = measured_time_us(1000.0 * number(cells[c_step], where, "infer_step_time"), where, "infer_step_time");
    r.gmacs = cells[c_gmacs].empty() ? 0 : number(cells[c_gmacs], where, "infer_gmacs");  // some rows have none
    const auto e = exports.find({r.model, r.img_size});
    if (e == exports.end()) {
      ++absent;
      continue;
    }
    r.family = e->second.value("family", r.model);
    r.kind = e->second.value("kind", "cnn");
    r.onnx = (fs::path(models_dir) / e->second["file"].get<std::string>()).string();
    r.exec = exec;
    runs.push_back(std::move(r));
  }
  if (missing) *missing = absent;
  return runs;
}

// A GPU file's CostModel per execution configuration (gpu_for applies its
// runtime sets), each built once.
class CostsByConfig {
 public:
  explicit CostsByConfig(const GpuModel& gpu) : gpu_(gpu) {}
  const CostModel& of(const ExecutionConfig& exec) {
    const std::string key = exec.name();
    auto c = costs_.find(key);
    if (c == costs_.end()) {
      const GpuModel& specialised = gpus_.emplace(key, gpu_for(gpu_, exec)).first->second;
      c = costs_.emplace(key, CostModel(specialised)).first;
    }
    return c->second;
  }

 private:
  const GpuModel& gpu_;
  std::map<std::string, GpuModel> gpus_;  // the CostModels hold references into these nodes
  std::map<std::string, CostModel> costs_;
};

GpuModel with_scales(const GpuModel& start, const BenchmarkScales& s) {
  GpuModel g = start;
  for (auto& [k, v] : g.params) v = scaled_value(info(k), v, s);
  for (auto& [key, set] : g.runtime_params)
    for (auto& [k, v] : set) v = scaled_value(info(k), v, s);
  return g;
}

std::vector<BenchmarkError> benchmark_errors(const std::vector<BenchmarkRun>& runs, const std::vector<double>& pred_us,
                                             const std::vector<std::string>& families, const std::string& subset) {
  const std::set<std::string> in(families.begin(), families.end());
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!in.count(runs[i].family) || !(pred_us[i] > 0)) continue;
    groups[{runs[i].source, runs[i].kind}].push_back(i);
    groups[{runs[i].source, "all"}].push_back(i);
  }
  std::vector<BenchmarkError> out;
  for (const auto& [key, idx] : groups) {
    BenchmarkError e;
    e.source = key.first;
    e.kind = key.second;
    e.subset = subset;
    e.n = int(idx.size());
    std::vector<double> err, ratio, pred, meas, gmacs, meas_with_gmacs;
    for (size_t i : idx) {
      const double r = pred_us[i] / runs[i].measured_us;
      ratio.push_back(r);
      err.push_back(std::abs(r - 1));
      // Per image, so that models timed at different batches compare.
      pred.push_back(pred_us[i] / double(runs[i].batch));
      meas.push_back(runs[i].measured_us / double(runs[i].batch));
      if (runs[i].gmacs > 0) {
        gmacs.push_back(runs[i].gmacs);
        meas_with_gmacs.push_back(meas.back());
      }
    }
    e.median = quantile(err, 0.5);
    e.p90 = quantile(err, 0.9);
    e.median_ratio = quantile(ratio, 0.5);
    e.tau = kendall_tau(pred, meas);
    e.tau_gmacs = kendall_tau(gmacs, meas_with_gmacs);  // over the rows that give MACs
    out.push_back(e);
  }
  return out;
}

BenchmarkFit fit_benchmark(const GpuModel& start, const std::vector<BenchmarkRun>& runs, const HostModel& host,
                           unsigned seed, const ProgressFn& progress, bool fit_scales) {
  if (runs.empty()) throw InputError("from-benchmark", "no results row has an exported model to analyse");
  BenchmarkFit fit;
  // Half of the families fit, by seed; the other half only judge.
  std::vector<std::string> families;
  for (const auto& r : runs)
    if (std::find(families.begin(), families.end(), r.family) == families.end()) families.push_back(r.family);
  std::sort(families.begin(), families.end());
  std::mt19937 rng(seed);
  std::shuffle(families.begin(), families.end(), rng);
  const size_t half = (families.size() + 1) / 2;
  fit.fit_families.assign(families.begin(), families.begin() + long(half));
  fit.held_out_families.assign(families.begin() + long(half), families.end());
  const std::set<std::string> fitting(fit.fit_families.begin(), fit.fit_families.end());

  // Lowering depends on no parameter but the layout pass's choices, made on the start's costs: once per run,
  // with the start specialised once per execution configuration.
  std::vector<std::optional<KernelGraph>> lowered(runs.size());
  CostsByConfig start_costs(start);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (progress) progress(i, runs.size(), "lowering runs");
    try {
      LoadOptions lo;
      lo.batch = runs[i].batch;
      const Model m = load_onnx(runs[i].onnx, lo);
      lowered[i] = lower_model(m, runs[i].exec, &start_costs.of(runs[i].exec));
      for (const auto& k : lowered[i]->kernels)
        if (!k.layer && k.compute) throw InputError(runs[i].onnx, "unmodelled compute kernel " + k.name);
    } catch (const InputError& e) {
      lowered[i].reset();
      ++fit.failed;
      if (fit.failures.size() < 5) fit.failures.push_back(runs[i].model + ": " + e.what());
    }
  }
  if (progress) progress(runs.size(), runs.size(), "lowering runs");
  // Every run's prediction under `g`, specialised once per execution
  // configuration, not once per run.
  auto predict_all = [&](const GpuModel& g, const std::vector<size_t>& which) {
    CostsByConfig costs(g);
    std::vector<double> out(runs.size(), 0.0);
    for (size_t i : which) {
      if (!lowered[i]) continue;
      out[i] = cost_network(*lowered[i], costs.of(runs[i].exec), nullptr, runs[i].onnx,
                            StepModel{runs[i].exec.launch, &host})
                   .time_us;
    }
    return out;
  };
  std::vector<size_t> train, all(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    all[i] = i;
    if (lowered[i] && fitting.count(runs[i].family)) train.push_back(i);
  }
  if (train.empty()) throw InputError("from-benchmark", "no run of the fit families could be analysed");

  struct Objective {
    std::function<double(const std::vector<double>&)> loss;
    const ProgressFn* progress;
    int evaluations = 0;
  };
  Objective obj{[&](const std::vector<double>& x) {
    const std::vector<double> pred = predict_all(with_scales(start, {x[0], x[1]}), train);
    double sum = 0;
    for (size_t i : train) sum += robust_loss(pred[i], runs[i].measured_us);
    return sum / double(train.size());
  }, &progress};
  std::vector<double> x = {1.0, 1.0};
  static constexpr uint64_t kMaxEvaluations = 200;
  nlopt::opt opt(nlopt::LN_NELDERMEAD, 2);
  opt.set_lower_bounds({0.25, 0.25});
  opt.set_upper_bounds({4.0, 4.0});
  opt.set_min_objective([](const std::vector<double>& v, std::vector<double>&, void* d) {
    auto* o = static_cast<Objective*>(d);
    ++o->evaluations;
    if (*o->progress) (*o->progress)(uint64_t(o->evaluations), kMaxEvaluations, "fit evaluations (at most)");
    return o->loss(v);
  }, &obj);
  opt.set_xtol_rel(1e-3);
  opt.set_maxeval(int(kMaxEvaluations));
  double value = 0;
  try {
    if (fit_scales) opt.optimize(x, value);
  } catch (const std::exception&) {
    // NLopt signals round-off limits as exceptions; its last point stands.
  }
  fit.evaluations = obj.evaluations;
  fit.scales = {x[0], x[1]};
  fit.gpu = with_scales(start, fit.scales);
  fit.before_us = predict_all(start, all);
  fit.after_us = predict_all(fit.gpu, all);
  for (const auto* subset : {&fit.fit_families, &fit.held_out_families}) {
    const std::string name = subset == &fit.fit_families ? "fit" : "held-out";
    for (auto& e : benchmark_errors(runs, fit.before_us, *subset, name)) fit.before.push_back(e);
    for (auto& e : benchmark_errors(runs, fit.after_us, *subset, name)) fit.after.push_back(e);
  }
  return fit;
}

}  // namespace tilewave
