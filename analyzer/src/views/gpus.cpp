// `tilewave gpus`: the GPU database, one row per GPU file (docs/cli.md).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "tilewave/report.h"

using nlohmann::json;

namespace tilewave {

namespace {
double peak(const GpuModel& g, DType d) { return g.precisions.count(d) ? g.precisions.at(d).peak_tflops : 0.0; }
}  // namespace

void write_gpus_table(std::ostream& os, const std::vector<GpuModel>& gpus) {
  size_t id_w = 2, arch_w = 4;  // the columns fit the longest id and architecture
  for (const GpuModel& g : gpus) {
    id_w = std::max(id_w, g.id.size());
    arch_w = std::max(arch_w, g.arch.size());
  }
  fmt::print(os, "{:<{}} {:<28} {:<{}} {:>4} {:>6} {:>9} {:>10} {:>10} {:>9}  {}\n", "id", id_w, "name", "arch", arch_w,
             "SMs", "MHz", "DRAM GB/s", "fp16 TF/s", "int8 TOP/s", "fp32 TF/s", "trust (runtime sets)");
  for (const GpuModel& g : gpus) {
    std::vector<std::string> runtimes;
    for (const auto& [name, set] : g.runtime_params) runtimes.push_back(name);
    fmt::print(os, "{:<{}} {:<28.28} {:<{}} {:>4} {:>6.0f} {:>9.0f} {:>10.1f} {:>10.1f} {:>9.1f}  {}{}\n", g.id, id_w,
               g.name, g.arch, arch_w, g.sms, g.boost_clock_mhz, g.dram_bandwidth_gbs, peak(g, DType::fp16),
               peak(g, DType::int8), peak(g, DType::fp32), trust_name(g.trust),
               runtimes.empty() ? "" : " (" + fmt::format("{}", fmt::join(runtimes, ", ")) + ")");
  }
}

json gpus_to_json(const std::vector<GpuModel>& gpus) {
  json rows = json::array();
  for (const GpuModel& g : gpus)
    rows.push_back({{"id", g.id}, {"name", g.name}, {"arch", g.arch}, {"sms", g.sms},
                    {"boost_clock_mhz", g.boost_clock_mhz}, {"dram_bandwidth_gbs", g.dram_bandwidth_gbs},
                    {"fp16_tflops", peak(g, DType::fp16)}, {"int8_tops", peak(g, DType::int8)},
                    {"fp32_tflops", peak(g, DType::fp32)}, {"trust", trust_name(g.trust)}, {"params", g.params},
                    {"param_origin", g.param_origin}, {"memory_type", g.memory_type},
                    {"instruction_family", g.instruction_family}, {"runtime_params", g.runtime_params}});
  return rows;
}

}  // namespace tilewave
