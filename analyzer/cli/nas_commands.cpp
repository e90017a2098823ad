// `tilewave nas` and `tilewave nas-merge` (docs/nas.md): options in, the
// library's space::Search run, its rows handed to the nas views.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/layer_set.h"
#include "tilewave/output_file.h"
#include "tilewave/progress.h"
#include "tilewave/report.h"
#include "tilewave/search.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {

// A CSV stays plain (docs/cli.md "Formats"): the run's header, which
// nas-merge checks shard against shard, goes beside it as FILE.meta.json.
std::string meta_path(const std::string& csv_path) { return csv_path + ".meta.json"; }

void write_csv_header(const std::string& output, const json& header) {
  if (output.empty() || output == "-") {
    note("a CSV on stdout has no header beside it: -o FILE writes FILE.meta.json, which nas-merge reads");
    return;
  }
  write_output(meta_path(output), [&](std::ostream& os) { os << json_text(header, 2) << "\n"; });
}

}  // namespace

int cmd_nas(const CommonOptions& o, const NasOptions& n) {
  const space::SearchSpace s = space::load_space(n.space);
  const GpuModel gpu = gpu_of(o);
  const ExecutionConfig exec = execution_of(o);
  const int64_t batch = o.batch > 0 ? o.batch : 1;
  if (n.samples == 0) throw InputError("--samples", "give at least one candidate");
  space::SearchOptions opt;
  opt.sampling = n.enumerate ? space::Sampling::enumerate : n.unique ? space::Sampling::unique : space::Sampling::replacement;
  opt.samples = n.samples;
  opt.seed = n.seed;
  const uint64_t total = space::sampling_total(s, opt);
  // Drawn with replacement from a small space, many rows are the same network again.
  if (opt.sampling == space::Sampling::replacement) {
    const double repeats = space::expected_repeats(s.size(), total);
    if (repeats >= 1 && repeats >= 0.01 * double(total))
      note(fmt::format("about {:.0f} of the {} samples ({:.0f}%) are expected to repeat a candidate drawn before "
                       "(the space holds {:.4g}); --unique draws each at most once", repeats, total,
                       100 * repeats / double(total), s.size()));
  }
  std::tie(opt.shard, opt.shards) = space::parse_shard(n.shard);
  opt.threads = std::max(1, n.threads);
  // CLI11's range lets NaN through (every comparison with it is false).
  if (!(n.min_utilization >= 0 && n.min_utilization <= 1))
    throw UsageError("--min-utilization", "must be a number in [0, 1]");
  opt.min_utilization = n.min_utilization;
  opt.pareto = n.pareto;
  opt.fastest = n.export_dir.empty() ? 0 : size_t(n.top);
  // Before the search: a folder that cannot be made costs no candidates and
  // prints one line (its nearest existing ancestor must be a folder).
  if (!n.export_dir.empty()) {
    std::error_code ec;
    std::filesystem::path up = std::filesystem::absolute(n.export_dir, ec);
    auto absent = [](const std::filesystem::path& p) {
      std::error_code missing;  // "not found" is an answer here, not an error
      return !std::filesystem::exists(std::filesystem::symlink_status(p, missing));
    };
    while (!ec && absent(up) && up.has_parent_path() && up != up.parent_path()) up = up.parent_path();
    if (ec || !std::filesystem::is_directory(up, ec))
      throw InputError(n.export_dir, fmt::format("cannot create the --export-onnx folder ({} is not a folder)",
                                                 printable(up.string())));
  }
  const auto host = host_of(o);
  space::Search search(s, gpu, exec, host, batch);

  const json header = nas_header({s, n.space, opt, total, gpu, exec, batch, o.dtype, host ? host->id : ""});
  space::SearchResult result;
  Progress progress("tilewave nas");
  write_output(o.output, [&](std::ostream& os) {
    write_nas_rows(os, header, {}, o.format);
    space::SearchCallbacks cb;
    cb.format = [&o](const space::SearchRow& r, std::string& out) { format_nas_row(r, o.format, out); };
    cb.row = [&os](const space::SearchRow& r) { os << r.text << '\n'; };
    cb.progress = [&progress](uint64_t done, uint64_t all) { progress.update(done, all, "candidates"); };
    result = search.run(opt, cb);
    if (result.invalid)
      note(fmt::format("{} (and {} other candidates not buildable)", result.first_error, result.invalid - 1));
    if (n.pareto) write_nas_rows(os, nullptr, result.front, o.format);
  });
  progress.finish();
  if (o.format == "csv") write_csv_header(o.output, header);
  const uint64_t mine = result.scored;
  const double seconds = result.seconds;
  const int threads = result.threads;
  fmt::print(std::cerr, "tilewave: nas: space '{}' holds {:.4g} candidates\n", printable(s.name), s.size());
  fmt::print(std::cerr, "tilewave: nas: {} candidates in {:.3f} s ({:.0f}/s on {} thread{}, written rows included), "
             "{} written{}\n", mine, seconds, seconds > 0 ? double(mine) / seconds : 0.0, threads,
             threads == 1 ? "" : "s", result.kept,
             result.invalid ? fmt::format(", {} not buildable (left out)", result.invalid) : "");

  if (auto hb = host_bound_note(result.host_bound, mine - result.invalid, "candidates")) note(*hb);

  if (!n.export_dir.empty()) {
    std::error_code made;
    std::filesystem::create_directories(n.export_dir, made);
    if (made) throw InputError(n.export_dir, fmt::format("cannot create the --export-onnx folder ({})", made.message()));
    for (const auto& r : result.fastest)
      space::export_candidate(s, r.encoding, batch,
                              (std::filesystem::path(n.export_dir) / fmt::format("{}_{}.onnx", file_stem(s.name), r.index)).string());
    fmt::print(std::cerr, "tilewave: nas: wrote the {} fastest candidates to {}\n", result.fastest.size(), n.export_dir);
  }
  return 0;
}

int cmd_nas_merge(const CommonOptions& o, const std::vector<std::string>& files) {
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
    // CSV: its header beside it (FILE.meta.json); a `# {header}` first line
    // as nas wrote before. JSON Lines: the first line.
    const bool legacy_csv = line.rfind("# ", 0) == 0;
    const bool csv = legacy_csv || line.rfind(nas_columns()[0], 0) == 0;
    json header;
    const bool sidecar = csv && !legacy_csv;
    const std::string header_file = sidecar ? meta_path(path) : path;  // where a bad header is
    if (legacy_csv) header = parse_json_text(line.substr(2), path + ":1");
    else if (!csv) header = parse_json_text(line, path + ":1");
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
      first_header = comparable, shard_count = n, format = csv ? "csv" : "json";
    } else if (comparable != first_header || n != shard_count || (csv ? "csv" : "json") != format) {
      throw InputError(path, "its run differs from the first file's (space, seed, samples, sampling, GPU, batch, dtype, "
                             "runtime, filters, shard count or format)");
    }
    if (!shards_seen.insert(i).second) throw InputError(path, fmt::format("shard {}/{} given twice", i, n));
    if (legacy_csv) std::getline(f, line);  // column names
    for (int number = legacy_csv ? 3 : 2; std::getline(f, line); ++number) {
      if (line.empty()) continue;
      const std::string where = fmt::format("{}:{}", path, number);
      try {
      uint64_t index = 0;
      if (csv) {
        index = std::stoull(line.substr(0, line.find(',')));
      } else {
        const json j = parse_json_text(line, fmt::format("{}:{}", path, number));
        if (!j.contains("index") || !j["index"].is_number_unsigned())
          throw InputError(fmt::format("{}:{}", path, number), "row without an index");
        index = j["index"].get<uint64_t>();
        space::SearchRow r;
        r.index = index;
        r.cost.time_us = j.contains("time_us") ? j.value("time_us", 0.0) : j.value("latency_us", 0.0);
        r.cost.flops = j.value("flops", int64_t(0));
        if (!(r.cost.time_us > 0) || !std::isfinite(r.cost.time_us) || r.cost.flops < 0)
          throw InputError(where, "time_us or flops is not a nas figure (a positive time, FLOPs not negative)");
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
      if (csv) {
        std::stringstream ss(line);
        std::string cell;
        std::vector<std::string> cells;
        while (std::getline(ss, cell, ',')) cells.push_back(cell);
        if (line.back() == ',') cells.push_back("");  // an empty last cell (a bound merged from an older row)
        // Rows from before time_us lack latency_us (time_us repeated,
        // docs/report.md "Field names") and bound; rows from before bound
        // lack it alone. Merged, they get latency_us and an empty bound (not known).
        const size_t all = nas_columns().size();
        if (cells.size() != all && cells.size() != all - 1 && cells.size() != all - 2)
          throw InputError(fmt::format("{}:{}", path, number), "row does not have the nas columns");
        if (cells.size() == all - 2) row_text[index] += "," + cells[4];
        if (cells.size() < all) row_text[index] += ",";
        // Every figure a finite number, none negative, the time positive: a
        // part edited or written by something else is not merged as it is.
        const auto& columns = nas_columns();
        for (size_t k = 0; k < cells.size(); ++k) {
          if (columns[k] == "encoding" || columns[k] == "main_loss" || columns[k] == "bound") continue;
          double v = 0;
          const auto r = std::from_chars(cells[k].data(), cells[k].data() + cells[k].size(), v);
          if (r.ec != std::errc() || r.ptr != cells[k].data() + cells[k].size() || !std::isfinite(v) || v < 0 ||
              ((columns[k] == "time_us" || columns[k] == "latency_us") && v <= 0))
            throw InputError(where, fmt::format("{} '{}' is not a nas figure", columns[k], printable(cells[k])));
        }
        space::SearchRow r;
        r.index = index;
        r.cost.flops = std::stoll(cells[2]);
        r.cost.time_us = std::stod(cells[4]);
        rows[index] = r;
      }
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
  json header = first_header;
  header["shard"] = "0/1";
  header["merged_shards"] = shard_count;
  write_output(o.output, [&](std::ostream& os) {
    write_nas_rows(os, header, {}, format);
    for (const auto& [index, text] : row_text)
      if (keep.empty() || keep.count(index)) os << text << "\n";
  });
  if (format == "csv") write_csv_header(o.output, header);
  fmt::print(std::cerr, "tilewave: nas-merge: {} shards, {} candidates\n", shard_count, row_text.size());
  return 0;
}

}  // namespace tilewave::cli
