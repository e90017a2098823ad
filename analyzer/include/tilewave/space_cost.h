// Costing search-space candidates fast (docs/nas.md "How a candidate is
// costed"). Each distinct block (kind, parameters, input shape) is written,
// lowered by the runtime profile and costed by cost_network() once, in the
// context every block of a chain has: its input just written by the kernel
// before it (unless it is the first block) and its output read first by the
// kernel after it (unless it is the last). A candidate's cost is then a sum over its blocks, equal
// to cost_network() of the whole candidate's kernel graph (tests/test_space.cpp
// checks it), at the price of a few table look-ups.
#pragma once
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tilewave/dtype.h"
#include "tilewave/gpu_model.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/lowering.h"
#include "tilewave/network_cost.h"
#include "tilewave/search_space.h"

namespace tilewave::space {

struct CandidateCost {
  double time_us = 0;
  int64_t flops = 0, bytes = 0, params = 0;
  int kernels = 0;
  double utilization = 0;       // useful FLOPs / (time x peak)
  double throughput_per_s = 0;  // samples per second
  Losses losses;                // time-weighted shares
  const char* bound = "";      // what sets its step: NetworkTotals::bound()
  const char* main_loss = "";   // the largest share's key (loss_cause_names, kernel_cost.h): tile, wave, efficiency, memory, fixed or idle
};

// A segment's memo key: place, input shape, and up to two blocks' kinds and parameters.
struct SegmentKey {
  std::array<int64_t, 18> v{};
  bool operator==(const SegmentKey& o) const { return v == o.v; }
};
struct SegmentKeyHash {
  size_t operator()(const SegmentKey& k) const {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int64_t x : k.v) h = (h ^ uint64_t(x)) * 0x100000001b3ULL, h ^= h >> 29;
    return size_t(h);
  }
};
struct SegmentCost {
  NetworkTotals totals;
  std::vector<LaunchItem> items;  // its costed kernels, for a plain loop's schedule of the whole candidate
  Shape4 output;
  int64_t params = 0;
};

// One per thread. Each keeps its own block table, read without locks; a
// block it has not seen is taken from the table its siblings share (so that
// each block is lowered once per run, whatever the thread count) or costed
// and put there.
class SpaceEvaluator {
 public:
  // Under a whole execution configuration (docs/model.md "Execution
  // configuration"); a plain loop is scheduled on `host` (null: builtin_host()).
  // `gpu` is specialised to the configuration here (gpu_for).
  SpaceEvaluator(const SearchSpace& space, const GpuModel& gpu, const ExecutionConfig& exec,
                 std::shared_ptr<const HostModel> host, int64_t batch);
  // Its CostModel refers to its own GpuModel: it stays where it was made.
  SpaceEvaluator(const SpaceEvaluator&) = delete;
  SpaceEvaluator& operator=(const SpaceEvaluator&) = delete;
  // Another evaluator of the same space, GPU, runtime, dtype and batch,
  // sharing this one's table of costed blocks: one per further thread.
  std::unique_ptr<SpaceEvaluator> sibling() const;
  CandidateCost evaluate(const Candidate& c);
  size_t distinct_blocks() const { return memo_.size(); }

 private:
  struct SharedTable {
    std::mutex mutex;
    std::unordered_map<SegmentKey, SegmentCost, SegmentKeyHash> segments;
  };
  SpaceEvaluator(const SearchSpace& space, const GpuModel& gpu, const ExecutionConfig& exec,
                 std::shared_ptr<const HostModel> host, int64_t batch, std::shared_ptr<SharedTable> shared);
  // One block, or a block with the head after it (space_cost.cpp says when).
  const SegmentCost& segment_cost(const Block* blocks, size_t count, const Shape4& in, bool first, bool last);
  SegmentCost cost_segment(const Block* blocks, size_t count, const Shape4& in, bool first, bool last) const;

  const SearchSpace& space_;
  GpuModel gpu_;
  CostModel cost_model_;
  ExecutionConfig exec_;
  std::shared_ptr<const HostModel> host_;
  int64_t batch_;
  double peak_flops_;
  std::unordered_map<SegmentKey, SegmentCost, SegmentKeyHash> memo_;
  std::shared_ptr<SharedTable> shared_;
  std::vector<Block> blocks_;  // the candidate's, reused
  std::vector<LaunchItem> items_;  // the candidate's launches under a plain loop, reused
};

}  // namespace tilewave::space
