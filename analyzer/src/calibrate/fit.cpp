#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <nlopt.hpp>

#include "tilewave/calibration.h"
#include "tilewave/error.h"
#include "tilewave/kernel_cost.h"

namespace tilewave {

std::string op_class(const Layer& layer) { return kernel_class_name(kernel_class(layer)); }

double measured_time_us(double us, const std::string& where, const char* field) {
  constexpr double kMinUs = 1e-3, kMaxUs = 86400e6;
  if (!std::isfinite(us) || us <= 0)
    throw InputError(where, fmt::format("'{}' must be a positive time, got {:g}", field, us));
  if (us < kMinUs || us > kMaxUs)
    throw InputError(where, fmt::format("'{}' is {:g} us: below a timer's 1 ns or above a day, not a measurement",
                                        field, us));
  return us;
}

std::vector<Measurement> read_measurements(const std::string& path) {
  std::vector<Measurement> out;
  for (auto& e : read_layer_set(path)) {
    const auto status = e.object.find("status");
    if (status != e.object.end() && *status != "ok") continue;  // absent means ok; anything but "ok" is not
    if (!e.object.contains("measured_us") || !e.object["measured_us"].is_number())
      throw InputError(fmt::format("{}:{}", path, e.line), "no numeric 'measured_us'");
    const double us = measured_time_us(e.object["measured_us"].get<double>(), fmt::format("{}:{}", path, e.line),
                                       "measured_us");
    Measurement m;
    m.op_class = op_class(e.layer);
    m.measured_us = us;
    m.entry = std::move(e);
    out.push_back(std::move(m));
  }
  if (out.empty()) throw InputError(path, "no measured layers with status ok");
  return out;
}

Split holdout_split(size_t n, double holdout, unsigned seed) {
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  const size_t n_test = size_t(std::llround(holdout * double(n)));
  Split s;
  s.test.assign(idx.begin(), idx.begin() + n_test);
  s.train.assign(idx.begin() + n_test, idx.end());
  std::sort(s.test.begin(), s.test.end());
  std::sort(s.train.begin(), s.train.end());
  return s;
}

namespace {
constexpr double kRobustScale = 0.1;
}  // namespace

// Soft-L1 on the log ratio: quadratic near zero, linear beyond ~10%, so a few
// items the model cannot explain do not drag every parameter towards them
// (docs/calibration.md).
double robust_loss(double predicted, double measured) {
  const double r = std::log(predicted / measured) / kRobustScale;
  return 2.0 * (std::sqrt(1.0 + r * r) - 1.0);
}

namespace {

// The mean loss over the training items as a function of the free parameters.
struct Objective {
  GpuModel gpu;
  std::vector<std::string> names;
  const std::vector<size_t>* train;
  const PredictFn* predict;
  const std::vector<double>* measured;
  int evaluations = 0;

  double operator()(const std::vector<double>& x) {
    ++evaluations;
    for (size_t i = 0; i < names.size(); ++i) gpu.params[names[i]] = x[i];
    const CostModel model(gpu);
    double sum = 0;
    for (size_t i : *train) sum += robust_loss((*predict)(model, i), (*measured)[i]);
    return sum / double(train->size());
  }
};

double nlopt_objective(const std::vector<double>& x, std::vector<double>&, void* data) {
  return (*static_cast<Objective*>(data))(x);
}

}  // namespace

FitResult fit_scope(const GpuModel& start, const std::vector<ParamScope>& scopes, const std::vector<size_t>& train,
                    const PredictFn& predict, const std::vector<double>& measured, const ProgressFn& progress) {
  std::vector<std::string> names;
  for (const auto& p : param_table())
    if (p.fit_min < p.fit_max && std::find(scopes.begin(), scopes.end(), p.scope) != scopes.end())
      names.push_back(p.name);
  return fit_named(start, names, train, predict, measured, progress);
}

FitResult fit_named(const GpuModel& start, const std::vector<std::string>& names, const std::vector<size_t>& train,
                    const PredictFn& predict, const std::vector<double>& measured, const ProgressFn& progress) {
  if (train.empty()) throw InputError("calibrate fit", "nothing to fit");
  Objective obj{start, {}, &train, &predict, &measured, 0};
  std::vector<double> x, lo, hi;
  for (const auto& p : param_table()) {
    if (p.fit_min >= p.fit_max || std::find(names.begin(), names.end(), p.name) == names.end()) continue;
    obj.names.push_back(p.name);
    lo.push_back(p.fit_min);
    hi.push_back(p.fit_max);
    x.push_back(std::clamp(start.param(p.name), p.fit_min, p.fit_max));
  }
  // BOBYQA: derivative-free, bound-constrained, fast on smooth few-parameter
  // problems; the max() and tile choice make ours piecewise smooth, so a
  // Nelder-Mead polish follows from BOBYQA's point. The loss has more than
  // one basin (an unused L2 term is as good as none), so the search also
  // starts from a few seeded random points and keeps the best end point.
  auto local_search = [&](std::vector<double> start_x) {
    double value = obj(start_x);
    for (auto algorithm : {nlopt::LN_BOBYQA, nlopt::LN_NELDERMEAD}) {
      nlopt::opt opt(algorithm, unsigned(start_x.size()));
      opt.set_lower_bounds(lo);
      opt.set_upper_bounds(hi);
      opt.set_min_objective(nlopt_objective, &obj);
      opt.set_xtol_rel(1e-4);
      opt.set_maxeval(3000);
      std::vector<double> trial = start_x;
      double v = value;
      try {
        opt.optimize(trial, v);
      } catch (const std::exception&) {
        // NLopt signals round-off limits as exceptions; its last point stands.
        v = obj(trial);
      }
      if (v < value) {
        value = v;
        start_x = trial;
      }
    }
    return std::make_pair(value, start_x);
  };
  const int restarts = x.size() <= 4 ? 8 : 2;
  const uint64_t searches = uint64_t(restarts) + 1;
  if (progress) progress(0, searches, "searches");
  auto [best, best_x] = local_search(x);
  if (progress) progress(1, searches, "searches");
  std::mt19937 rng(12345);
  for (int r = 0; r < restarts; ++r) {
    std::vector<double> start_x(x.size());
    for (size_t i = 0; i < x.size(); ++i) start_x[i] = std::uniform_real_distribution<double>(lo[i], hi[i])(rng);
    auto [value, end_x] = local_search(start_x);
    if (value < best) {
      best = value;
      best_x = end_x;
    }
    if (progress) progress(uint64_t(r) + 2, searches, "searches");
  }
  x = best_x;
  FitResult r;
  for (size_t i = 0; i < x.size(); ++i) r.params[obj.names[i]] = x[i];
  r.train_loss = best;
  r.evaluations = obj.evaluations;
  return r;
}

FitResult fit_parameters(const GpuModel& start, const std::vector<Measurement>& data,
                         const std::vector<size_t>& train, const ProgressFn& progress) {
  std::vector<double> measured;
  for (const auto& m : data) measured.push_back(m.measured_us);
  const PredictFn predict = [&](const CostModel& m, size_t i) { return cost_layer(data[i].entry.layer, m).time_us; };
  return fit_scope(start, {ParamScope::layer}, train, predict, measured, progress);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = 0.5 * double(i + j);  // ties share the mean rank
    i = j + 1;
  }
  return r;
}


ErrorStats stats_of(const std::string& group, const std::vector<double>& pred, const std::vector<double>& meas) {
  ErrorStats s;
  s.group = group;
  s.n = int(pred.size());
  std::vector<double> ape, logr;
  int within = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    const double e = std::abs(pred[i] - meas[i]) / meas[i];
    ape.push_back(e);
    logr.push_back(std::log(pred[i] / meas[i]));
    within += e <= 0.25;
  }
  s.median_ape = quantile(ape, 0.5);
  s.p90_ape = quantile(ape, 0.9);
  s.within_25 = s.n ? double(within) / s.n : 0;
  s.spearman = spearman(pred, meas);
  s.median_log_ratio = quantile(logr, 0.5);
  return s;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2) return 0;
  const auto ra = ranks(a), rb = ranks(b);
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / ra.size();
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / rb.size();
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 0;
}

std::vector<ErrorStats> error_stats(const GpuModel& gpu, const std::vector<Measurement>& data,
                                    const std::vector<size_t>& subset) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  std::vector<double> all_pred, all_meas;
  for (size_t i : subset) {
    const auto& m = data[i];
    const double pred = cost_layer(m.entry.layer, gpu).time_us;
    auto& g = groups[m.op_class];
    g.first.push_back(pred);
    g.second.push_back(m.measured_us);
    all_pred.push_back(pred);
    all_meas.push_back(m.measured_us);
  }
  std::vector<ErrorStats> out;
  for (const auto& [name, g] : groups) out.push_back(stats_of(name, g.first, g.second));
  out.push_back(stats_of("all", all_pred, all_meas));
  return out;
}

}  // namespace tilewave
