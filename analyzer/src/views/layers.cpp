// `tilewave layers` (docs/layerset.md): a layer set's predictions, as the
// table or as the set's own lines with the cost fields appended; and
// `layers --extract`: a model's lowered kernels as a layer set.
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "tilewave/json_input.h"
#include "tilewave/layer_set.h"
#include "tilewave/report.h"

using nlohmann::json;

namespace tilewave {

void write_layer_predictions(std::ostream& os, const std::string& path, const CostModel& cost_model, bool table) {
  if (table)
    fmt::print(os, "{:>5} {:<14} {:<6} {:>11} {:>7} {:>9} {:>6} {:>6}  {}\n", "line", "op", "dtype", "time_us", "util",
               "bound", "tile", "wave", "kernel");
  scan_costed_layer_set(path, cost_model, [&](const LayerSetEntry& e, const std::string& text, const KernelCost& c) {
    if (table)
      fmt::print(os, "{:>5} {:<14} {:<6} {:>11.2f} {:>6.1f}% {:>9} {:>5.1f}% {:>5.1f}%  {}\n", e.line,
                 layer_kind(e.layer), dtype_name(e.layer.dtype), c.time_us, 100 * c.utilization, bound_name(c.bound),
                 100 * c.tile_eff, 100 * c.wave_eff, c.kernel);
    else
      os << append_fields(text, cost_fields(c, true)) << '\n';
  });
}

void write_extracted_layers(std::ostream& os, const Model& model, const KernelGraph& lowered, const std::string& stem,
                            const std::function<void(const Kernel&)>& unmodelled) {
  for (const auto& k : lowered.kernels) {
    if (!k.layer) {
      unmodelled(k);
      continue;
    }
    json j = layer_to_json(*k.layer);
    j["model"] = stem;
    j["node"] = k.name;
    j["onnx_op"] = k.ops.text();
    j["model_batch"] = model.batch;  // "batch" is a GEMM field
    os << json_text(j) << "\n";
  }
}

}  // namespace tilewave
