// The CSV view (--format csv, docs/report.md "CSV"): a row per kernel, plain
// CSV (docs/cli.md "Formats"): the run's identity as its first columns, so
// a file needs no comment line to read; its totals are the JSON's.
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

void write_csv(std::ostream& os, const Analysis& a) {
  os << "model,gpu,gpu_trust,batch,execution,name,op,shape,kernel,flops,bytes,l2_hit_bytes,intensity,time_us,compute_us,memory_us,fixed_us,utilization,"
        "bandwidth_utilization,bound,tile,split_k,tile_eff,wave_eff,tiles,waves,loss_tile,loss_wave,loss_efficiency,loss_memory,loss_fixed,"
        "unmodelled\n";
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  const std::string run = fmt::format("{},{},{},{},{},", views::csv_field(a.model_name), views::csv_field(a.gpu_id),
                                      trust_name(a.gpu_trust), a.batch, views::csv_field(a.exec.name()));
  for (const auto& r : a.kernels) {
    os << run << quote(r.kernel.name) << ',' << quote(r.kernel.ops.text()) << ',' << quote(shape_text(r.kernel)) << ',';
    if (!r.cost) {
      os << ",,,,,,,,,,,,,,,,,,,,,,," << quote(r.kernel.unmodelled_reason) << "\n";
      continue;
    }
    const KernelCost& c = *r.cost;
    const bool gemm = c.path == CostPath::tensor_gemm || c.path == CostPath::cuda_gemm;
    fmt::print(os, "{},{},{},{},{:.4g},{:.4f},{:.4f},{:.4f},{:.4f},{:.6f},{:.6f},{},{},{},{:.4f},{:.4f},{},{},{:.4f},{:.4f},{:.4f},"
                   "{:.4f},{:.4f},\n",
               c.kernel, c.flops, c.bytes, c.l2_hit_bytes, c.intensity, c.time_us, c.compute_us, c.memory_us, c.fixed_us,
               c.utilization, c.bandwidth_utilization, bound_name(c.bound), gemm ? c.tile.name() : "", gemm ? c.split_k : 0, c.tile_eff,
               c.wave_eff, c.tiles, c.waves, c.losses.tile, c.losses.wave, c.losses.efficiency, c.losses.memory,
               c.losses.fixed);
  }
}

}  // namespace tilewave
