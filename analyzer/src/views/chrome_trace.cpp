// The predicted step as a Chrome trace (`--trace-out`, docs/report.md
// "Predicted timeline"): the JSON torch.profiler exports, so that Perfetto or
// chrome://tracing shows the prediction as profiler users read a measurement,
// and `tilewave check --trace` reads it back. Every figure comes from the
// analysis' schedule; this view only lays it out.
#include <fmt/format.h>

#include "tilewave/report.h"
#include "tilewave/trace_check.h"

namespace tilewave {

namespace {
// Lanes as Kineto numbers them: the host thread, then the GPU stream.
constexpr int kHostThread = 1;
constexpr int kGpuStream = 7;
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
  if (host_lane)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", kHostThread},
                      {"args", {{"name", fmt::format("host issuing ops (predicted, {})", a.host_name)}}}});
  int correlation = 0;
  for (const auto& s : a.schedule.kernels) {
    const KernelResult& r = a.kernels[size_t(s.kernel)];
    if (!r.cost) continue;
    ++correlation;
    json args = {{"ops", r.kernel.ops},
                 {"kind", kernel_kind(r)},
                 {"correlation", correlation},
                 {"flops", r.cost->flops},
                 {"bytes", r.cost->bytes},
                 {"utilization", r.cost->utilization},
                 {"main_loss", main_loss(*r.cost)},
                 {"gpu_wait_us", s.gpu_wait_us}};
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", r.kernel.name}, {"pid", 0}, {"tid", kGpuStream},
                      {"ts", s.gpu_start_us}, {"dur", s.gpu_end_us - s.gpu_start_us}, {"args", std::move(args)}});
    if (host_lane && s.host_end_us > s.host_start_us)
      events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", r.kernel.ops}, {"pid", 0}, {"tid", kHostThread},
                        {"ts", s.host_start_us}, {"dur", s.host_end_us - s.host_start_us},
                        {"args", {{"kernel", r.kernel.name}, {"correlation", correlation}}}});
  }
  // The step, as torch.profiler's schedule marks one.
  events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#0"}, {"pid", 0},
                    {"tid", kHostThread}, {"ts", 0.0}, {"dur", a.total.time_us}});
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", {{"tool", "tilewave"}, {"predicted", true}, {"model", a.model_path}, {"gpu", a.gpu_id},
                         {"step_us", a.total.time_us}}}};
}

void write_chrome_trace(std::ostream& os, const Analysis& a) { os << chrome_trace_json(a).dump() << "\n"; }

}  // namespace tilewave
