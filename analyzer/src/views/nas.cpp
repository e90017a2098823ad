// `tilewave nas` rows and headers (docs/nas.md): CSV or JSON Lines
// over the rows a space::Search costed.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "format.h"
#include "tilewave/report.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave {

// latency_us repeats time_us under its former name until 1.0 (docs/report.md
// "Field names"); bound, added after it, is what sets the candidate's step.
const std::vector<std::string>& nas_columns() {
  static const std::vector<std::string> columns = {"index",       "encoding",  "flops",     "params",  "time_us",
                                                   "throughput_per_s", "utilization", "main_loss", "kernels", "latency_us",
                                                   "bound"};
  return columns;
}

void nas_csv_row(const space::SearchRow& r, std::string& out) {
  const auto& c = r.cost;
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{:.4f},{:.2f},{:.6f},{},{},{:.4f},{}", r.index, r.encoding,
                 c.flops, c.params, c.time_us, c.throughput_per_s, c.utilization, c.main_loss, c.kernels, c.time_us,
                 c.bound);
}

json nas_json_row(const space::SearchRow& r) {
  json j = candidate_to_json(r.cost);
  j["index"] = r.index;
  j["encoding"] = r.encoding;
  return j;
}

void format_nas_row(const space::SearchRow& r, const std::string& format, std::string& out) {
  if (format == "csv") nas_csv_row(r, out);
  else out = json_text(nas_json_row(r));
}

json nas_header(const NasRun& run) {
  const space::SearchOptions& o = run.options;
  return {{"header", true},
          {"tool", "tilewave nas"},
          {"tilewave_version", version()},
          {"space", run.space.name},
          {"space_file", run.space_file},
          {"seed", o.seed},
          {"samples", run.total},
          {"sampling", space::sampling_name(o.sampling)},
          {"shard", fmt::format("{}/{}", o.shard, o.shards)},
          {"gpu", run.gpu.id},
          {"gpu_trust", trust_name(run.gpu.trust)},
          {"batch", run.batch},
          {"dtype", run.dtype},
          {"runtime", run.exec.runtime_profile().name()},
          {"execution", run.exec.to_json()},
          {"host", run.host.empty() ? json(nullptr) : json(run.host)},
          {"min_utilization", o.min_utilization},
          {"pareto", o.pareto}};
}

void write_nas_rows(std::ostream& os, const json& header, const std::vector<space::SearchRow>& rows,
                    const std::string& format) {
  const bool csv = format == "csv";
  if (!header.is_null()) {
    if (csv) {
      views::write_csv_version(os);
      const auto& columns = nas_columns();
      for (size_t i = 0; i < columns.size(); ++i) os << (i ? "," : "") << columns[i];
      os << "\n";
    } else {
      os << json_text(header) << "\n";
    }
  }
  for (const auto& r : rows) os << r.text << "\n";
}

namespace {

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.push_back("");  // an empty last cell (a bound not known)
  return cells;
}

}  // namespace

NasCsvColumns::NasCsvColumns(const std::string& names_line, const std::string& where) {
  const auto names = split_cells(names_line);
  for (size_t i = 0; i < names.size(); ++i)
    if (!at_.emplace(names[i], i).second) throw InputError(where, fmt::format("column '{}' appears twice", printable(names[i])));
  width_ = names.size();
  for (const auto& c : nas_columns())
    if (!at_.count(c) && c != "time_us" && c != "latency_us" && c != "bound")
      throw InputError(where, fmt::format("the nas column '{}' is missing", c));
  if (!at_.count("time_us") && !at_.count("latency_us")) throw InputError(where, "the nas column 'time_us' is missing");
}

size_t NasCsvColumns::today(const std::string& name) {
  const auto& all = nas_columns();
  return size_t(std::find(all.begin(), all.end(), name) - all.begin());
}

std::vector<std::string> NasCsvColumns::row(const std::string& line, const std::string& where) const {
  const auto cells = split_cells(line);
  if (cells.size() != width_) throw InputError(where, "row does not have the nas columns");
  std::vector<std::string> out;
  for (const auto& c : nas_columns()) {
    auto it = at_.find(c);
    if (it == at_.end() && (c == "time_us" || c == "latency_us")) it = at_.find(c == "time_us" ? "latency_us" : "time_us");
    std::string cell = it == at_.end() ? "" : cells[it->second];
    if (c != "encoding" && c != "main_loss" && c != "bound") {
      double v = 0;
      const auto r = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (r.ec != std::errc() || r.ptr != cell.data() + cell.size() || !std::isfinite(v) || v < 0 ||
          ((c == "time_us" || c == "latency_us") && v <= 0))
        throw InputError(where, fmt::format("{} '{}' is not a nas figure", c, printable(cell)));
    }
    out.push_back(std::move(cell));
  }
  return out;
}

std::string NasCsvColumns::text(const std::vector<std::string>& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  return out;
}

}  // namespace tilewave
