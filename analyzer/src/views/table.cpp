// The terminal table (--format table, docs/report.md): 80 columns.
#include <algorithm>

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

const std::vector<std::string>& table_summaries() {
  static const std::vector<std::string> kinds{"op", "name", "node", "kernel"};
  return kinds;
}

void write_table(std::ostream& os, const Analysis& a, int worst_layers, const std::string& by_given) {
  views::require_parts(a, ResultParts{}, "table");
  const std::string& by = by_given.empty() ? table_summaries().front() : by_given;
  const Totals& t = a.total;
  fmt::print(os, "{} on {} ({}), batch {}, {}{}\n", printable(a.model_name), a.gpu_name, a.gpu_id, a.batch,
             a.exec.name(), a.runtime_calibrated ? "" : " (no parameters fitted on this runtime)");
  if (a.gpu_trust != Trust::calibrated) {
    // Where the numbers of a GPU not measured here come from (docs/calibration.md "Other GPUs").
    fmt::print(os, "  GPU file           {}, not measured here:", trust_name(a.gpu_trust));
    for (const auto& [owner, origin] : a.gpu_param_sources) fmt::print(os, "\n    {:<14} {}", owner, origin);
    fmt::print(os, "\n");
  }
  fmt::print(os, "  {} ONNX nodes -> {} kernels ({} nodes launch nothing){}\n", a.nodes, a.kernels.size(),
             a.free_nodes, a.unmodelled.empty() ? "" : fmt::format(", {} UNMODELLED", a.unmodelled.size()));
  fmt::print(os, "  predicted latency  {:.1f} us   throughput {:.0f} samples/s{}\n", t.time_us, t.throughput_per_s,
             a.partial ? "   (PARTIAL: unmodelled kernels left out)" : "");
  fmt::print(os, "  {:<19}{}\n", views::interval_label(), views::interval_text(a.interval));
  if (a.exec.launch == Launch::loop)
    fmt::print(os, "  schedule           {}: GPU busy {:.1f} us, host issue {:.1f} us (host {}{})\n",
               t.host_bound ? "host-bound" : "GPU-bound", t.gpu_busy_us, t.host_busy_us, printable(a.host_id),
               a.host_trust == "calibrated" ? "" : ", not calibrated");
  if (a.exec.launch == Launch::loop && t.time_high_us > t.time_low_us)
    fmt::print(os, "  other machines     {} to {}: machines of the host's kind, which take {:.2f}-{:.2f}x its issue time\n",
               views::fmt_time_us(t.time_low_us), views::fmt_time_us(t.time_high_us), a.host_spread_low,
               a.host_spread_high);
  if (a.exec.launch != Launch::loop)
    fmt::print(os, "  schedule           CUDA-graph replay: GPU busy {:.1f} us, launch gaps {:.1f} us\n", t.gpu_busy_us,
               std::max(0.0, t.time_us - t.gpu_busy_us));
  fmt::print(os, "  useful work        {}   DRAM traffic {}   intensity {:.1f} FLOP/B\n", si(double(t.flops), "FLOP"),
             si(double(t.bytes), "B"), t.bytes ? double(t.flops) / t.bytes : 0.0);
  fmt::print(os, "  memory             {} parameters, weights {}, peak activations {} (at {})\n",
             si(double(a.memory.params), ""), si(double(a.memory.weight_bytes), "B"),
             si(double(a.memory.peak_activation_bytes), "B"), printable(compact_name(a.memory.peak_at)));
  fmt::print(os, "  utilization        {} of the {:.0f} TFLOP/s {} peak ({} of the GPU's busy time)\n",
             pct(t.utilization), a.peak_tflops, dtype_name(a.dtype), pct(t.gpu_busy_utilization));
  fmt::print(os, "  bandwidth          {} over the step (DRAM {} at {:.2f} TB/s, L2 hits {} at {:.2f})\n",
             pct(t.bandwidth_utilization), si(double(t.dram_bytes), "B"), a.dram_gbs / 1000,
             si(double(t.l2_hit_bytes), "B"), a.l2_gbs / 1000);
  // Two causes a line, as loss_cause_names spells them.
  for (size_t i = 0; i < std::size(kLossCauses); ++i) {
    const LossCause cause = kLossCauses[i];
    fmt::print(os, "{}{} {}{}", i == 0 ? "  time lost to       " : i % 2 ? " " : "                     ",
               loss_cause_names(cause).label, pct(loss_share(t.losses, cause)),
               i + 1 == std::size(kLossCauses) ? "\n" : i % 2 ? ",\n" : ",");
  }
  for (size_t i = 0; i < a.by_bound.size(); ++i)
    fmt::print(os, "  {:<19}{}-bound: {} kernels, {} of time\n", i ? "" : "kernels by bound", a.by_bound[i].name,
               a.by_bound[i].kernels, pct(a.by_bound[i].step_share));

  auto groups = [&](const char* title, const std::vector<KernelGroup>& list, const char* column) {
    const size_t shown = std::min<size_t>(std::max(10, worst_layers), list.size());
    fmt::print(os, "\nBy {} ({} of {}, by time):\n", title, shown, list.size());
    fmt::print(os, "  {:<24} {:>7} {:>9} {:>10} {:>8} {:>6} {:>6}\n", column, "kernels", "time_us", "step_share", "FLOP",
               "util", "bw");
    for (size_t i = 0; i < shown; ++i) {
      const KernelGroup& g = list[i];
      fmt::print(os, "  {:<24} {:>7} {:>9.1f} {:>10} {:>8} {:>6} {:>6}\n", middle_ellipsis(printable(g.name), 24), g.kernels,
                 g.time_us, pct(g.step_share), si(double(g.flops), ""), pct(g.utilization), pct(g.bandwidth_utilization));
    }
  };
  if (by == "op") groups("op", a.by_op, "op");
  if (by == "name") groups("kernel name (what each kernel runs)", a.by_name, "runs");
  if (by == "node") {
    std::vector<const NodeFate*> nodes;
    for (const auto& f : a.nodes_fate) nodes.push_back(&f);
    std::stable_sort(nodes.begin(), nodes.end(), [](auto* x, auto* y) { return x->time_us > y->time_us; });
    const size_t shown = std::min<size_t>(size_t(std::max(worst_layers, 0)), nodes.size());
    fmt::print(os, "\nBy ONNX node ({} of {}, by the time of the kernels each heads):\n", shown, nodes.size());
    fmt::print(os, "  {:<34} {:<18} {:<10} {:>9} {:>10} {:>8} {:>9} {:>9} {:>9}\n", "node", "op", "fate", "time_us",
               "step_share", "params", "weights", "act_in", "act_out");
    for (size_t i = 0; i < shown; ++i) {
      const NodeFate& f = *nodes[i];
      fmt::print(os, "  {:<34} {:<18} {:<10} {:>9.1f} {:>10} {:>8} {:>9} {:>9} {:>9}\n",
                 middle_ellipsis(printable(compact_name(f.name)), 34), middle_ellipsis(printable(f.op), 18), fate_name(f.fate),
                 f.time_us, pct(f.step_share), si(double(f.params), ""), si(double(f.weight_bytes), "B"),
                 si(double(f.activation_read_bytes), "B"), si(double(f.activation_write_bytes), "B"));
    }
  }
  if (by == "kernel") {
    const size_t shown = std::min<size_t>(size_t(std::max(worst_layers, 0)), a.schedule.kernels.size());
    fmt::print(os, "\nKernels in launch order ({} of {}): GPU start and time, the GPU's wait before it:\n", shown,
               a.schedule.kernels.size());
    fmt::print(os, "  {:>5} {:<40} {:<22} {:>10} {:>9} {:>9}\n", "#", "kernel", "runs", "start_us", "time_us", "wait_us");
    for (size_t i = 0; i < shown; ++i) {
      const ScheduledKernel& s = a.schedule.kernels[i];
      const KernelResult& r = a.kernels[size_t(s.kernel)];
      fmt::print(os, "  {:>5} {:<40} {:<22} {:>10.1f} {:>9.2f} {:>9.2f}\n", i + 1,
                 middle_ellipsis(printable(compact_name(r.kernel.name)), 40), middle_ellipsis(printable(r.kernel.ops.text()), 22),
                 s.gpu_start_us, s.gpu_end_us - s.gpu_start_us, s.gpu_wait_us);
    }
  }

  std::vector<const KernelResult*> rows;
  for (const auto& r : a.kernels)
    if (r.cost) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](auto* x, auto* y) { return x->cost->time_us > y->cost->time_us; });
  const int shown = std::min<int>(worst_layers, int(rows.size()));
  fmt::print(os, "\nSlowest {} of {} kernels: name, bound and main loss; then op, shape, time, share\n"
                 "of the step, utilization, bandwidth utilization, tile/wave efficiency in %\n"
                 "(GEMM-like kernels):\n", shown, rows.size());
  for (int i = 0; i < shown; ++i) {
    const auto& r = *rows[i];
    const KernelCost& c = *r.cost;
    const bool gemm = c.path == CostPath::tensor_gemm || c.path == CostPath::cuda_gemm;
    const std::string why = fmt::format("{}-bound: {}", bound_name(c.bound), main_loss(c));
    fmt::print(os, "{:>3} {:<{}} {}\n", i + 1, middle_ellipsis(printable(compact_name(r.kernel.name)), 75 - why.size()),
               75 - why.size(), why);
    fmt::print(os, "    {:<10} {:<24} {:>8.1f} us {:>6} {:>6} {:>6} {:>7}\n", middle_ellipsis(printable(r.kernel.ops.text()), 10),
               middle_ellipsis(shape_text(r.kernel), 24), c.time_us, pct(t.time_us > 0 ? c.time_us / t.time_us : 0),
               pct(c.utilization), pct(c.bandwidth_utilization),
               gemm ? fmt::format("{:.0f}/{:.0f}", 100 * c.tile_eff, 100 * c.wave_eff) : std::string("-"));
  }
  if (!a.unmodelled.empty()) {
    fmt::print(os, "\nPARTIAL: {} kernels are unmodelled and left out of the totals, by cause:\n", a.unmodelled.size());
    for (const auto& c : a.unmodelled_causes)
      fmt::print(os, "  {} kernel{} (first: {}): {}\n", c.kernels, c.kernels == 1 ? "" : "s", printable(c.first),
                 printable(c.reason));
  }
  // The runtime steps among the rows shown, each once, in the order of the enum.
  std::vector<RuntimeStep> steps;
  for (int i = 0; i < shown; ++i)
    for (const auto& part : rows[size_t(i)]->kernel.ops.parts())
      if (const auto* step = std::get_if<RuntimeStep>(&part);
          step && std::find(steps.begin(), steps.end(), *step) == steps.end())
        steps.push_back(*step);
  std::sort(steps.begin(), steps.end());
  if (!steps.empty()) {
    os << "\nKernels a runtime adds (docs/model.md \"Runtime steps\"):\n";
    for (RuntimeStep step : steps) fmt::print(os, "  {}: {}\n", runtime_step_name(step), runtime_step_meaning(step));
  }
  fmt::print(os, "\nKernel times are inside the network (L2 reuse between kernels included); the\n"
                 "{:.1f} us launch gaps and waiting on the host are the schedule's, in the step time\n"
                 "(`tilewave layers` costs a kernel alone).\n"
                 "util = useful FLOPs / (time x peak); bw = the busier of DRAM and L2, of its rate;\n"
                 "docs/model.md explains every number;\n"
                 "--format json or csv gives all kernels.\n",
             a.launch_gap_us);
}

}  // namespace tilewave
