// `tilewave nas` and `tilewave nas-merge` (docs/nas.md): options in, the
// library's space::Search run, its rows handed to the nas views.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/output_file.h"
#include "tilewave/progress.h"
#include "tilewave/report.h"
#include "tilewave/view_registry.h"
#include "tilewave/search.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {

// A CSV's run header, which nas-merge checks shard against shard, goes
// beside it as FILE.meta.json (docs/cli.md "Formats").

void write_csv_header(const std::string& output, const json& header) {
  if (output.empty() || output == "-") {
    note("a CSV on stdout has no header beside it: -o FILE writes FILE.meta.json, which nas-merge reads");
    return;
  }
  write_output(nas_meta_path(output), [&](std::ostream& os) { os << json_text(header, 2) << "\n"; });
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
  const auto host = host_of(o, exec);
  space::Search search(s, gpu, exec, host, batch);

  const json header = nas_header({s, n.space, opt, total, gpu, exec, batch, o.dtype, host ? host->id : ""});
  space::SearchResult result;
  Progress progress("tilewave nas");
  write_output(o.output, [&](std::ostream& os) {
    const ViewRegistry& views = ViewRegistry::global();
    views.write(os, "nas", o.format, NasRowsViewInput{&header, {}});
    space::SearchCallbacks cb;
    cb.format = views.row_writer<space::SearchRow>("nas", o.format);
    cb.row = [&os](const space::SearchRow& r) { os << r.text << '\n'; };
    cb.progress = [&progress](uint64_t done, uint64_t all) { progress.update(done, all, "candidates"); };
    result = search.run(opt, cb);
    if (result.invalid)
      note(fmt::format("{} (and {} other candidates not buildable)", result.first_error, result.invalid - 1));
    if (n.pareto) views.write(os, "nas", o.format, NasRowsViewInput{nullptr, result.front});
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
  const NasMerge merged = merge_nas_outputs(files);
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "nas", merged.format, NasRowsViewInput{&merged.header, {}});
    for (const auto& text : merged.rows) os << text << "\n";
  });
  if (merged.format == "csv") write_csv_header(o.output, merged.header);
  fmt::print(std::cerr, "tilewave: nas-merge: {} shards, {} candidates\n", merged.shards, merged.candidates);
  return 0;
}

}  // namespace tilewave::cli
