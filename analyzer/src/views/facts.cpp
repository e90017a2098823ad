// Facts every view shows the same way (report.h): why a kernel is slow, its problem in a line.
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

const char* trust_mark(Trust trust) {
  switch (trust) {
    case Trust::calibrated: return "";
    case Trust::fitted_from_benchmark: return "+";
    case Trust::carried_over: return "*";
    case Trust::datasheet: break;
  }
  return "**";
}

std::string trust_legend(Trust trust) {
  switch (trust) {
    case Trust::calibrated: return "";
    case Trust::fitted_from_benchmark: return "+  fitted from a published benchmark (timm's results): not measured here";
    case Trust::carried_over: return "*  carried-over: calibrated GPUs' constants on this GPU's datasheet; not measured here";
    case Trust::datasheet: break;
  }
  return "** datasheet only: defaults, never measured; expect larger errors";
}

// The biggest loss names the reason a layer is slow (main_loss, kernel_cost.h).
std::string main_loss(const KernelCost& c) {
  const auto cause = tilewave::main_loss(c.losses);
  return cause ? loss_cause_names(*cause).label : "-";
}

std::string shape_text(const Kernel& k) {
  if (!k.layer) return "";
  const Layer& l = *k.layer;
  if (auto* c = std::get_if<ConvProblem>(&l.problem))
    return fmt::format("{}x{}x{}x{}->{} {}x{}/{}{}", c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->stride[0],
                       c->groups > 1 ? fmt::format(" g{}", c->groups) : "");
  if (auto* g = std::get_if<GemmProblem>(&l.problem))
    return fmt::format("{}x{}x{}{}", g->M, g->N, g->K, g->batch > 1 ? fmt::format(" b{}", g->batch) : "");
  if (auto* a = std::get_if<AttentionProblem>(&l.problem))
    return fmt::format("attn {}x{}x{} d{} b{}", a->q_len, a->kv_len, a->v_head_dim, a->head_dim, a->batch_heads);
  const auto& m = std::get<MemoryProblem>(l.problem);
  std::string n = si(double(m.elems_read() + m.elems_written()), "");
  n.erase(std::remove(n.begin(), n.end(), ' '), n.end());
  return "mem " + n + " elems";
}

}  // namespace tilewave
