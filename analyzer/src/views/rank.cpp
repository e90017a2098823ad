// `tilewave rank`: models side by side, fastest first, beside the FLOPs order.
#include <algorithm>

#include "tilewave/ranking.h"
#include "tilewave/json_input.h"
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format.h"
#include "tilewave/error.h"
#include "tilewave/report.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave {

using views::loss_json;
using views::pct;
using views::si;

std::optional<std::string> host_bound_note(size_t host_bound_rows, size_t rows, const char* what) {
  if (rows == 0 || 2 * host_bound_rows <= rows) return std::nullopt;
  return fmt::format("{} of {} {} are host-bound: their times, and their order, are the host's issue time (about "
                     "their kernel count), not the GPU's work; --graph, or a larger --batch, ranks the GPU's work",
                     host_bound_rows, rows, what);
}

json rank_to_json(const std::vector<Analysis>& as, const Ranking& ranking, const std::vector<RankFailure>& failed) {
  json rows = json::array();
  for (size_t i : ranking.by_time) {
    const Analysis& a = as[i];
    json row = totals_to_json(a.total);
    row.update({{"model", a.model_name}, {"model_path", a.model_path}, {"unmodelled", a.unmodelled.size()},
                {"partial", a.partial}});
    rows.push_back(std::move(row));
  }
  return views::versioned({{"gpu", as.empty() ? "" : as[0].gpu_id},
          {"host", as.empty() || as[0].host_id.empty() ? json(nullptr) : json(as[0].host_id)},
          {"gpu_trust", as.empty() ? "" : trust_name(as[0].gpu_trust)},
          {"batch", as.empty() ? 0 : as[0].batch},
          {"models", rows},
          {"failed", [&] {
             json f = json::array();
             for (const auto& x : failed) f.push_back({{"model", x.model_path}, {"error", x.reason}});
             return f;
           }()},
          {"kendall_tau_flops_vs_predicted", ranking.kendall_tau_flops},
          {"host_bound_models", ranking.host_bound},
          {"notes", [&] {
             json n = json::array();
             if (auto note = host_bound_note(ranking.host_bound, as.size(), "models")) n.push_back(*note);
             return n;
           }()}});
}

void write_rank_table(std::ostream& os, const std::vector<Analysis>& as, const Ranking& ranking,
                      const std::vector<RankFailure>& failed) {
  const auto& by_time = ranking.by_time;
  const auto& by_flops = ranking.by_flops;
  const auto& flops_rank = ranking.flops_rank;
  if (!as.empty())
    fmt::print(os, "{} models on {}{}, batch {}, {}, {} (fastest first)\n", as.size(), as[0].gpu_name,
               trust_mark(as[0].gpu_trust), as[0].batch, as[0].exec.name(), views::host_caption(as[0]));
  const auto label = [&](size_t i) { return printable(ranking.labels[i]); };
  fmt::print(os, "{:>4} {:<24} {:>11} {:<9} {:>12} {:>7} {:>14} {:>10}   {}\n", "rank", "model", "time_us", "bound",
             "FLOPs", "util", "samples/s", "FLOPs rank", "FLOPs-only order");
  size_t partial = 0;
  for (size_t i = 0; i < by_time.size(); ++i) {
    const Analysis& a = as[by_time[i]];
    partial += a.partial;
    // A partial model's time leaves kernels out: its place may be too good.
    fmt::print(os, "{:>4} {:<24} {:>11.1f} {:<9} {:>12} {:>7} {:>14.0f} {:>10}   {}\n", i + 1,
               middle_ellipsis(label(by_time[i]) + (a.partial ? " (partial)" : ""), 24), a.total.time_us,
               a.total.bound, si(double(a.total.flops), ""), pct(a.total.utilization), a.total.throughput_per_s,
               flops_rank[by_time[i]], label(by_flops[i]));
  }
  fmt::print(os, "Kendall tau between the FLOPs order and the predicted-latency order: {:.3f}\n",
             ranking.kendall_tau_flops);
  fmt::print(os, "bound: what sets the step: the host, or kernels bound by compute, memory, latency, tile, wave or "
                 "cuda-core\n");
  if (partial)
    fmt::print(os, "(partial): {} model{} with unmodelled kernels left out of {} time (--allow-unmodelled)\n", partial,
               partial == 1 ? "" : "s", partial == 1 ? "its" : "their");
  if (auto note = host_bound_note(ranking.host_bound, as.size(), "models")) views::write_note(os, *note);
  if (!as.empty())
    if (const std::string legend = trust_legend(as[0].gpu_trust); !legend.empty()) fmt::print(os, "{}\n", legend);
  if (!failed.empty()) fmt::print(os, "{} model{} not ranked:\n", failed.size(), failed.size() == 1 ? "" : "s");
  for (const auto& f : failed) fmt::print(os, "   {}: {}\n", printable(f.model_path), printable(f.reason));
}

void write_rank_csv(std::ostream& os, const std::vector<Analysis>& as, const Ranking& ranking,
                    const std::vector<RankFailure>& failed) {
  // Columns after `error` were added later: readers by position keep working.
  views::write_csv_version(os);
  os << "rank,model,model_path,gpu,gpu_trust,execution,batch,time_us,flops,utilization,throughput_per_s,flops_rank,"
        "partial,error,host,bound_by,time_low_us,time_high_us,bound\n";
  for (size_t i = 0; i < ranking.by_time.size(); ++i) {
    const Analysis& a = as[ranking.by_time[i]];
    fmt::print(os, "{},{},{},{},{},{},{},{},{},{},{},{},{},,{},{},{},{},{}\n", i + 1, views::csv_field(a.model_name),
               views::csv_field(a.model_path), views::csv_field(a.gpu_id), trust_name(a.gpu_trust), views::csv_field(a.exec.name()),
               a.batch, a.total.time_us, a.total.flops, a.total.utilization, a.total.throughput_per_s,
               ranking.flops_rank[ranking.by_time[i]], a.partial ? "true" : "false", views::csv_field(a.host_id),
               a.total.host_bound ? "host" : "gpu", a.total.time_low_us, a.total.time_high_us, a.total.bound);
  }
  // Models that could not be analysed: a row each, with only the path and the error.
  for (const auto& f : failed)
    fmt::print(os, ",,{},,,,,,,,,,,{},,,,,\n", views::csv_field(f.model_path), views::csv_field(f.reason));
}

}  // namespace tilewave
