// Kernel timing: warm-up, then CUDA-graph replay of R launches over rotating
// buffer sets; per-launch time = replay time / R; median over repeats.
#pragma once

#include <cuda_runtime.h>

#include <functional>

namespace tw {

struct TimingConfig {
  int warmup = 5;                    // untimed launches before timing
  int repeats = 7;                   // timed graph replays; median reported
  double budget_us = 30000;          // cap on timed work per layer
  int max_launches_per_replay = 50;  // R upper bound
  // conv autotune over the cuDNN graph API's engine configs (op_conv.cu):
  int conv_plans = 10;               // most execution plans timed per problem (0: graph API off)
  double conv_tune_ms = 250;         // no new plan is built once a problem's graph-API tuning took this long
};

struct TimingResult {
  double median_us = 0;  // per launch
  double min_us = 0;
  double max_us = 0;
  int launches_per_replay = 0;
  int replays = 0;
  bool used_graph = false;
};

// Enqueues one launch of the kernel under test on the stream, using buffer set `copy`.
using LaunchFn = std::function<void(int copy)>;

TimingResult time_launches(cudaStream_t stream, const LaunchFn& launch, int copies,
                           const TimingConfig& cfg);

// Mean time of `launches` back-to-back launches, bracketed by events (no graph),
// queued behind a short GPU spin so host call overhead is not measured.
double time_loop_us(cudaStream_t stream, const LaunchFn& launch, int copies, int launches);

// Quick timing of one autotune candidate, free of host overhead: one warm-up
// launch, then a graph of up to 10 launches replayed 3 times; the fastest
// replay's per-launch time (plain event loop if capture fails).
double time_candidate_us(cudaStream_t stream, const LaunchFn& launch, int copies);

}  // namespace tw
