// The search engine of `tilewave nas` (search.h, docs/nas.md).
#include "tilewave/search.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <new>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/output_file.h"
#include "tilewave/run_options.h"
#include "tilewave/text.h"
#include "tilewave_onnx.pb.h"

namespace tilewave::space {

std::pair<uint64_t, uint64_t> parse_shard(const std::string& text) {
  // Digits only: sscanf's %llu would read "-1" as 2^64-1.
  const auto slash = text.find('/');
  uint64_t i = 0, n = 0;
  auto whole = [](const std::string& s, uint64_t& v) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  if (slash == std::string::npos || !whole(text.substr(0, slash), i) || !whole(text.substr(slash + 1), n) || n == 0 ||
      i >= n)
    throw UsageError("--shard", fmt::format("'{}' is not i/n with 0 <= i < n", printable(text)));
  return {i, n};
}

std::vector<SearchRow> pareto_front(std::vector<SearchRow> rows) {
  std::sort(rows.begin(), rows.end(), [](const SearchRow& a, const SearchRow& b) {
    return a.cost.time_us != b.cost.time_us ? a.cost.time_us < b.cost.time_us : a.cost.flops > b.cost.flops;
  });
  std::vector<SearchRow> front;
  int64_t best_flops = -1;
  for (auto& r : rows)
    if (r.cost.flops > best_flops) best_flops = r.cost.flops, front.push_back(std::move(r));
  std::sort(front.begin(), front.end(), [](const SearchRow& a, const SearchRow& b) { return a.index < b.index; });
  return front;
}

uint64_t sampling_total(const SearchSpace& s, const SearchOptions& o) {
  return Sampler(s, o.sampling, o.seed, o.samples).total();
}

Search::Search(const SearchSpace& s, const GpuModel& gpu, const ExecutionConfig& exec,
               std::shared_ptr<const HostModel> host, int64_t batch)
    : space_(s), batch_(batch) {
  evaluators_.push_back(std::make_unique<SpaceEvaluator>(s, gpu, exec, std::move(host), batch));
}

SearchResult Search::run(const SearchOptions& o, const SearchCallbacks& cb) {
  const SearchSpace& s = space_;
  const Sampler sampler(s, o.sampling, o.seed, o.samples);
  SearchResult result;
  result.total = sampler.total();
  const uint64_t shard = o.shard, shards = o.shards;  // named: the workers' lambda captures them
  if (shards == 0 || shard >= shards) throw InputError("--shard", fmt::format("'{}/{}' is not i/n with 0 <= i < n", shard, shards));
  const int threads = std::max(1, o.threads);
  result.threads = threads;

  // This shard's candidates: every n-th index of the whole sampling, drawn
  // in chunks. Two chunk buffers: while the workers fill one, this thread
  // hands the other on (or folds it into the front) and reports progress.
  // Each worker has its own evaluator; they share one table of costed blocks.
  const uint64_t mine = result.total / shards + (shard < result.total % shards ? 1 : 0);
  result.scored = mine;
  const uint64_t chunk = 16384 * uint64_t(threads);
  while (evaluators_.size() < size_t(threads)) evaluators_.push_back(evaluators_.front()->sibling());
  std::vector<SearchRow> buffers[2];
  std::atomic<uint64_t> done{0};
  std::vector<std::string> failures(static_cast<size_t>(threads));
  std::atomic<bool> failed{false};
  // Workers take the chunk's rows in slices of kSlice from a shared counter,
  // so that one left with costlier candidates (blocks not yet in the table)
  // does not hold the others idle at the chunk's end; rows keep their slots.
  constexpr uint64_t kSlice = 256;
  std::atomic<uint64_t> next_slice{0};
  auto work = [&](int t, std::vector<SearchRow>* rows, uint64_t first, uint64_t count) {
    try {
      Candidate c;
      for (uint64_t begin; (begin = next_slice.fetch_add(kSlice, std::memory_order_relaxed)) < count;) {
        const uint64_t end = std::min(count, begin + kSlice);
        for (uint64_t k = begin; k < end; ++k) {
          SearchRow& r = (*rows)[k];
          r.index = shard + (first + k) * shards;
          sampler.draw(r.index, c);
          encode(s, c, r.encoding);
          r.error.clear();
          r.text.clear();
          try {
            r.cost = evaluators_[size_t(t)]->evaluate(c);
            if (cb.format) cb.format(r, r.text);
          } catch (const InputError& e) {
            r.cost = {};
            r.error = e.what();
          }
        }
        done.fetch_add(end - begin, std::memory_order_relaxed);
      }
    } catch (const std::bad_alloc&) {
      failures[size_t(t)] = "out of memory (fewer --threads, or a smaller --samples chunk)";
      failed = true;
    } catch (const std::exception& e) {
      failures[size_t(t)] = e.what();
      failed = true;
    }
  };
  auto launch = [&](std::vector<SearchRow>* rows, uint64_t first) {
    const uint64_t count = std::min(chunk, mine - first);
    rows->resize(count);
    next_slice = 0;  // the previous chunk's workers are joined: none reads it
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) start_or_run(pool, [&work, t, rows, first, count] { work(t, rows, first, count); });
    return pool;
  };

  const auto start = std::chrono::steady_clock::now();
  auto by_time = [](const SearchRow& a, const SearchRow& b) { return a.cost.time_us < b.cost.time_us; };
  auto progress = [&] {
    if (cb.progress) cb.progress(done.load(), mine);
  };
  {
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
        progress();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      for (auto& th : pool) th.join();
      for (const auto& f : failures)
        if (!f.empty()) throw InputError(s.source_file, f);
      if (first + chunk < mine) pool = launch(&buffers[b ^ 1], first + chunk);  // the next chunk, while this one is handed on
      else pool.clear();
      std::vector<SearchRow> kept;  // rows for the front and the fastest (copies: the buffer's storage is reused)
      for (const SearchRow& r : buffers[b]) {
        if (!r.error.empty()) {
          if (result.invalid++ == 0) result.first_error = without_file(r.error, s.source_file);  // the error line names the space
          continue;
        }
        if (r.cost.bound == std::string_view("host")) ++result.host_bound;
        if (r.cost.utilization < o.min_utilization) continue;
        if (o.pareto || o.fastest > 0) kept.push_back(r);
        if (!o.pareto) {
          if (cb.row) cb.row(r);
          ++result.kept;
        }
      }
      if (o.fastest > 0) {
        result.fastest.insert(result.fastest.end(), kept.begin(), kept.end());
        std::sort(result.fastest.begin(), result.fastest.end(), by_time);
        if (result.fastest.size() > o.fastest) result.fastest.resize(o.fastest);
      }
      if (o.pareto) {
        result.front.insert(result.front.end(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
        result.front = pareto_front(std::move(result.front));
      }
    }
  }
  // An empty answer is an error when no candidate could be built; one that
  // min_utilization filtered empty is an answer.
  if (mine > 0 && result.invalid == mine)
    throw InputError(s.source_file,
                     fmt::format("none of the {} candidates could be built; the first: {}", mine, result.first_error));
  if (o.pareto) result.kept = result.front.size();
  progress();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<std::string> draw_encodings(const SearchSpace& s, const Sampler& sampler, uint64_t first, uint64_t count) {
  std::vector<std::string> out(count);
  Candidate c;
  for (uint64_t i = 0; i < count; ++i) {
    sampler.draw(first + i, c);
    encode(s, c, out[i]);
  }
  return out;
}

void export_candidate(const SearchSpace& s, const std::string& encoding, int64_t batch, const std::string& path) {
  const Candidate c = decode(s, encoding);
  if (batch < 1) throw InputError("batch", fmt::format("batch must be positive, not {}", batch));
  const WrittenModel written = write_blocks(s, blocks_of(s, c), {batch, s.channels, s.height, s.width});
  write_output(path, [&](std::ostream& os) { os << written.proto->SerializeAsString(); });
}

}  // namespace tilewave::space
