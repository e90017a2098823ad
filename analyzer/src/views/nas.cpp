// `tilewave nas` rows and headers (docs/nas.md): CSV or JSON Lines
// over the rows a space::Search costed; and nas-merge, which reads them back.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "format.h"
#include "tilewave/report.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/layer_set.h"
#include "tilewave/output_file.h"
#include "tilewave/search.h"
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

void nas_jsonl_row(const space::SearchRow& r, std::string& out) { out = json_text(nas_json_row(r)); }

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

void write_nas_rows(std::ostream& os, const json* header, const std::vector<space::SearchRow>& rows,
                    NasRowFormat format) {
  if (header) {
    if (format == NasRowFormat::csv) {
      views::write_csv_version(os);
      const auto& columns = nas_columns();
      for (size_t i = 0; i < columns.size(); ++i) os << (i ? "," : "") << columns[i];
      os << "\n";
    } else {
      os << json_text(*header) << "\n";
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

// A nas row's cell as nas writes it (nas_csv_row): integers where nas writes
// integers, figures finite and not negative, the time positive, the
// utilization at most 1, and text without control characters or bytes that
// are not ASCII (an output's rows are re-written as they are read, so
// nothing a terminal would act on may pass). A bound or main loss may be
// empty (shards from before them). InputError naming `where` otherwise.
void check_nas_cell(const std::string& column, const std::string& cell, const std::string& where) {
  const char* const begin = cell.data();
  const char* const end = begin + cell.size();
  if (column == "encoding" || column == "main_loss" || column == "bound") {
    const bool plain = std::all_of(cell.begin(), cell.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
    if (!plain || (column == "encoding" && cell.empty()))
      throw InputError(where, fmt::format("{} '{}' is not a nas {}", column, printable(cell),
                                          cell.empty() ? "encoding" : "text (control characters or bytes not ASCII)"));
    return;
  }
  bool ok = false;
  if (column == "index") {
    uint64_t v = 0;
    const auto r = std::from_chars(begin, end, v);
    ok = r.ec == std::errc() && r.ptr == end;
  } else if (column == "flops" || column == "params" || column == "kernels") {
    int64_t v = 0;
    const auto r = std::from_chars(begin, end, v);
    ok = r.ec == std::errc() && r.ptr == end && v >= 0;
  } else {
    double v = 0;
    const auto r = std::from_chars(begin, end, v);
    ok = r.ec == std::errc() && r.ptr == end && std::isfinite(v) && v >= 0 &&
         ((column != "time_us" && column != "latency_us") || v > 0) && (column != "utilization" || v <= 1);
  }
  if (!ok) throw InputError(where, fmt::format("{} '{}' is not a nas figure", column, printable(cell)));
}

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
    check_nas_cell(c, cell, where);
    out.push_back(std::move(cell));
  }
  return out;
}

std::string NasCsvColumns::text(const std::vector<std::string>& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
  return out;
}

std::string nas_meta_path(const std::string& csv_path) { return csv_path + ".meta.json"; }

NasMerge merge_nas_outputs(const std::vector<std::string>& files) {
  json first_header;
  std::string format;
  std::set<uint64_t> shards_seen;
  uint64_t shard_count = 0;
  std::map<uint64_t, space::SearchRow> rows;
  std::map<uint64_t, std::string> row_text;
  for (const auto& path : files) {
    require_regular_file(path, "a nas output");
    std::ifstream f(path);
    if (!f) throw InputError(path, "cannot open nas output");
    std::string line;
    std::getline(f, line);
    int number = 1;  // of `line` in the file
    // CSV: the version's comment line, the column names, the header beside
    // it (FILE.meta.json); a `# {header}` first line as nas wrote before.
    // JSON Lines: the header is the first line.
    if (line.rfind("# tilewave ", 0) == 0) std::getline(f, line), ++number;
    const bool legacy_csv = line.rfind("# {", 0) == 0;
    // JSON Lines start with the header object; anything else is a CSV's column line, read by name.
    const bool csv = legacy_csv || line.rfind('{', 0) != 0;
    json header;
    const bool sidecar = csv && !legacy_csv;
    const std::string header_file = sidecar ? nas_meta_path(path) : path;  // where a bad header is
    if (legacy_csv) header = parse_json_text(line.substr(2), fmt::format("{}:{}", path, number));
    else if (!csv) header = parse_json_text(line, fmt::format("{}:{}", path, number));
    else if (std::filesystem::exists(header_file)) header = read_json_file(header_file, "nas header");
    else throw InputError(path, "its header is missing: nas writes it beside a CSV as " + header_file);
    auto is_true = [](const json& j, const char* key) {
      const auto it = j.find(key);
      return it != j.end() && it->is_boolean() && it->get<bool>();
    };
    if (!header.is_object() || !is_true(header, "header") || !header.contains("shard") || !header["shard"].is_string())
      throw InputError(header_file, sidecar ? "not a `tilewave nas` header" : "not a `tilewave nas` output (its first line is not the header)");
    std::pair<uint64_t, uint64_t> shard;
    try {
      shard = space::parse_shard(header["shard"].get<std::string>());
    } catch (const UsageError& e) {  // a file's field, not the command line's
      throw InputError(header_file, fmt::format("field 'shard' {}", without_file(e.what(), "--shard")));
    }
    const auto [i, n] = shard;
    json comparable = header;
    comparable.erase("shard");
    if (first_header.is_null()) {
      first_header = comparable, shard_count = n, format = csv ? "csv" : "jsonl";
    } else if (comparable != first_header || n != shard_count || (csv ? "csv" : "jsonl") != format) {
      throw InputError(path, "its run differs from the first file's (space, seed, samples, sampling, GPU, batch, dtype, "
                             "runtime, filters, shard count, format or tilewave version)");
    }
    if (!shards_seen.insert(i).second) throw InputError(path, fmt::format("shard {}/{} given twice", i, n));
    if (legacy_csv) std::getline(f, line), ++number;
    // The file's columns, read by name: shards from before time_us or bound lack some.
    const NasCsvColumns columns = csv ? NasCsvColumns(line, fmt::format("{}:{}", path, number)) : NasCsvColumns();
    while (++number, std::getline(f, line)) {
      if (line.empty()) continue;
      const std::string where = fmt::format("{}:{}", path, number);
      try {
      uint64_t index = 0;
      if (csv) {
        const std::vector<std::string> cells = columns.row(line, where);
        index = std::stoull(cells[columns.today("index")]);
        line = NasCsvColumns::text(cells);  // in today's columns
        space::SearchRow r;
        r.index = index;
        r.cost.flops = std::stoll(cells[columns.today("flops")]);
        r.cost.time_us = std::stod(cells[columns.today("time_us")]);
        rows[index] = r;
      } else {
        const json j = parse_json_text(line, fmt::format("{}:{}", path, number));
        if (!j.contains("index") || !j["index"].is_number_unsigned())
          throw InputError(fmt::format("{}:{}", path, number), "row without an index");
        index = j["index"].get<uint64_t>();
        if (!j.contains("time_us") && !j.contains("latency_us")) throw InputError(where, "row without a time_us");
        // Every nas field the row has is held to what nas writes, as a CSV's cells are.
        for (const auto& c : nas_columns())
          if (const auto it = j.find(c); it != j.end()) {
            const bool text = c == "encoding" || c == "main_loss" || c == "bound";
            if (text ? !it->is_string() : !it->is_number())
              throw InputError(where, fmt::format("field '{}' is not a nas {}", c, text ? "text" : "figure"));
            check_nas_cell(c, text ? it->get<std::string>() : it->dump(), where);
          }
        space::SearchRow r;
        r.index = index;
        r.cost.time_us = j.contains("time_us") ? j.value("time_us", 0.0) : j.value("latency_us", 0.0);
        r.cost.flops = j.value("flops", int64_t(0));
        rows[index] = r;
        // A row from before time_us (docs/report.md "Field names") gets it, merged.
        if (!j.contains("time_us") && j.contains("latency_us"))
          line = append_fields(line, "\"time_us\":" + json_text(j["latency_us"]));
      }
      if (index % shard_count != i)
        throw InputError(fmt::format("{}:{}", path, number), fmt::format("candidate {} does not belong to shard {}/{}",
                                                                         index, i, n));
      if (!row_text.emplace(index, line).second)
        throw InputError(fmt::format("{}:{}", path, number), fmt::format("candidate {} appears twice", index));
      } catch (const std::logic_error&) {  // stoull/stod on a cell that is not a number
        throw InputError(where, "row is not a `tilewave nas` row");
      } catch (const json::exception&) {  // a field of another type
        throw InputError(where, "row is not a `tilewave nas` row");
      }
    }
  }
  for (uint64_t i = 0; i < shard_count; ++i)
    if (!shards_seen.count(i)) throw InputError("nas-merge", fmt::format("shard {}/{} is missing", i, shard_count));
  // Shards each kept their own front; the merged front is recomputed.
  std::set<uint64_t> keep;
  if (first_header.contains("pareto") && first_header["pareto"] == true) {
    std::vector<space::SearchRow> all;
    for (auto& [i, r] : rows) all.push_back(r);
    for (const auto& r : space::pareto_front(std::move(all))) keep.insert(r.index);
  }
  NasMerge out;
  out.header = first_header;
  out.header["shard"] = "0/1";
  out.header["merged_shards"] = shard_count;
  out.format = format;
  out.shards = shard_count;
  out.candidates = row_text.size();
  for (auto& [index, text] : row_text)
    if (keep.empty() || keep.count(index)) out.rows.push_back(std::move(text));
  return out;
}

}  // namespace tilewave
