// GPU files as the calibration commands write them (tilewave/gpu_file.h).
#include "tilewave/gpu_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/output_file.h"

namespace tilewave {

using json = nlohmann::json;

double stored_param(double value) { return std::round(value * 1e5) / 1e5; }

json gpu_file_with_params(const GpuModel& gpu, const std::map<std::string, double>& fitted, const std::string& key,
                          const json& provenance, Trust trust, const json& runtime_params,
                          bool replace_params) {
  json j = read_json_file(gpu.source_file, "GPU file");
  json params = j.contains("params") && !replace_params ? j["params"] : json::object();
  for (const auto& [k, v] : fitted) params[k] = stored_param(v);
  j["params"] = params;
  if (!runtime_params.is_null()) j["runtime_params"] = runtime_params;
  j["trust"] = trust_name(trust);
  j[key] = provenance;
  // The datasheet file's "architecture defaults, not calibrated" no longer
  // holds once parameters are written: the source names the record that does.
  if (j.contains("sources") && j["sources"].is_object())
    j["sources"]["params"] = fmt::format("{}: fitted, as this file's `{}` record says", trust_name(trust), key);
  return j;
}

json carried_gpu_file(const GpuModel& target, const std::vector<GpuModel>& donors, const CarryOver& c,
                      const std::string& date) {
  std::map<std::string, double> values;
  json origins = json::object();
  for (const auto& [k, p] : c.params) {
    values[k] = p.value;
    origins[k] = p.origin();
  }
  json runtime_sets = json::object();
  for (const auto& [key, set] : c.runtime_params) {
    json params = json::object(), from = json::object();
    for (const auto& [k, p] : set) {
      params[k] = stored_param(p.value);
      from[k] = p.origin();
    }
    runtime_sets[key] = {{"params", params}, {"fitted_on", fmt::format("carried over: {}", fmt::join(c.donors, ", "))},
                         {"origins", from}};
  }
  json donor_facts = json::array();
  for (const auto& d : donors)
    donor_facts.push_back({{"id", d.id}, {"arch", d.arch}, {"instruction_family", d.instruction_family},
                           {"memory_type", d.memory_type}});
  return gpu_file_with_params(target, values, "carried_over",
                              {{"from", c.donors}, {"donors", donor_facts}, {"date", date}, {"params", origins}},
                              Trust::carried_over, runtime_sets.empty() ? json(nullptr) : runtime_sets,
                              /*replace_params=*/true);
}

void write_gpu_file(const std::string& path, const json& j, const std::string& arch_dir) {
  const std::string id = std::filesystem::path(path).stem().string();
  gpu_from_json(j, id.empty() ? "gpu" : id, path, arch_dir);
  // Paths and commands in the provenance are bytes as typed: any that are not
  // UTF-8 become U+FFFD rather than failing the write (docs/errors.md).
  write_output(path, [&](std::ostream& os) { os << json_text(j, 2) << "\n"; });
}

}  // namespace tilewave
