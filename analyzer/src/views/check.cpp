// `tilewave check --trace` (docs/report.md): the pairing of trace_check.h
// shown at 80 columns, or as JSON with every pair.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "tilewave/error.h"
#include "tilewave/exec_options.h"
#include "tilewave/json_input.h"
#include "format.h"
#include "tilewave/report.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave {

namespace {

// The CLI flag that sets a trace's setting, as the option table spells it
// (the Python keywords are the JSON's option and value).
std::string flag_for(const TraceSetting& s) {
  for (const ExecOption& e : execution_options())
    if (e.keyword == s.option)
      return e.kind == OptionKind::on_off ? (s.value == "on" ? cli_flag(e) : cli_off_flag(e))
                                          : fmt::format("{} {}", cli_flag(e), s.value);
  return fmt::format("--{} {}", s.option, s.value);
}

}  // namespace

void write_check_table(std::ostream& os, const Analysis& a, const MeasuredTrace& t, const TraceCheck& c, int rows) {
  const double err = c.measured_device_us > 0 ? c.predicted_device_us / c.measured_device_us - 1 : 0;
  fmt::print(os, "{} on {}, batch {}, {}: prediction against {}\n", printable(a.model_name), a.gpu_id, a.batch,
             a.exec.name(), printable(t.path));
  if (!c.mismatches.empty()) {
    fmt::print(os, "  MISMATCH   the trace ran otherwise than this prediction assumes; the figures below\n"
                   "             compare unlike runs. Set the trace's configuration:\n");
    for (const auto& m : c.mismatches)
      fmt::print(os, "             {} {} (predicted {}): {}; set {}\n", m.trace.option, printable(m.trace.value),
                 printable(m.predicted), printable(m.trace.evidence), printable(flag_for(m.trace)));
  }
  fmt::print(os, "  measured   {} kernels, {:.1f} us of kernel time{}\n", t.kernels.size(), c.measured_device_us,
             t.copies ? fmt::format(" ({} memcpy/memset events not counted)", t.copies) : "");
  if (!t.step.empty())
    fmt::print(os, "             from {}, the last of the trace's {} profiler steps ({} kernels in all)\n",
               printable(t.step), t.steps, t.kernels_in_trace);
  fmt::print(os, "  predicted  {} kernels, {:.1f} us of kernel time (launch gaps left out)\n",
             std::count_if(c.pairs.begin(), c.pairs.end(), [](const TracePair& p) { return p.predicted >= 0; }),
             c.predicted_device_us);
  // A miss that rounds to nothing reads +0.0%, not -0.0%.
  const double off_pct = std::abs(100 * err) < 0.05 ? 0.0 : 100 * err;
  fmt::print(os, "  total kernel time off by {:+.1f}%; {} kernels paired, median |error| {:.1f}%\n", off_pct, c.paired,
             100 * c.median_abs_error);
  if (c.shape_compared > 0)
    fmt::print(os, "  shapes     {} of {} paired convolutions and GEMMs launched by an op with their sizes\n",
               c.shape_matched, c.shape_compared);
  else
    fmt::print(os, "  shapes     none in the trace (profile with record_shapes=True to pair by shape too)\n");
  if (!c.by_kind.empty()) {
    fmt::print(os, "\nPaired kernels by kind (the predicted kernel's):\n");
    fmt::print(os, "  {:<12} {:>5} {:>12} {:>11} {:>7}\n", "kind", "pairs", "predicted_us", "measured_us", "error");
    for (const auto& k : c.by_kind)
      fmt::print(os, "  {:<12} {:>5} {:>12.1f} {:>11.1f} {:>+6.0f}%\n", k.kind, k.pairs, k.predicted_us, k.measured_us,
                 k.measured_us > 0 ? 100 * (k.predicted_us / k.measured_us - 1) : 0.0);
  }
  if (!c.by_class.empty()) {
    fmt::print(os, "\nKernel classes (error: of the pairs, by the measured kernel's class; same: of\n"
                   "the pairs whose predicted kernel has the class too; missing: measured time\n"
                   "nothing predicted pairs with; extra: the reverse):\n");
    // measured_share: of the measured kernel time, as the JSON names it (docs/report.md "Shares").
    fmt::print(os, "  {:<12} {:>14} {:>11} {:>12} {:>6} {:>6} {:>10} {:>8}\n", "class", "measured_share",
               "measured_us", "predicted_us", "error", "same", "missing_us", "extra_us");
    auto error = [](int pairs, double e) { return pairs > 0 ? fmt::format("{:+.0f}%", 100 * e) : std::string("-"); };
    for (const auto& r : c.by_class)
      fmt::print(os, "  {:<12} {:>13.1f}% {:>11.1f} {:>12.1f} {:>6} {:>6} {:>10.1f} {:>8.1f}\n", r.kernel_class,
                 100 * r.measured_share, r.measured_us, r.predicted_us, error(r.paired, r.paired_error),
                 error(r.same_class_paired, r.same_class_error), r.missing_us, r.extra_us);
  }
  std::vector<const TracePair*> paired, pred_only, meas_only;
  for (const auto& p : c.pairs)
    (p.predicted >= 0 && p.measured >= 0 ? paired : p.predicted >= 0 ? pred_only : meas_only).push_back(&p);
  std::stable_sort(paired.begin(), paired.end(), [](auto* x, auto* y) {
    return std::fabs(x->predicted_us - x->measured_us) > std::fabs(y->predicted_us - y->measured_us);
  });
  const size_t shown = std::min(paired.size(), size_t(std::max(0, rows)));
  fmt::print(os, "\nThe {} pairs furthest apart (predicted kernel / measured kernel):\n", shown);
  fmt::print(os, "  {:>12} {:>11} {:>7}\n", "predicted_us", "measured_us", "error");
  for (size_t i = 0; i < shown; ++i) {
    const TracePair& p = *paired[i];
    const auto& k = a.kernels[size_t(p.predicted)];
    fmt::print(os, "  {:>12.2f} {:>11.2f} {:>+6.0f}%  {}\n", p.predicted_us, p.measured_us,
               p.measured_us > 0 ? 100 * (p.predicted_us / p.measured_us - 1) : 0.0,
               middle_ellipsis(printable(compact_name(k.kernel.name) + " [" + k.kernel.ops.text() + "]"), 50));
    fmt::print(os, "  {:>32}  {}\n", "", middle_ellipsis(printable(t.kernels[size_t(p.measured)].name), 50));
  }
  auto list = [&](const char* title, const std::vector<const TracePair*>& ps, bool predicted) {
    if (ps.empty()) return;
    fmt::print(os, "\n{} ({}):\n", title, ps.size());
    for (size_t i = 0; i < ps.size() && i < 10; ++i) {
      const TracePair& p = *ps[i];
      const std::string name = predicted ? compact_name(a.kernels[size_t(p.predicted)].kernel.name) + " [" +
                                               a.kernels[size_t(p.predicted)].kernel.ops.text() + "]"
                                         : t.kernels[size_t(p.measured)].name;
      fmt::print(os, "  {:>9.2f} us  {}\n", predicted ? p.predicted_us : p.measured_us,
                 middle_ellipsis(printable(name), 64));
    }
    if (ps.size() > 10) fmt::print(os, "  ... and {} more (--format json lists all)\n", ps.size() - 10);
  };
  list("Predicted, but nothing like it ran", pred_only, true);
  list("Ran, but not predicted", meas_only, false);
  os << "\nPairs follow launch order and kernel kind (compute, pool, reduce, norm, copy,\n"
        "elementwise); docs/report.md says how. Times are each kernel's own duration.\n";
}

json check_to_json(const Analysis& a, const MeasuredTrace& t, const TraceCheck& c) {
  json by_kind = json::array();
  for (const auto& k : c.by_kind)
    by_kind.push_back({{"kind", k.kind}, {"pairs", k.pairs}, {"predicted_us", k.predicted_us},
                       {"measured_us", k.measured_us}});
  json by_class = json::array();
  for (const auto& r : c.by_class)
    by_class.push_back({{"class", r.kernel_class}, {"measured", r.measured}, {"measured_us", r.measured_us},
                        {"measured_share", r.measured_share}, {"predicted", r.predicted},
                        {"predicted_us", r.predicted_us}, {"paired", r.paired},
                        {"paired_measured_us", r.paired_measured_us}, {"paired_predicted_us", r.paired_predicted_us},
                        {"paired_error", r.paired_error}, {"same_class_paired", r.same_class_paired},
                        {"same_class_measured_us", r.same_class_measured_us},
                        {"same_class_predicted_us", r.same_class_predicted_us},
                        {"same_class_error", r.same_class_error}, {"missing", r.missing}, {"missing_us", r.missing_us},
                        {"extra", r.extra}, {"extra_us", r.extra_us}});
  json configuration = json::array(), mismatches = json::array();
  for (const auto& s : t.configuration)
    configuration.push_back({{"option", s.option}, {"value", s.value}, {"evidence", s.evidence}});
  for (const auto& m : c.mismatches)
    mismatches.push_back({{"option", m.trace.option}, {"trace", m.trace.value}, {"predicted", m.predicted},
                          {"evidence", m.trace.evidence}});
  json pairs = json::array();
  for (const auto& p : c.pairs) {
    json j = {{"predicted_us", p.predicted_us}, {"measured_us", p.measured_us}};
    if (p.shape_match >= 0) j["shape_match"] = p.shape_match == 1;
    if (p.predicted >= 0) {
      const auto& k = a.kernels[size_t(p.predicted)];
      j["predicted"] = k.kernel.name, j["predicted_op"] = k.kernel.ops.text(), j["predicted_kind"] = kernel_kind(k);
      j["predicted_class"] = pairing_class(k);
    }
    if (p.measured >= 0)
      j["measured"] = t.kernels[size_t(p.measured)].name, j["measured_kind"] = kernel_kind(t.kernels[size_t(p.measured)].name),
      j["measured_class"] = pairing_class(t.kernels[size_t(p.measured)].name);
    pairs.push_back(std::move(j));
  }
  return views::versioned({{"model", a.model_name},
          {"gpu", a.gpu_id},
          {"batch", a.batch},
          {"dtype", dtype_name(a.dtype)},
          {"runtime", a.runtime},
          {"execution", a.exec.to_json()},
          {"trace", t.path},
          {"trace_configuration", std::move(configuration)},
          {"configuration_mismatches", std::move(mismatches)},
          {"measured_kernels", t.kernels.size()},
          {"profiler_step", t.step},
          {"profiler_steps", t.steps},
          {"kernels_in_trace", t.kernels_in_trace},
          {"measured_kernel_us", c.measured_device_us},
          {"predicted_kernel_us", c.predicted_device_us},
          {"paired", c.paired},
          {"median_abs_error", c.median_abs_error},
          {"shape_compared", c.shape_compared},
          {"by_kind", by_kind},
          {"by_class", by_class},
          {"shape_matched", c.shape_matched},
          {"pairs", std::move(pairs)}});
}

}  // namespace tilewave
