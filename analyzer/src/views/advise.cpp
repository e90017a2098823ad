// `tilewave advise` (docs/report.md): the suggestions of advise.h, best first.
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/report.h"
#include "tilewave/text.h"

using nlohmann::json;

namespace tilewave {

void write_advice_table(std::ostream& os, const Analysis& a, const std::vector<Advice>& advice) {
  fmt::print(os, "{} on {} ({}), batch {}, {}: {:.1f} us ({}), {:.0f} samples/s, utilization {:.2f}%; {}\n",
             printable(a.model_name), a.gpu_name, a.gpu_id, a.batch, a.exec.name(), a.total.time_us,
             views::bound_with_range(a.total), a.total.throughput_per_s, 100 * a.total.utilization,
             views::host_caption(a));
  if (advice.empty()) {
    os << "\nNo change tried is predicted to make it faster (docs/report.md lists what is tried).\n";
    return;
  }
  os << "\nChanges predicted to help, best first (each analysed as a changed model):\n";
  for (size_t i = 0; i < advice.size(); ++i) {
    const Advice& x = advice[i];
    fmt::print(os, "\n{:>2}. {}: predicted {:+.1f}% throughput ({:.0f} -> {:.0f} samples/s, utilization {:.2f}% -> "
                   "{:.2f}%)\n",
               i + 1, x.change, 100 * x.gain, x.before.throughput_per_s, x.after.throughput_per_s,
               100 * x.before.utilization, 100 * x.after.utilization);
    fmt::print(os, "    {}\n", printable(x.detail));
    if (!x.not_fitted.empty())
      fmt::print(os, "    not fitted: {}; this figure is less certain than a fitted one\n",
                 printable(x.not_fitted));
  }
}

json advice_to_json(const Analysis& a, const std::vector<Advice>& advice) {
  json rows = json::array();
  for (const auto& x : advice)
    rows.push_back({{"kind", x.kind}, {"change", x.change}, {"detail", x.detail}, {"gain", x.gain}, {"not_fitted", x.not_fitted},
                    {"before", totals_to_json(x.before)}, {"after", totals_to_json(x.after)}});
  return views::versioned({{"model", a.model_name}, {"gpu", a.gpu_id}, {"batch", a.batch}, {"dtype", dtype_name(a.dtype)},
          {"runtime", a.runtime}, {"execution", a.exec.to_json()}, {"advice", rows}});
}

}  // namespace tilewave
