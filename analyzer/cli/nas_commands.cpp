// `tilewave nas` and `tilewave nas-merge` (docs/nas.md).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tilewave/text.h"
#include "tilewave/output_file.h"
#include "tilewave/progress.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/json_input.h"
#include "tilewave/report.h"
#include "tilewave/space_cost.h"
#include "tilewave_onnx.pb.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {

struct Row {
  uint64_t index = 0;
  std::string encoding;
  space::CandidateCost cost;
  std::string error;  // a candidate the space cannot build (feature map below 1x1)
  std::string text;   // the row as written, formatted by the worker that costed it
};

const char* const kColumns[] = {"index", "encoding", "flops", "params", "latency_us", "throughput_per_s",
                                "utilization", "main_loss", "kernels"};

// Appends the row to `out` (a worker's reused buffer).
void csv_row(const Row& r, std::string& out) {
  const auto& c = r.cost;
  fmt::format_to(std::back_inserter(out), "{},{},{},{},{:.4f},{:.2f},{:.6f},{},{}", r.index, r.encoding, c.flops,
                 c.params, c.time_us, c.throughput_per_s, c.utilization, c.main_loss, c.kernels);
}

json json_row(const Row& r) {
  json j = candidate_to_json(r.cost);
  j["index"] = r.index;
  j["encoding"] = r.encoding;
  return j;
}

// The latency-FLOPs front: no other candidate is as fast with more FLOPs.
std::vector<Row> pareto_front(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.cost.time_us != b.cost.time_us ? a.cost.time_us < b.cost.time_us : a.cost.flops > b.cost.flops;
  });
  std::vector<Row> front;
  int64_t best_flops = -1;
  for (auto& r : rows)
    if (r.cost.flops > best_flops) best_flops = r.cost.flops, front.push_back(std::move(r));
  std::sort(front.begin(), front.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
  return front;
}

// The header when `header` is not null (JSON Lines: its first line; CSV:
// the column names, the header itself in the sidecar), then the rows as
// their workers formatted them.
void write_rows(std::ostream& os, const json& header, const std::vector<Row>& rows, const std::string& format) {
  const bool csv = format == "csv";
  if (!header.is_null()) {
    if (csv)
      for (size_t i = 0; i < std::size(kColumns); ++i) os << (i ? "," : "") << kColumns[i] << (i + 1 == std::size(kColumns) ? "\n" : "");
    else
      os << header.dump() << "\n";
  }
  for (const auto& r : rows) os << r.text << "\n";
}

// A CSV stays plain (docs/cli.md "Formats"): the run's header, which
// nas-merge checks shard against shard, goes beside it as FILE.meta.json.
std::string meta_path(const std::string& csv_path) { return csv_path + ".meta.json"; }

void write_csv_header(const std::string& output, const json& header) {
  if (output.empty() || output == "-") {
    note("a CSV on stdout has no header beside it: -o FILE writes FILE.meta.json, which nas-merge reads");
    return;
  }
  write_output(meta_path(output), [&](std::ostream& os) { os << header.dump(2) << "\n"; });
}

std::pair<uint64_t, uint64_t> parse_shard(const std::string& s) {
  unsigned long long i = 0, n = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%llu/%llu%c", &i, &n, &extra) != 2 || n == 0 || i >= n)
    throw InputError("--shard", fmt::format("'{}' is not i/n with 0 <= i < n", s));
  return {i, n};
}

}  // namespace

int cmd_nas(const CommonOptions& o, const NasOptions& n) {
  const space::SearchSpace s = space::load_space(n.space);
  const GpuModel gpu = gpu_of(o);
  const ExecutionConfig exec = execution_of(o);
  const RuntimeProfile& runtime = exec.runtime_profile();
  const int64_t batch = o.batch > 0 ? o.batch : 1;
  if (n.samples == 0) throw InputError("--samples", "give at least one candidate");
  const space::Sampling mode = n.enumerate ? space::Sampling::enumerate
                               : n.unique  ? space::Sampling::unique
                                           : space::Sampling::replacement;
  const space::Sampler sampler(s, mode, n.seed, n.samples);
  const uint64_t samples = sampler.total();
  const auto shard_spec = parse_shard(n.shard);
  const uint64_t shard = shard_spec.first, shards = shard_spec.second;  // named: the workers' lambda captures them
  const int threads = std::max(1, n.threads);

  // This shard's candidates: every n-th index of the whole sampling, drawn
  // in chunks so that memory stays flat however many there are. Two chunk
  // buffers: while the workers fill one, this thread writes the other (or
  // folds it into the front) and reports progress. Each worker has its own
  // evaluator; they share one table of costed blocks.
  const uint64_t mine = samples / shards + (shard < samples % shards ? 1 : 0);
  const uint64_t chunk = 16384 * uint64_t(threads);
  std::vector<std::unique_ptr<space::SpaceEvaluator>> evaluators;
  evaluators.push_back(std::make_unique<space::SpaceEvaluator>(s, gpu, exec, host_of(o), batch));
  for (int t = 1; t < threads; ++t) evaluators.push_back(evaluators.front()->sibling());
  std::vector<Row> buffers[2];
  std::atomic<uint64_t> done{0};
  std::vector<std::string> failures(static_cast<size_t>(threads));
  std::atomic<bool> failed{false};
  const bool csv = o.format == "csv";
  // Worker t fills its contiguous part of the chunk, reusing the rows' storage.
  auto work = [&](int t, std::vector<Row>* rows, uint64_t first, uint64_t count) {
    try {
      space::Candidate c;
      const uint64_t begin = count * uint64_t(t) / uint64_t(threads), end = count * uint64_t(t + 1) / uint64_t(threads);
      for (uint64_t k = begin; k < end; ++k) {
        Row& r = (*rows)[k];
        r.index = shard + (first + k) * shards;
        sampler.draw(r.index, c);
        space::encode(s, c, r.encoding);
        r.error.clear();
        r.text.clear();
        try {
          r.cost = evaluators[size_t(t)]->evaluate(c);
          // Formatted here, in parallel: the writing thread only copies bytes.
          if (csv) csv_row(r, r.text);
          else r.text = json_row(r).dump();
        } catch (const InputError& e) {
          r.cost = {};
          r.error = e.what();
        }
        if ((k - begin) % 1024 == 1023) done.fetch_add(1024, std::memory_order_relaxed);
      }
      done.fetch_add((end - begin) % 1024, std::memory_order_relaxed);
    } catch (const std::bad_alloc&) {
      failures[size_t(t)] = "out of memory (fewer --threads, or a smaller --samples chunk)";
      failed = true;
    } catch (const std::exception& e) {
      failures[size_t(t)] = e.what();
      failed = true;
    }
  };
  auto launch = [&](std::vector<Row>* rows, uint64_t first) {
    const uint64_t count = std::min(chunk, mine - first);
    rows->resize(count);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) start_or_run(pool, [&work, t, rows, first, count] { work(t, rows, first, count); });
    return pool;
  };

  const json header = {{"header", true},         {"tool", "tilewave nas"},
                       {"space", s.name},        {"space_file", n.space},
                       {"seed", n.seed},         {"samples", samples},
                       {"sampling", space::sampling_name(mode)},
                       {"shard", fmt::format("{}/{}", shard, shards)},
                       {"gpu", gpu.id},          {"gpu_trust", trust_name(gpu.trust)},
                       {"batch", batch},
                       {"dtype", o.dtype},       {"runtime", runtime.name()},
                       {"execution", exec.to_json()},
                       {"min_utilization", n.min_utilization}, {"pareto", n.pareto}};
  const auto start = std::chrono::steady_clock::now();
  uint64_t invalid = 0, written = 0;
  std::string first_error;
  std::vector<Row> front, top;  // --pareto's front so far; --export-onnx's fastest so far
  auto by_time = [](const Row& a, const Row& b) { return a.cost.time_us < b.cost.time_us; };
  Progress progress("tilewave nas");
  write_output(o.output, [&](std::ostream& os) {
    write_rows(os, header, {}, o.format);
    std::vector<std::thread> pool = launch(&buffers[0], 0);
    struct JoinAll {  // no worker outlives an error here
      std::vector<std::thread>& pool;
      ~JoinAll() {
        for (auto& th : pool)
          if (th.joinable()) th.join();
      }
    } join_all{pool};
    for (uint64_t first = 0, b = 0; first < mine; first += chunk, b ^= 1) {
      const uint64_t target = std::min(mine, first + chunk);
      while (done.load() < target && !failed.load()) {
        progress.update(done.load(), mine, "candidates");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      for (auto& th : pool) th.join();
      for (const auto& f : failures)
        if (!f.empty()) throw InputError(n.space, f);
      if (first + chunk < mine) pool = launch(&buffers[b ^ 1], first + chunk);  // the next chunk, while this one is written
      else pool.clear();
      std::vector<Row> kept;  // rows for --pareto and --export-onnx (copies: the buffer's storage is reused)
      for (const Row& r : buffers[b]) {
        if (!r.error.empty()) {
          if (invalid++ == 0) first_error = without_file(r.error, n.space);  // the error line names the space
          continue;
        }
        if (r.cost.utilization < n.min_utilization) continue;
        if (n.pareto || !n.export_dir.empty()) kept.push_back(r);
        if (!n.pareto) {
          os << r.text << '\n';
          ++written;
        }
      }
      if (!n.export_dir.empty()) {
        top.insert(top.end(), kept.begin(), kept.end());
        std::sort(top.begin(), top.end(), by_time);
        if (top.size() > size_t(n.top)) top.resize(size_t(n.top));
      }
      if (n.pareto) {
        front.insert(front.end(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
        front = pareto_front(std::move(front));
      }
    }
    // An empty answer is an error when no candidate could be built; one
    // that --min-utilization filtered empty is an answer.
    if (mine > 0 && invalid == mine)
      throw InputError(n.space, fmt::format("none of the {} candidates could be built; the first: {}", mine, first_error));
    if (invalid) note(fmt::format("{} (and {} other candidates not buildable)", first_error, invalid - 1));
    if (n.pareto) {
      write_rows(os, nullptr, front, o.format);
      written = front.size();
    }
  });
  progress.update(done.load(), mine, "candidates");
  progress.finish();
  if (o.format == "csv") write_csv_header(o.output, header);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print(std::cerr, "tilewave: nas: space '{}' holds {:.4g} candidates\n", printable(s.name), s.size());
  fmt::print(std::cerr, "tilewave: nas: {} candidates in {:.3f} s ({:.0f}/s on {} thread{}, written rows included), "
             "{} written{}\n", mine, seconds, seconds > 0 ? double(mine) / seconds : 0.0, threads,
             threads == 1 ? "" : "s", written, invalid ? fmt::format(", {} not buildable (left out)", invalid) : "");

  if (!n.export_dir.empty()) {
    std::filesystem::create_directories(n.export_dir);
    for (const auto& r : top) {
      const space::Candidate c = space::decode(s, r.encoding);
      const auto written =
          space::write_blocks(s, space::blocks_of(s, c), {batch, s.channels, s.height, s.width});
      const std::string file = (std::filesystem::path(n.export_dir) / fmt::format("{}_{}.onnx", file_stem(s.name), r.index)).string();
      write_output(file, [&](std::ostream& os) { os << written.proto->SerializeAsString(); });
    }
    fmt::print(std::cerr, "tilewave: nas: wrote the {} fastest candidates to {}\n", top.size(), n.export_dir);
  }
  return 0;
}

int cmd_nas_merge(const CommonOptions& o, const std::vector<std::string>& files) {
  json first_header;
  std::string format;
  std::set<uint64_t> shards_seen;
  uint64_t shard_count = 0;
  std::map<uint64_t, Row> rows;
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
    const bool csv = legacy_csv || line.rfind(kColumns[0], 0) == 0;
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
    const auto [i, n] = parse_shard(header["shard"].get<std::string>());
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
        Row r;
        r.index = index;
        r.cost.time_us = j.value("latency_us", 0.0);
        r.cost.flops = j.value("flops", int64_t(0));
        rows[index] = r;
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
        if (cells.size() != std::size(kColumns))
          throw InputError(fmt::format("{}:{}", path, number), "row does not have the nas columns");
        Row r;
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
    std::vector<Row> all;
    for (auto& [i, r] : rows) all.push_back(r);
    for (const auto& r : pareto_front(std::move(all))) keep.insert(r.index);
  }
  json header = first_header;
  header["shard"] = "0/1";
  header["merged_shards"] = shard_count;
  write_output(o.output, [&](std::ostream& os) {
    write_rows(os, header, {}, format);
    for (const auto& [index, text] : row_text)
      if (keep.empty() || keep.count(index)) os << text << "\n";
  });
  if (format == "csv") write_csv_header(o.output, header);
  fmt::print(std::cerr, "tilewave: nas-merge: {} shards, {} candidates\n", shard_count, row_text.size());
  return 0;
}

}  // namespace tilewave::cli
