// `tilewave compare`: models under several GPUs, runtimes, dtypes or
// batches, one row each; JSON with the same fields. Two models in one
// configuration also get the comparison's findings.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format.h"
#include "tilewave/report.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave {

void write_compare_table(std::ostream& os, const std::vector<Analysis>& as, const NetworkComparison* networks) {
  if (as.empty()) return;
  bool several_models = false;
  for (const auto& a : as) several_models |= a.model_path != as.front().model_path;
  if (several_models)
    fmt::print(os, "{} rows: models side by side\n\n", as.size());
  else
    fmt::print(os, "{}: predicted on {} configuration{}\n\n", printable(as.front().model_name), as.size(),
               as.size() == 1 ? "" : "s");
  if (several_models) fmt::print(os, "{:<18} ", "model");
  fmt::print(os, "{:<9} {:<27} {:>5} {:>10} {:>10} {:>6} {:<9}  {}\n", "gpu", "configuration", "batch", "latency",
             "samples/s", "util", "bound", "time lost: tile/wave/eff/mem/fixed/idle");
  std::vector<std::string> legends;
  for (const auto& a : as) {
    const Losses& l = a.total.losses;
    const std::string mark = trust_mark(a.gpu_trust);
    const std::string legend = trust_legend(a.gpu_trust);
    if (!legend.empty() && std::find(legends.begin(), legends.end(), legend) == legends.end()) legends.push_back(legend);
    const std::string latency = views::fmt_time_us(a.total.time_us);
    if (several_models) fmt::print(os, "{:<18} ", middle_ellipsis(printable(a.model_name), 18));
    fmt::print(os, "{:<9} {:<27} {:>5} {:>10} {:>10.0f} {:>5.1f}% {:<9}  {:.0f}/{:.0f}/{:.0f}/{:.0f}/{:.0f}/{:.0f}%{}{}\n",
               middle_ellipsis(printable(a.gpu_id) + mark, 9), a.exec.name(), a.batch, latency,
               a.total.throughput_per_s, 100 * a.total.utilization, a.total.bound, 100 * l.tile, 100 * l.wave, 100 * l.efficiency,
               100 * l.memory, 100 * l.fixed, 100 * l.idle,
               a.total.host_bound ? " " + views::bound_with_range(a.total) : std::string(), a.partial ? " PARTIAL" : "");
  }
  if (!legends.empty()) os << "\n";
  for (const auto& l : legends) os << l << "\n";
  // One host issues every loop of the run, whatever the GPU (docs/model.md "Schedule").
  std::vector<std::string> hosts;
  for (const auto& a : as)
    if (a.exec.launch == Launch::loop && std::find(hosts.begin(), hosts.end(), views::host_caption(a)) == hosts.end())
      hosts.push_back(views::host_caption(a));
  for (const auto& h : hosts) fmt::print(os, "Plain loops issued by {} on every GPU.\n", h);
  os << "util = useful FLOPs / (time x peak); bound: what sets the step; docs/model.md explains both and the losses.\n";
  for (const auto& note : notes_json(as, "rows")) views::write_note(os, note.get<std::string>());
  if (networks) {
    os << "\nWhich is faster, and why (`tilewave report A --vs B` draws it):\n  " << printable(networks->faster) << "\n";
    for (const auto& f : networks->findings) os << "  - " << printable(f) << "\n";
  }
}

json compare_to_json(const std::vector<Analysis>& as, const NetworkComparison* networks) {
  json rows = json::array();
  for (const auto& a : as) {
    json r = analysis_summary_json(a);
    r["gpu_trust"] = trust_name(a.gpu_trust);
    rows.push_back(std::move(r));
  }
  json models = json::array();
  for (const auto& a : as)
    if (models.empty() || models.back() != a.model_name) models.push_back(a.model_name);
  json out = {{"model", as.empty() ? "" : as.front().model_name}, {"models", models}, {"configurations", rows}};
  out["notes"] = notes_json(as, "rows");
  if (networks) out["faster"] = networks->faster, out["findings"] = networks->findings;
  return out;
}

}  // namespace tilewave
