// Number formatting the views share (internal to views/).
#pragma once
#include <cmath>
#include <ostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/text.h"
#include "tilewave/version.h"

namespace tilewave::views {

// 12.3 GFLOP, 1.54 GB: three significant digits and an SI prefix.
inline std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (std::abs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
}

// A CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break.
inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The version every output names (docs/report.md "Version"): a JSON
// document's top-level field, and a CSV's first line, a comment that
// pandas skips with comment='#'.
inline nlohmann::json versioned(nlohmann::json document) {
  document["tilewave_version"] = version();
  return document;
}
inline void write_csv_version(std::ostream& os) { os << "# tilewave " << version() << "\n"; }

inline std::string pct(double f) { return fmt::format("{:.1f}%", 100 * f); }

// Keyed as loss_cause_names spells them.
inline nlohmann::json loss_json(const Losses& l) {
  nlohmann::json j = nlohmann::json::object();
  for (LossCause cause : kLossCauses) j[loss_cause_names(cause).key] = loss_share(l, cause);
  return j;
}

// 950.0 us, 4.70 ms.
inline std::string fmt_time_us(double us) {
  return us >= 1000 ? fmt::format("{:.2f} ms", us / 1000) : fmt::format("{:.1f} us", us);
}

// A view that reads a result part (docs/model.md "Result parts") refuses an
// analysis built without it: a caller's bug, not the user's input.
inline void require_parts(const Analysis& a, ResultParts needed, const char* view) {
  if ((needed.node_facts && !a.parts.node_facts) || (needed.groupings && !a.parts.groupings))
    throw std::logic_error(fmt::format("the {} view reads result parts (node facts, groupings) that the analysis of "
                                       "{} did not build",
                                       view, a.model_path));
}

// Who issues the step, as every view names it: "host h200-vm (calibrated)",
// or the CUDA graph that needs none.
inline std::string host_caption(const Analysis& a) {
  if (a.exec.launch != Launch::loop) return "CUDA-graph replay (no host issue)";
  return fmt::format("host {} ({})", printable(a.host_id), a.host_trust == "calibrated" ? "calibrated" : "not calibrated");
}

// "host-bound, 4.70-6.53 ms across machines" (of the host's kind) for a host-bound
// step whose host has a measured spread; "host-bound" or "GPU-bound" otherwise.
inline std::string bound_with_range(const Totals& t) {
  if (!t.host_bound) return "GPU-bound";
  if (t.time_high_us <= t.time_low_us) return "host-bound";
  const bool ms = t.time_high_us >= 1000;
  return fmt::format("host-bound, {:.{}f}-{} across machines", ms ? t.time_low_us / 1000 : t.time_low_us, ms ? 2 : 1,
                     fmt_time_us(t.time_high_us));
}

// "80% interval": the label every view gives PredictionInterval::coverage.
inline std::string interval_label() {
  return fmt::format("{:.0f}% interval", 100 * PredictionInterval::coverage);
}

// The step's 80% interval as every view says it (docs/model.md "Prediction
// intervals"): "1.52-2.31 ms (1.02-1.55x, held-out networks without attention,
// plain loop, host-bound)", or why there is none.
inline std::string interval_text(const PredictionInterval& p) {
  const char* regime = p.regime == "graph" ? "CUDA-graph replay" : p.regime == "loop_gpu" ? "plain loop, GPU-bound"
                                                                                           : "plain loop, host-bound";
  const char* network = p.network_class == "attention" ? "with attention" : "without attention";
  if (p.regime.empty()) return "none: " + p.why_none;
  if (!p.measured()) return fmt::format("none for networks {} ({}): {}", network, regime, p.why_none);
  const bool ms = p.high_us >= 1000;
  return fmt::format("{:.{}f}-{} ({:.2f}-{:.2f}x the prediction, as {} {} fell; {})",
                     ms ? p.low_us / 1000 : p.low_us, ms ? 2 : 1, fmt_time_us(p.high_us), p.low_factor, p.high_factor,
                     p.basis, network, regime);
}

// A note under a table: "Note: " and the text in lines of at most about
// `width` columns, broken at spaces, the later lines indented under the first.
inline void write_note(std::ostream& os, const std::string& text, size_t width = 100) {
  std::string line = "Note:";
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (line.size() + 1 + word.size() > width && line.size() > 6) {
      os << line << "\n";
      line = "     ";
    }
    line += " " + word;
    start = end + 1;
  }
  os << line << "\n";
}

}  // namespace tilewave::views
