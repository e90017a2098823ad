// `tilewave ops` (docs/ops.md): the op registry's entries, and what each
// runtime of the registry of runtimes launches for an op of each fusion role.
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "tilewave/lowering.h"
#include "tilewave/report.h"

using nlohmann::json;

namespace tilewave {

namespace {

const char* role_name(FusionRole role) {
  switch (role) {
    case FusionRole::none: return "none";
    case FusionRole::gemm: return "gemm";
    case FusionRole::elementwise: return "elementwise";
    case FusionRole::reduction: return "reduction";
    case FusionRole::opaque: break;
  }
  return "opaque";
}

// The runtimes one chooses between: the columns.
std::vector<const RuntimeProfile*> current_runtimes() {
  std::vector<const RuntimeProfile*> out;
  for (const RuntimeProfile* r : builtin_runtimes())
    if (!r->historical()) out.push_back(r);
  return out;
}

struct OpRow {
  std::string name, domain, opsets;
  const char* role;
  std::vector<std::string> kernels;  // per current runtime
  const OpRule* rule;
};

std::vector<OpRow> op_rows(const OpRegistry& registry) {
  const auto runtimes = current_runtimes();
  std::vector<OpRow> rows;
  for (const auto& [key, rule] : registry.rules()) {
    OpRow row;
    row.domain = key.first;
    row.name = key.first.empty() ? key.second : key.first + "." + key.second;
    // com.microsoft ops are versioned 1 in their own domain.
    row.opsets = key.first.empty() ? fmt::format("{}-{}", rule.since_opset, kNewestOpset) : fmt::format("{}", rule.since_opset);
    row.role = role_name(rule.role);
    for (const RuntimeProfile* r : runtimes) row.kernels.push_back(r->role_kernels(rule.role));
    row.rule = &rule;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

void write_ops_table(std::ostream& os, const OpRegistry& registry) {
  fmt::print(os, "{:<42} {:<8} {:<12} {}\n", "op", "opsets", "role", fmt::join(runtime_names(false), " | "));
  for (const OpRow& r : op_rows(registry))
    fmt::print(os, "{:<42} {:<8} {:<12} {}\n", r.name, r.opsets, r.role, fmt::join(r.kernels, " | "));
  fmt::print(os, "{} ops; docs/ops.md explains the columns\n", registry.size());
}

void write_ops_markdown(std::ostream& os, const OpRegistry& registry) {
  const auto names = runtime_names(false);
  fmt::print(os, "| op | opsets | role | {} |\n| --- | --- | --- |", fmt::join(names, " | "));
  for (size_t i = 0; i < names.size(); ++i) os << " --- |";
  os << "\n";
  for (const OpRow& r : op_rows(registry))
    fmt::print(os, "| {} | {} | {} | {} |\n", r.name, r.opsets, r.role, fmt::join(r.kernels, " | "));
}

json ops_to_json(const OpRegistry& registry) {
  const auto runtimes = current_runtimes();
  json rows = json::array();
  for (const OpRow& r : op_rows(registry)) {
    json j = {{"op", r.name}, {"domain", r.domain}, {"opsets", r.opsets}, {"role", r.role},
              {"shape_function", bool(r.rule->shape)}, {"lowering", bool(r.rule->lower)}};
    for (size_t i = 0; i < runtimes.size(); ++i) j[runtimes[i]->name()] = r.kernels[i];
    rows.push_back(std::move(j));
  }
  return rows;
}

}  // namespace tilewave
