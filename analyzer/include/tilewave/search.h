// A search over a space (docs/nas.md): candidates drawn by a Sampler, this
// shard's share of them costed by SpaceEvaluators on worker threads, the
// candidates below a utilization dropped, and what is kept handed back in
// index order, or kept whole as the latency-FLOPs front and the fastest few.
// `tilewave nas` is this engine with options and views around it; Python's
// Space and Scorer use its pieces (draw_encodings, export_candidate).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tilewave/exec_config.h"
#include "tilewave/gpu_model.h"
#include "tilewave/search_space.h"
#include "tilewave/space_cost.h"

namespace tilewave::space {

struct SearchOptions {
  Sampling sampling = Sampling::replacement;
  uint64_t samples = 1000;  // the whole sampling's candidates (enumerate: the space's size instead)
  uint64_t seed = 1;
  uint64_t shard = 0, shards = 1;  // this run takes every shards-th candidate from the shard-th
  int threads = 1;
  double min_utilization = 0;  // candidates below it are dropped
  bool pareto = false;         // keep only the latency-vs-FLOPs front (SearchResult::front)
  size_t fastest = 0;          // also keep this many of the fastest kept candidates (SearchResult::fastest)
};

// "i/n" with 0 <= i < n; InputError naming --shard otherwise.
std::pair<uint64_t, uint64_t> parse_shard(const std::string& text);

// One candidate of a search.
struct SearchRow {
  uint64_t index = 0;  // its position in the whole sampling
  std::string encoding;
  CandidateCost cost;
  std::string error;  // a candidate the space cannot build (feature map below 1x1)
  std::string text;   // the row as a view writes it, formatted by the worker that costed it
};

// The latency-FLOPs front, in index order: no other row is as fast with more FLOPs.
std::vector<SearchRow> pareto_front(std::vector<SearchRow> rows);

struct SearchResult {
  uint64_t total = 0;    // candidates of the whole sampling (every shard's)
  uint64_t scored = 0;   // this shard's
  uint64_t invalid = 0;  // of them not buildable, left out
  std::string first_error;          // the first of those, without the space file's name
  // Of the buildable ones, those whose step the host sets (CandidateCost::bound "host"), filters or not.
  uint64_t host_bound = 0;
  uint64_t kept = 0;                // rows handed to SearchCallbacks::row, or the front's size with pareto
  std::vector<SearchRow> front;     // pareto: the front
  std::vector<SearchRow> fastest;   // SearchOptions::fastest rows, fastest first
  int threads = 1;
  double seconds = 0;  // the run's wall time, the callbacks' included
};

struct SearchCallbacks {
  // Formats a costed row into its text (on the worker threads, so that the
  // writing thread only copies bytes); may be empty.
  std::function<void(const SearchRow&, std::string&)> format;
  // Each kept row, in index order, on the calling thread (not with pareto).
  std::function<void(const SearchRow&)> row;
  // Candidates costed so far of this shard's, on the calling thread.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

// The candidates of a sampling (every shard's): InputError naming the space
// file when the mode cannot give them (search_space.h's Sampler).
uint64_t sampling_total(const SearchSpace& s, const SearchOptions& o);

// A search of one space on one target: a GPU, an execution configuration,
// the host of a plain loop (null: builtin_host()) and a batch.
class Search {
 public:
  Search(const SearchSpace& s, const GpuModel& gpu, const ExecutionConfig& exec, std::shared_ptr<const HostModel> host,
         int64_t batch);
  // Candidates are drawn in chunks, so that memory stays flat however many
  // there are. Throws InputError naming the space file when a worker fails
  // or when none of this shard's candidates can be built (one that
  // min_utilization filters empty is an answer).
  // Its evaluators keep their table of costed blocks from run to run.
  SearchResult run(const SearchOptions& o, const SearchCallbacks& cb);
  int64_t batch() const { return batch_; }

 private:
  const SearchSpace& space_;
  int64_t batch_;
  std::vector<std::unique_ptr<SpaceEvaluator>> evaluators_;  // one per thread, siblings of the first
};

// Candidates first..first+count-1 of a sampling, as their encodings.
std::vector<std::string> draw_encodings(const SearchSpace& s, const Sampler& sampler, uint64_t first, uint64_t count);

// The candidate of this encoding written as ONNX at this batch (InputError
// for an encoding that does not fit the space, or a batch below 1).
void export_candidate(const SearchSpace& s, const std::string& encoding, int64_t batch, const std::string& path);

}  // namespace tilewave::space
