// What every fuzz harness checks beyond "no crash": the error contract of
// docs/errors.md. Bad input may only surface as InputError; any other
// exception, and any number that is infinite, NaN, negative or a utilization
// above 1, is a finding (abort, so that libFuzzer keeps the input).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/error.h"
#include "tilewave/html_report.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/report.h"

namespace tilewave::fuzz {

[[noreturn]] inline void finding(const char* what, double value) {
  std::fprintf(stderr, "contract broken: %s = %g\n", what, value);
  std::abort();
}

inline void check_number(const char* what, double v) {
  if (!std::isfinite(v) || v < 0) finding(what, v);
}

inline void check_cost(const KernelCost& c) {
  check_number("time_us", c.time_us);
  check_number("compute_us", c.compute_us);
  check_number("memory_us", c.memory_us);
  check_number("fixed_us", c.fixed_us);
  check_number("flops", double(c.flops));
  check_number("bytes", double(c.bytes));
  check_number("utilization", c.utilization);
  if (c.utilization > 1 + 1e-9) finding("utilization", c.utilization);
}

inline void check_analysis(const Analysis& a) {
  for (const auto& k : a.kernels)
    if (k.cost) check_cost(*k.cost);
  check_number("total time_us", a.total.time_us);
  check_number("total flops", double(a.total.flops));
  check_number("total bytes", double(a.total.bytes));
  check_number("total utilization", a.total.utilization);
  check_number("throughput_per_s", a.total.throughput_per_s);
  // The views must cope with whatever names the input had: every format
  // and table summary the CLI offers, the trace and the report. The JSON
  // ones are UTF-8 whatever bytes the names held (U+FFFD, docs/errors.md):
  // the parser refuses anything else.
  auto parses = [](const std::string& json) {
    if (!nlohmann::json::accept(json)) finding("JSON output that does not parse (bytes not UTF-8?)", 0);
  };
  const ViewRegistry& views = ViewRegistry::global();
  // A totals-only analysis (rank's) has no parts for these views, which refuse it (views::require_parts).
  const bool whole = a.parts.node_facts && a.parts.groupings;
  for (const std::string& format : whole ? views.formats("analyze") : std::vector<std::string>{}) {
    const bool table = format == "table";
    for (const std::string& by : table ? table_summaries() : std::vector<std::string>{"op"}) {
      std::ostringstream out;
      views.write(out, "analyze", format, AnalysisViewInput{a, ViewOptions{15, by}});
      if (format == "json") parses(out.str());
    }
  }
  std::ostringstream out;
  write_compare_table(out, {a});
  if (whole) write_html_report(out, ReportInput{a, {}, {}});
  std::ostringstream trace;
  write_chrome_trace(trace, a);
  parses(trace.str());
}

// Runs one input through `fn`: InputError is the contract's "bad input, exit 1".
template <class Fn>
int guarded(Fn&& fn) {
  try {
    fn();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "contract broken: uncaught exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}

}  // namespace tilewave::fuzz
