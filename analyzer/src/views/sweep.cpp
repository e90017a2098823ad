// `tilewave sweep`: one model over batch sizes.
#include <algorithm>
#include <cmath>

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

json sweep_to_json(const std::vector<Analysis>& as) {
  json rows = json::array();
  for (const auto& a : as) {
    json point = totals_to_json(a.total);
    point.update({{"batch", a.batch}, {"host_bound", a.total.host_bound}, {"partial", a.partial}});  // host_bound: bound_by == "host"
    rows.push_back(std::move(point));
  }
  if (as.empty()) return views::versioned({{"model", ""}, {"points", rows}});
  return views::versioned({{"model", as[0].model_name},     {"model_path", as[0].model_path}, {"gpu", as[0].gpu_id},
          {"gpu_trust", trust_name(as[0].gpu_trust)},  {"execution", as[0].exec.to_json()},
          {"host", as[0].host_id.empty() ? json(nullptr) : json(as[0].host_id)}, {"points", rows},
          {"notes", notes_json(as, "batches")}});
}

json notes_json(const std::vector<Analysis>& as, const char* what) {
  json notes = json::array();
  if (auto note = host_bound_note(count_host_bound(as), as.size(), what)) notes.push_back(*note);
  return notes;
}

void write_sweep_table(std::ostream& os, const std::vector<Analysis>& as) {
  if (as.empty()) return;
  fmt::print(os, "{} on {}{}, {}, {}\n", printable(as[0].model_name), as[0].gpu_name, trust_mark(as[0].gpu_trust),
             as[0].exec.name(), views::host_caption(as[0]));
  fmt::print(os, "{:>6} {:>12} {:>14} {:>7} {:<9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  {}\n", "batch", "time_us",
             "samples/s", "util", "bound", "tile", "wave", "eff", "mem", "fixed", "idle", "utilization bar");
  double max_u = 0;
  for (const auto& a : as) max_u = std::max(max_u, a.total.utilization);
  for (const auto& a : as) {
    const Losses& l = a.total.losses;
    const int bar = max_u > 0 ? int(std::round(30 * a.total.utilization / max_u)) : 0;
    fmt::print(os, "{:>6} {:>12.1f} {:>14.0f} {:>7} {:<9} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6}  {}{}{}\n", a.batch,
               a.total.time_us, a.total.throughput_per_s, pct(a.total.utilization), a.total.bound, pct(l.tile),
               pct(l.wave), pct(l.efficiency), pct(l.memory), pct(l.fixed), pct(l.idle), std::string(bar, '#'),
               a.total.host_bound ? " " + views::bound_with_range(a.total) : std::string(), a.partial ? " PARTIAL" : "");
  }
  fmt::print(os, "tile/wave/eff/mem/fixed/idle: share of the step lost to each cause, idle the GPU's wait between "
                 "kernels (docs/model.md)\nbound: what sets the step: the host, or kernels bound by compute, memory, "
                 "latency, tile, wave or cuda-core\n");
  for (const auto& note : notes_json(as, "batches")) views::write_note(os, note.get<std::string>());
  if (const std::string legend = trust_legend(as[0].gpu_trust); !legend.empty()) fmt::print(os, "{}\n", legend);
}

void write_totals_csv(std::ostream& os, const std::vector<Analysis>& as) {
  views::write_csv_version(os);
  os << "model,gpu,gpu_trust,execution,batch,time_us,gpu_busy_us,throughput_per_s,utilization,bandwidth_utilization,"
        "host_bound,loss_tile,loss_wave,loss_efficiency,loss_memory,loss_fixed,loss_idle,host,time_low_us,time_high_us,"
        "bound,partial\n";
  for (const auto& a : as) {
    const Losses& l = a.total.losses;
    fmt::print(os, "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", views::csv_field(a.model_name),
               views::csv_field(a.gpu_id), trust_name(a.gpu_trust), views::csv_field(a.exec.name()), a.batch, a.total.time_us,
               a.total.gpu_busy_us, a.total.throughput_per_s, a.total.utilization, a.total.bandwidth_utilization,
               a.total.host_bound ? "true" : "false", l.tile, l.wave, l.efficiency, l.memory, l.fixed, l.idle,
               views::csv_field(a.host_id), a.total.time_low_us, a.total.time_high_us, a.total.bound,
               a.partial ? "true" : "false");
  }
}

}  // namespace tilewave
