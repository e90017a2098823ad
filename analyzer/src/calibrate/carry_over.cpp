// docs/calibration.md "Carry-over".
#include "tilewave/carry_over.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "tilewave/error.h"

namespace tilewave {

std::string memory_family(const std::string& memory_type) {
  std::string t = memory_type;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (t.rfind("hbm", 0) == 0) return "hbm";
  if (t.rfind("gddr", 0) == 0) return "gddr";
  return "";
}

namespace {

const ParamInfo* info_of(const std::string& name) {
  for (const auto& p : param_table())
    if (name == p.name) return &p;
  return nullptr;
}

// The donor the owner's rule picks, and why; nullptr: none may give it.
const GpuModel* donor_for(ParamOwner owner, const GpuModel& target, const std::vector<const GpuModel*>& donors,
                          std::string& rule) {
  if (donors.empty()) return nullptr;
  switch (owner) {
    case ParamOwner::architecture:
      for (const GpuModel* d : donors)
        if (!target.instruction_family.empty() && d->instruction_family == target.instruction_family) {
          rule = fmt::format("same instruction family ({})", target.instruction_family);
          return d;
        }
      return nullptr;
    case ParamOwner::memory_system: {
      for (const GpuModel* d : donors)
        if (!target.memory_type.empty() && d->memory_type == target.memory_type) {
          rule = fmt::format("same memory type ({})", target.memory_type);
          return d;
        }
      const std::string family = memory_family(target.memory_type);
      for (const GpuModel* d : donors)
        if (!family.empty() && memory_family(d->memory_type) == family) {
          rule = fmt::format("same memory family ({}: {} for {})", family, d->memory_type, target.memory_type);
          return d;
        }
      rule = fmt::format("no donor of its memory family ({} for {}): the first donor's", 
                         donors.front()->memory_type.empty() ? "?" : donors.front()->memory_type,
                         target.memory_type.empty() ? "?" : target.memory_type);
      return donors.front();
    }
    case ParamOwner::launch:
    case ParamOwner::runtime:
    case ParamOwner::host:
      for (const GpuModel* d : donors)
        if (d->arch == target.arch) {
          rule = fmt::format("same architecture ({})", target.arch);
          return d;
        }
      rule = "kept from the first donor";
      return donors.front();
    case ParamOwner::validation:  // another GPU's residuals say nothing of this one's
      return nullptr;
  }
  return nullptr;
}

double scaled(const ParamInfo& p, double v, const GpuModel& from, const GpuModel& to) {
  switch (p.scale) {
    case ParamScale::none: return v;
    case ParamScale::dram_bandwidth: return v * to.dram_bandwidth_gbs / from.dram_bandwidth_gbs;
    case ParamScale::inverse_sm_clock:
      return v * (double(from.sms) * from.boost_clock_mhz) / (double(to.sms) * to.boost_clock_mhz);
    case ParamScale::inverse_clock: return v * double(from.boost_clock_mhz) / to.boost_clock_mhz;
    case ParamScale::sm_limited_rate: {
      const double from_ratio = from.dram_bandwidth_gbs / (double(from.sms) * from.boost_clock_mhz);
      const double to_ratio = to.dram_bandwidth_gbs / (double(to.sms) * to.boost_clock_mhz);
      return std::min(v * from_ratio / to_ratio, p.fit_max);
    }
  }
  return v;
}

// A carried file's interval is not its donor's own (another GPU's residuals
// say nothing of this one's) but how networks missed on a GPU whose file was
// carried from that donor: the donor's carried_interval_* (docs/model.md
// "Prediction intervals").
// `carried` names a carried_interval_* parameter and `name` the interval it
// becomes; the first holder with a measured value (> 0) gives it.
void carry_interval(const std::string& carried, const std::string& name, const std::string& key,
                    const std::vector<const GpuModel*>& holders, std::map<std::string, CarriedParam>& set) {
  if (set.count(name)) return;
  for (const GpuModel* d : holders) {
    const auto& params = d->runtime_params.at(key);
    const auto it = params.find(carried);
    if (it != params.end() && it->second > 0) {
      set[name] = {it->second, d->id, fmt::format("its {}: networks measured on a GPU carried from it", carried)};
      return;
    }
  }
}

}  // namespace

CarryOver carry_over(const GpuModel& target, const std::vector<GpuModel>& donors) {
  if (donors.empty()) throw InputError("--gpu", "carry-over needs at least one calibrated GPU to carry from");
  std::vector<const GpuModel*> pool;
  CarryOver out;
  for (const GpuModel& d : donors) {
    if (d.trust != Trust::calibrated && d.trust != Trust::fitted_from_benchmark)
      throw InputError(d.source_file,
                       "carry-over needs a calibrated GPU file (trust: calibrated or fitted-from-benchmark)");
    if (d.id == target.id) continue;  // a GPU does not donate to itself
    pool.push_back(&d);
    out.donors.push_back(d.id);
  }
  if (pool.empty()) throw InputError(target.source_file, "carry-over needs a calibrated GPU other than the target");
  for (const ParamInfo& p : param_table()) {
    std::string rule;
    const GpuModel* d = donor_for(p.owner, target, pool, rule);
    if (!d) continue;
    out.params[p.name] = {scaled(p, d->param(p.name), *d, target), d->id, rule};
  }
  // A runtime set comes from the donor each parameter's rule picks, among
  // the donors that have that set.
  std::map<std::string, std::vector<const GpuModel*>> with_set;
  for (const GpuModel* d : pool)
    for (const auto& [key, set] : d->runtime_params) with_set[key].push_back(d);
  for (const auto& [key, holders] : with_set) {
    std::map<std::string, CarriedParam>& set = out.runtime_params[key];
    for (const GpuModel* h : holders)
      for (const auto& [name, value] : h->runtime_params.at(key)) {
        if (set.count(name)) continue;
        const ParamInfo* p = info_of(name);
        if (!p) continue;
        if (const std::string interval = interval_of_carried(name); !interval.empty()) {
          carry_interval(name, interval, key, holders, set);
          continue;
        }
        std::vector<const GpuModel*> having;
        for (const GpuModel* c : holders)
          if (c->runtime_params.at(key).count(name)) having.push_back(c);
        std::string rule;
        const GpuModel* d = donor_for(p->owner, target, having, rule);
        if (!d) continue;
        set[name] = {scaled(*p, d->runtime_params.at(key).at(name), *d, target), d->id, rule};
      }
    if (set.empty()) out.runtime_params.erase(key);
  }
  return out;
}

GpuModel without_intervals(GpuModel g) {
  for (auto& [key, set] : g.runtime_params)
    for (auto it = set.begin(); it != set.end();) {
      const ParamInfo* p = info_of(it->first);
      it = p && p->owner == ParamOwner::validation ? set.erase(it) : std::next(it);
    }
  return g;
}

GpuModel with_carried(const GpuModel& target, const CarryOver& c) {
  GpuModel g = target;
  g.param_origin.clear();
  for (const auto& [k, p] : c.params) {
    g.params[k] = p.value;
    g.param_origin[k] = p.origin();
  }
  g.runtime_params.clear();
  for (const auto& [key, set] : c.runtime_params)
    for (const auto& [k, p] : set) g.runtime_params[key][k] = p.value;
  g.trust = Trust::carried_over;
  return g;
}

}  // namespace tilewave
