#include "timing.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "check.hpp"
#include "device.hpp"

namespace tw {

namespace {

// Spin ahead of a graph replay: covers cudaGraphLaunch's few-µs host latency.
constexpr double kGraphLeadUs = 30.0;

class Event {
 public:
  Event() { TW_CUDA(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class GraphExec {
 public:
  ~GraphExec() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  cudaGraphExec_t* out() { return &exec_; }
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

double elapsed_us(const Event& a, const Event& b) {
  float ms = 0;
  TW_CUDA(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return 1000.0 * ms;
}

// Ends a capture that went wrong and clears the (non-sticky) error it left.
void abandon_capture(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(stream, &status);
  if (status != cudaStreamCaptureStatusNone) {
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGetLastError();
}

// Captures R launches into an executable graph; false if any library call
// refuses to be captured (then the caller times plain launches instead).
bool capture_graph(cudaStream_t stream, const LaunchFn& launch, int copies, int launches,
                   GraphExec& exec) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  try {
    for (int i = 0; i < launches; ++i) launch(i % copies);
  } catch (const std::exception&) {
    abandon_capture(stream);
    return false;
  }
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || !graph) {
    abandon_capture(stream);
    return false;
  }
  cudaError_t err = cudaGraphInstantiate(exec.out(), graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  TW_CUDA(cudaGraphUpload(exec.get(), stream));
  return true;
}

// R: enough launches per replay that launch gaps vanish and a replay lasts
// budget/repeats, but at least one pass over all buffer copies when cheap.
int choose_launches(double launch_us, int copies, const TimingConfig& cfg) {
  double replay_target_us = cfg.budget_us / cfg.repeats;
  int r = static_cast<int>(replay_target_us / std::max(launch_us, 0.5));
  r = std::clamp(r, 1, cfg.max_launches_per_replay);
  if (r < copies && launch_us * copies * cfg.repeats <= 2 * cfg.budget_us)
    r = std::min(copies, cfg.max_launches_per_replay);
  return r;
}

// Long launches: fewer replays so the layer stays near its budget (min 3).
int choose_replays(double launch_us, int launches, const TimingConfig& cfg) {
  double replay_us = launch_us * launches;
  int n = static_cast<int>(cfg.budget_us / std::max(replay_us, 1.0));
  return std::clamp(n, std::min(3, cfg.repeats), cfg.repeats);
}

}  // namespace

double time_loop_us(cudaStream_t stream, const LaunchFn& launch, int copies, int launches) {
  // Lead long enough for the host to enqueue every launch (~60 µs per cuDNN call).
  enqueue_spin(stream, std::min(100.0 + 60.0 * launches, 3000.0));
  Event start, stop;
  TW_CUDA(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < launches; ++i) launch(i % copies);
  TW_CUDA(cudaEventRecord(stop.get(), stream));
  TW_CUDA(cudaEventSynchronize(stop.get()));
  return elapsed_us(start, stop) / launches;
}

double time_candidate_us(cudaStream_t stream, const LaunchFn& launch, int copies) {
  launch(0);  // first call: plan building and module loading stay out
  const double estimate_us = time_loop_us(stream, launch, copies, 1);
  const int launches = std::clamp(static_cast<int>(500.0 / std::max(estimate_us, 1.0)), 1, 10);
  GraphExec exec;
  if (!capture_graph(stream, launch, copies, launches, exec))
    return std::min(estimate_us, time_loop_us(stream, launch, copies, launches));
  TW_CUDA(cudaGraphLaunch(exec.get(), stream));  // warm replay
  double best_us = 1e30;
  for (int r = 0; r < 3; ++r) {
    Event start, stop;
    enqueue_spin(stream, kGraphLeadUs);
    TW_CUDA(cudaEventRecord(start.get(), stream));
    TW_CUDA(cudaGraphLaunch(exec.get(), stream));
    TW_CUDA(cudaEventRecord(stop.get(), stream));
    TW_CUDA(cudaEventSynchronize(stop.get()));
    best_us = std::min(best_us, elapsed_us(start, stop) / launches);
  }
  return best_us;
}

TimingResult time_launches(cudaStream_t stream, const LaunchFn& launch, int copies,
                           const TimingConfig& cfg) {
  // First launch alone: lazy module loading and library set-up stay out of the estimate.
  launch(0);
  TW_CUDA(cudaStreamSynchronize(stream));
  double estimate_us = time_loop_us(stream, launch, copies, std::max(cfg.warmup, 1));

  TimingResult result;
  result.launches_per_replay = choose_launches(estimate_us, copies, cfg);
  result.replays = choose_replays(estimate_us, result.launches_per_replay, cfg);
  const int launches = result.launches_per_replay;

  GraphExec exec;
  result.used_graph = capture_graph(stream, launch, copies, launches, exec);
  auto run_once = [&] {
    if (result.used_graph)
      TW_CUDA(cudaGraphLaunch(exec.get(), stream));
    else
      for (int i = 0; i < launches; ++i) launch(i % copies);
  };
  run_once();  // warm replay: graph upload and first-replay costs excluded
  TW_CUDA(cudaStreamSynchronize(stream));

  // Each replay sits behind a short spin, so neither graph-launch latency nor
  // (in the fallback) host call overhead lands inside the timed interval.
  const double lead_us = result.used_graph ? kGraphLeadUs : std::min(100.0 + 60.0 * launches, 3000.0);
  std::vector<Event> starts(result.replays), stops(result.replays);
  for (int r = 0; r < result.replays; ++r) {
    enqueue_spin(stream, lead_us);
    TW_CUDA(cudaEventRecord(starts[r].get(), stream));
    run_once();
    TW_CUDA(cudaEventRecord(stops[r].get(), stream));
  }
  TW_CUDA(cudaEventSynchronize(stops.back().get()));

  std::vector<double> per_launch_us;
  for (int r = 0; r < result.replays; ++r)
    per_launch_us.push_back(elapsed_us(starts[r], stops[r]) / launches);
  std::sort(per_launch_us.begin(), per_launch_us.end());
  size_t n = per_launch_us.size();
  result.median_us = n % 2 ? per_launch_us[n / 2]
                           : 0.5 * (per_launch_us[n / 2 - 1] + per_launch_us[n / 2]);
  result.min_us = per_launch_us.front();
  result.max_us = per_launch_us.back();
  return result;
}

}  // namespace tw
