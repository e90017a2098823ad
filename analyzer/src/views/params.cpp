// `tilewave params`: every parameter a GPU file or a host file holds, from
// the two parameter tables (docs/model.md "Parameters").
#include <fmt/format.h>
#include <fmt/ostream.h>

#include "tilewave/report.h"
#include "tilewave/schedule.h"

using nlohmann::json;

namespace tilewave {

namespace {
// Both tables in one list: GPU-file parameters first, then the host's.
std::vector<std::pair<const char*, const ParamInfo*>> all_params() {
  std::vector<std::pair<const char*, const ParamInfo*>> rows;
  for (const auto& p : param_table()) rows.emplace_back("gpu", &p);
  for (const auto& p : host_param_table()) rows.emplace_back("host", &p);
  return rows;
}
}  // namespace

json params_to_json() {
  json rows = json::array();
  for (const auto& [file, p] : all_params())
    rows.push_back({{"name", p->name},
                    {"file", file},
                    {"unit", p->unit},
                    {"default", p->default_value},
                    {"min", p->fit_min},
                    {"max", p->fit_max},
                    {"scope", param_scope_name(p->scope)},
                    {"owner", param_owner_name(p->owner)},
                    {"transfer", param_scale_name(p->scale)},
                    {"meaning", p->meaning}});
  return rows;
}

void write_params_table(std::ostream& os) {
  fmt::print(os, "{:<30} {:<4} {:<8} {:>9} {:>9} {:>9}  {:<14} {:<13} {}\n", "parameter", "file", "unit", "default",
             "min", "max", "scope", "owner", "carried to another GPU");
  for (const auto& [file, p] : all_params())
    fmt::print(os, "{:<30} {:<4} {:<8} {:>9.4g} {:>9.4g} {:>9.4g}  {:<14} {:<13} {}\n", p->name, file, p->unit,
               p->default_value, p->fit_min, p->fit_max, param_scope_name(p->scope), param_owner_name(p->owner),
               p->owner == ParamOwner::host ? "-" : param_scale_name(p->scale));
  fmt::print(os, "Every fit keeps a parameter within [min, max]; loaders refuse values outside it "
                 "(docs/model.md \"Parameters\"; --format json adds each one's meaning).\n");
}

}  // namespace tilewave
