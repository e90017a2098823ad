// The formats one analysis can be written in: `--format` looks a view up
// here by name, so adding one is an entry, not another branch.
#include "tilewave/report.h"

namespace tilewave {

const std::vector<AnalysisView>& analysis_views() {
  static const std::vector<AnalysisView> views = {
      {"table", "a person's view at 80 columns: summary, per-op split, slowest kernels",
       [](std::ostream& os, const Analysis& a, const ViewOptions& o) { write_table(os, a, o.worst_layers, o.by); }},
      {"json", "every kernel and node, all fields",
       [](std::ostream& os, const Analysis& a, const ViewOptions&) { write_json(os, a); }},
      {"csv", "a row per kernel (--by node: per ONNX node; op, name: per group), the run's facts in each",
       [](std::ostream& os, const Analysis& a, const ViewOptions& o) { write_csv(os, a, o.by); }},
  };
  return views;
}

const AnalysisView* find_analysis_view(const std::string& format) {
  for (const auto& v : analysis_views())
    if (format == v.format) return &v;
  return nullptr;
}

}  // namespace tilewave
