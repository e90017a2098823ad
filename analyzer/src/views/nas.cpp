// `tilewave nas` rows and headers (docs/nas.md): CSV or JSON Lines
// over the rows a space::Search costed.
#include <iterator>

#include <fmt/format.h>

#include "tilewave/report.h"
#include "tilewave/json_input.h"

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
      const auto& columns = nas_columns();
      for (size_t i = 0; i < columns.size(); ++i) os << (i ? "," : "") << columns[i];
      os << "\n";
    } else {
      os << json_text(header) << "\n";
    }
  }
  for (const auto& r : rows) os << r.text << "\n";
}

}  // namespace tilewave
