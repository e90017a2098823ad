// The CSV view (--format csv, docs/report.md "CSV"): a row per kernel, or
// per ONNX node or kernel group with --by node, op or name; the version's
// comment line first (docs/cli.md "Formats"), then the run's identity as the
// first columns of every row; its totals are the JSON's.
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

namespace {

const char* kRunColumns = "model,gpu,gpu_trust,batch,execution,";

std::string run_cells(const Analysis& a) {
  return fmt::format("{},{},{},{},{},", views::csv_field(a.model_name), views::csv_field(a.gpu_id),
                     trust_name(a.gpu_trust), a.batch, views::csv_field(a.exec.name()));
}

// --by node: the JSON's node_fates, one row each, in graph order.
void write_node_csv(std::ostream& os, const Analysis& a) {
  os << kRunColumns
     << "name,op,fate,kernels,time_us,step_share,gpu_busy_share,utilization,params,weight_bytes,"
        "activation_read_bytes,activation_write_bytes\n";
  const std::string run = run_cells(a);
  for (const NodeFate& f : a.nodes_fate)
    fmt::print(os, "{}{},{},{},{},{:.4f},{:.6f},{:.6f},{:.6f},{},{},{},{}\n", run, views::csv_field(f.name),
               views::csv_field(f.op), fate_name(f.fate), f.kernels.size(), f.time_us, f.step_share, f.gpu_busy_share,
               f.utilization, f.params, f.weight_bytes, f.activation_read_bytes, f.activation_write_bytes);
}

// --by op or name: the JSON's by_op or by_name, longest first.
void write_group_csv(std::ostream& os, const Analysis& a, const std::vector<KernelGroup>& groups) {
  os << kRunColumns
     << "name,kernels,time_us,step_share,gpu_busy_share,flops,dram_bytes,l2_hit_bytes,utilization,"
        "bandwidth_utilization\n";
  const std::string run = run_cells(a);
  for (const KernelGroup& g : groups)
    fmt::print(os, "{}{},{},{:.4f},{:.6f},{:.6f},{},{},{},{:.6f},{:.6f}\n", run, views::csv_field(g.name), g.kernels,
               g.time_us, g.step_share, g.gpu_busy_share, g.flops, g.dram_bytes, g.l2_hit_bytes, g.utilization,
               g.bandwidth_utilization);
}

}  // namespace

void write_csv(std::ostream& os, const Analysis& a, const std::string& by) {
  views::require_parts(a, ResultParts{by == "node", true}, "CSV");
  views::write_csv_version(os);
  if (by == "node") return write_node_csv(os, a);
  if (by == "op") return write_group_csv(os, a, a.by_op);
  if (by == "name") return write_group_csv(os, a, a.by_name);
  os << "model,gpu,gpu_trust,batch,execution,name,op,shape,kernel,flops,bytes,l2_hit_bytes,intensity,time_us,compute_us,memory_us,fixed_us,utilization,"
        "bandwidth_utilization,bound,tile,split_k,tile_eff,wave_eff,tiles,waves,loss_tile,loss_wave,loss_efficiency,loss_memory,loss_fixed,"
        "unmodelled\n";
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  const std::string run = run_cells(a);
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
