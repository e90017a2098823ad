// The predicted step as a Chrome trace (`--trace-out`, docs/report.md
// "Predicted timeline"): the JSON torch.profiler exports, so that Perfetto or
// chrome://tracing shows the prediction as profiler users read a measurement,
// and `tilewave check --trace` reads it back. Every figure comes from the
// analysis' schedule; this view only lays it out.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "format.h"
#include "tilewave/report.h"
#include "tilewave/json_input.h"
#include "tilewave/trace_check.h"

namespace tilewave {

namespace {
// Lanes as Kineto numbers them: the host thread, then the GPU stream.
constexpr int kHostThread = 1;
constexpr int kGpuStream = 7;
// The step starts here, not at 0: DevTools' Performance panel takes an event
// at ts 0 for one without a time and leaves it out of the trace's bounds, so
// the first op and the step annotation began before its window
// (tests/trace_viewer_test.sh). Viewers show times from the trace's start.
constexpr double kOriginUs = 1000.0;

// "ts" and "dur" of a slice from start to end (us into the step) such that
// ts + dur, as a viewer adds the two doubles, does not pass end: DevTools
// puts a slice that begins before the previous one's ts + dur inside it, and
// back-to-back ops drew as calls of one another by one ulp.
std::pair<double, double> slice(double start_us, double end_us) {
  const double ts = kOriginUs + start_us, stop = kOriginUs + end_us;
  double dur = std::max(0.0, stop - ts);
  while (dur > 0 && ts + dur > stop) dur = std::nextafter(dur, 0.0);
  return {ts, dur};
}
}  // namespace

nlohmann::json chrome_trace_json(const Analysis& a) {
  using json = nlohmann::json;
  json events = json::array();
  const std::string process = fmt::format("tilewave prediction: {} on {}, batch {}, {}", a.model_name, a.gpu_name,
                                          a.batch, a.exec.name());
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 0}, {"args", {{"name", process}}}});
  events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", kGpuStream},
                    {"args", {{"name", "GPU stream (predicted)"}}}});
  const bool host_lane = a.exec.launch == Launch::loop;
  // A CUDA graph's host thread holds only the step annotation; named all the
  // same, lest viewers show a bare "Thread 1".
  events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", kHostThread},
                    {"args", {{"name", host_lane ? fmt::format("host issuing ops (predicted, {})", a.host_name)
                                                 : std::string("host (predicted: one CUDA graph launch, no ops)")}}}});
  int correlation = 0;
  for (const auto& s : a.schedule.kernels) {
    const KernelResult& r = a.kernels[size_t(s.kernel)];
    if (!r.cost) continue;
    ++correlation;
    json args = {{"ops", r.kernel.ops.text()},
                 {"kind", kernel_kind(r)},
                 {"correlation", correlation},
                 {"flops", r.cost->flops},
                 {"bytes", r.cost->bytes},
                 {"utilization", r.cost->utilization},
                 {"main_loss", main_loss(*r.cost)},
                 {"gpu_wait_us", s.gpu_wait_us}};
    const auto [gpu_ts, gpu_dur] = slice(s.gpu_start_us, s.gpu_end_us);
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", r.kernel.name}, {"pid", 0}, {"tid", kGpuStream},
                      {"ts", gpu_ts}, {"dur", gpu_dur}, {"args", std::move(args)}});
    if (host_lane && s.host_end_us > s.host_start_us) {
      const auto [host_ts, host_dur] = slice(s.host_start_us, s.host_end_us);
      events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", r.kernel.ops.text()}, {"pid", 0}, {"tid", kHostThread},
                        {"ts", host_ts}, {"dur", host_dur},
                        {"args", {{"kernel", r.kernel.name}, {"correlation", correlation}}}});
    }
  }
  // The step, as torch.profiler's schedule marks one.
  events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#0"}, {"pid", 0},
                    {"tid", kHostThread}, {"ts", kOriginUs}, {"dur", a.total.time_us}});
  return views::versioned({{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"tool", "tilewave"}, {"predicted", true}, {"model", a.model_path}, {"gpu", a.gpu_id},
                         {"step_us", a.total.time_us}, {"origin_us", kOriginUs}}}});
}

void write_chrome_trace(std::ostream& os, const Analysis& a) { os << json_text(chrome_trace_json(a)) << "\n"; }

}  // namespace tilewave
