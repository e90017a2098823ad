// The JSON view of an analysis (--format json), and of a search candidate.
#include "tilewave/layer_set.h"
#include "tilewave/json_input.h"
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format.h"
#include "tilewave/report.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave {

using views::loss_json;
using views::pct;
using views::si;

// One kernel's row of the JSON document, as text: the one definition of its
// fields, which write_json streams and analysis_to_json parses back.
std::string kernel_json(const KernelResult& r) {
  // Names from the file need not be valid UTF-8: replaced, not fatal.
  const auto text = [](const std::string& v) { return json(v).dump(-1, ' ', false, json::error_handler_t::replace); };
  std::string row = fmt::format("{{\"name\":{},\"op\":{},\"nodes\":{},\"host_call\":\"{}\",", text(r.kernel.name),
                                text(r.kernel.ops.text()), r.kernel.nodes.size(), host_call_name(host_call_of(r.kernel)));
  if (r.kernel.host_views > 0) row += fmt::format("\"host_views\":{},", r.kernel.host_views);
  if (r.cost) {
    row += "\"layer\":" + json_text(layer_to_json(*r.kernel.layer)) + "," + cost_fields(*r.cost);
  } else {
    row += "\"unmodelled\":" + text(r.kernel.unmodelled_reason);
  }
  return row + '}';
}

// A CUDA-graph replay is never host-bound (schedule.cpp), so host_bound alone says who sets the pace.
json totals_to_json(const Totals& t) {
  return {{"flops", t.flops},
          {"bytes", t.bytes},
          {"time_us", t.time_us},
          {"time_low_us", t.time_low_us},
          {"time_high_us", t.time_high_us},
          {"gpu_busy_us", t.gpu_busy_us},
          {"host_busy_us", t.host_busy_us},
          {"bound_by", t.host_bound ? "host" : "gpu"},
          {"bound", t.bound},
          {"utilization", t.utilization},
          {"gpu_busy_utilization", t.gpu_busy_utilization},
          {"dram_bytes", t.dram_bytes},
          {"l2_hit_bytes", t.l2_hit_bytes},
          {"bandwidth_utilization", t.bandwidth_utilization},
          {"throughput_per_s", t.throughput_per_s},
          {"kernels", t.kernels},
          {"loss", loss_json(t.losses)}};
}

json analysis_summary_json(const Analysis& a) {
  return {{"model", a.model_name},
          {"model_path", a.model_path},
          {"gpu", a.gpu_id},
          {"gpu_name", a.gpu_name},
          {"gpu_trust", trust_name(a.gpu_trust)},
          {"gpu_param_sources", [&] {
             json j = json::object();
             for (const auto& [owner, origin] : a.gpu_param_sources) j[owner] = origin;
             return j;
           }()},
          {"peak_tflops", a.peak_tflops},
          {"batch", a.batch},
          {"dtype", dtype_name(a.dtype)},
          {"runtime", a.runtime},
          {"runtime_calibrated", a.runtime_calibrated},
          {"execution", a.exec.to_json()},
          {"host", a.host_id.empty() ? json(nullptr)
                                     : json{{"id", a.host_id},
                                            {"name", a.host_name},
                                            {"trust", a.host_trust},
                                            {"machine_spread", {{"low", a.host_spread_low}, {"high", a.host_spread_high}}}}},
          {"launch_gap_us", a.launch_gap_us},
          {"nodes", a.nodes},
          {"free_nodes", a.free_nodes},
          {"total", totals_to_json(a.total)},
          {"interval", json{{"coverage", PredictionInterval::coverage},
                            {"regime", a.interval.regime},
                            {"network_class", a.interval.network_class},
                            {"measured", a.interval.measured()},
                            {"basis", a.interval.basis},
                            {"low_factor", a.interval.low_factor},
                            {"high_factor", a.interval.high_factor},
                            {"low_us", a.interval.low_us},
                            {"high_us", a.interval.high_us},
                            {"why_none", a.interval.why_none}}},
          {"unmodelled", a.unmodelled},
          {"partial", a.partial}};
}

json analysis_to_json(const Analysis& a, bool with_layers) {
  views::require_parts(a, ResultParts{}, "JSON");
  json layers = json::array();
  if (with_layers)
    for (const auto& r : a.kernels) layers.push_back(json::parse(kernel_json(r)));
  // Built without the layers, which are moved in: an initializer list would copy them.
  json out = views::versioned(analysis_summary_json(a));
  json nodes = json::array();
  for (const auto& f : a.nodes_fate)
    nodes.push_back({{"name", f.name},
                     {"op", f.op},
                     {"fate", fate_name(f.fate)},
                     {"kernels", f.kernels},
                     {"params", f.params},
                     {"weight_bytes", f.weight_bytes},
                     {"activation_read_bytes", f.activation_read_bytes},
                     {"activation_write_bytes", f.activation_write_bytes},
                     {"time_us", f.time_us},
                     {"step_share", f.step_share},
                     {"gpu_busy_share", f.gpu_busy_share},
                     {"utilization", f.utilization},
                     {"loss", loss_json(f.losses)}});
  out["node_fates"] = std::move(nodes);
  // The table's --by op and --by name summaries.
  const auto groups = [](const std::vector<KernelGroup>& list) {
    json rows = json::array();
    for (const auto& g : list)
      rows.push_back({{"name", g.name},
                      {"kernels", g.kernels},
                      {"time_us", g.time_us},
                      {"step_share", g.step_share},
                      {"gpu_busy_share", g.gpu_busy_share},
                      {"flops", g.flops},
                      {"dram_bytes", g.dram_bytes},
                      {"l2_hit_bytes", g.l2_hit_bytes},
                      {"utilization", g.utilization},
                      {"bandwidth_utilization", g.bandwidth_utilization}});
    return rows;
  };
  out["by_op"] = groups(a.by_op);
  out["by_name"] = groups(a.by_name);
  out["memory"] = {{"params", a.memory.params},
                   {"weight_bytes", a.memory.weight_bytes},
                   {"peak_activation_bytes", a.memory.peak_activation_bytes},
                   {"peak_at", a.memory.peak_at}};
  // Both timelines (docs/model.md "Schedule"): per costed kernel, its index
  // in "layers", the host's issue interval and the GPU's run, µs from the step's start.
  json timeline = json::array();
  for (const auto& k : a.schedule.kernels)
    timeline.push_back({k.kernel, k.host_start_us, k.host_end_us, k.gpu_start_us, k.gpu_end_us});
  out["schedule"] = {{"launch", launch_name(a.schedule.launch)},
                     {"step_us", a.schedule.step_us},
                     {"gpu_busy_us", a.schedule.gpu_busy_us},
                     {"gpu_idle_us", a.schedule.gpu_idle_us},
                     {"host_busy_us", a.schedule.host_busy_us},
                     {"host_bound", a.schedule.host_bound},
                     {"columns", {"layer", "host_start_us", "host_end_us", "gpu_start_us", "gpu_end_us"}},
                     {"timeline", std::move(timeline)}};
  out["layers"] = std::move(layers);
  return out;
}

json candidate_to_json(const space::CandidateCost& c, bool with_losses) {
  // latency_us: time_us under its former name, until 1.0 (docs/report.md "Field names").
  json j = {{"flops", c.flops},   {"params", c.params},     {"time_us", c.time_us},
            {"throughput_per_s", c.throughput_per_s}, {"utilization", c.utilization},
            {"main_loss", c.main_loss}, {"kernels", c.kernels}, {"latency_us", c.time_us}, {"bound", c.bound}};
  if (with_losses) j["loss"] = loss_json(c.losses);
  return j;
}

// The same document as analysis_to_json(a).dump(2), written without
// building a json value per kernel, and streamed kernel by kernel: for a
// network of hundreds of kernels that took most of a call's time
// (docs/performance.md "Start-up").
void write_json(std::ostream& os, const Analysis& a) {
  const std::string top = analysis_to_json(a, false).dump(2, ' ', false, json::error_handler_t::replace);
  const std::string placeholder = "\"layers\": []";
  const auto at = top.find(placeholder);
  os.write(top.data(), std::streamsize(at));
  os << "\"layers\": [";
  for (size_t i = 0; i < a.kernels.size(); ++i) os << (i ? ",\n    " : "\n    ") << kernel_json(a.kernels[i]);
  os << (a.kernels.empty() ? "]" : "\n  ]");
  os.write(top.data() + at + placeholder.size(), std::streamsize(top.size() - at - placeholder.size()));
  os << "\n";
}

}  // namespace tilewave
