// Number formatting the views share (internal to views/).
#pragma once
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/kernel_cost.h"

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

inline std::string pct(double f) { return fmt::format("{:.1f}%", 100 * f); }

inline nlohmann::json loss_json(const Losses& l) {
  return {{"tile", l.tile}, {"wave", l.wave}, {"efficiency", l.efficiency}, {"memory", l.memory}, {"fixed", l.fixed}, {"idle", l.idle}};
}

}  // namespace tilewave::views
