// docs/model.md "Schedule".
#include "tilewave/schedule.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/error.h"
#include "tilewave/json_input.h"

namespace tilewave {

const std::vector<ParamInfo>& host_param_table() {
  // Defaults: of the order a 2020s server CPU takes in PyTorch 2.x eager
  // (a few µs per op); calibrated values live in gpu_models/hosts/.
  constexpr ParamScope H = ParamScope::host;
  constexpr ParamOwner O = ParamOwner::host;
  static const std::vector<ParamInfo> table = {
      {"host_op_us", 6.0, 0.5, 60, "us", "host time of one framework op with one kernel (module call, dispatch, launch)", H, O},
      {"host_conv_us", 12.0, 0.5, 100, "us", "host time of a convolution op (cuDNN's call included)", H, O},
      {"host_gemm_us", 10.0, 0.5, 100, "us", "host time of a linear or matmul op (cuBLAS's call included)", H, O},
      {"host_norm_us", 12.0, 0.5, 100, "us", "host time of an inference BatchNorm op (all of its kernels)", H, O},
      {"host_cast_us", 4.0, 0.5, 60, "us", "host time of one autocast cast of a weight or an input", H, O},
      {"host_inner_launch_us", 2.0, 0, 30, "us", "host time of each further kernel an op launches itself", H, O},
      {"host_view_us", 2.0, 0, 60, "us", "host time of a view op, which launches no kernel (reshape, permute, slice)", H, O},
      {"host_step_us", 20.0, 0, 500, "us", "host time per step outside the ops (the model call, autocast, timer)", H, O},
      {"launch_latency_us", 4.0, 0, 50, "us", "from the host's launch to the kernel's start on an idle GPU", H, O},
      {"sync_us", 8.0, 0, 100, "us", "from the GPU's last kernel to torch.cuda.synchronize() returning", H, O},
  };
  return table;
}

double HostModel::param(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end()) throw std::logic_error("unknown host parameter '" + name + "'");
  return it->second;
}

double HostModel::call_us(HostCall c) const {
  switch (c) {
    case HostCall::inner: return param("host_inner_launch_us");
    case HostCall::op: return param("host_op_us");
    case HostCall::conv: return param("host_conv_us");
    case HostCall::gemm: return param("host_gemm_us");
    case HostCall::norm: return param("host_norm_us");
    case HostCall::cast: return param("host_cast_us");
  }
  return 0;
}

const char* default_host_id() { return "h200-vm"; }

HostModel builtin_host() {
  HostModel h;
  h.id = "builtin";
  h.name = "uncalibrated host (tilewave's defaults)";
  h.trust = "default";
  for (const auto& p : host_param_table()) h.params[p.name] = p.default_value;
  return h;
}

HostModel host_from_json(const nlohmann::json& j, const std::string& id, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "a host description is a JSON object");
  HostModel h = builtin_host();
  h.id = id;
  h.source_file = where;
  h.trust = "calibrated";
  if (j.contains("name") && j["name"].is_string()) h.name = j["name"].get<std::string>();
  if (j.contains("trust") && j["trust"].is_string()) h.trust = j["trust"].get<std::string>();
  if (j.contains("params")) {
    if (!j["params"].is_object()) throw InputError(where, "'params' is not an object");
    for (const auto& item : j["params"].items()) {
      const std::string k = item.key();
      const auto& v = item.value();
      const auto info = std::find_if(host_param_table().begin(), host_param_table().end(),
                                     [&](const ParamInfo& p) { return k == p.name; });
      if (info == host_param_table().end()) throw InputError(where, "unknown host parameter '" + k + "'");
      // The table's bounds, the same ones the host fit keeps to.
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < info->fit_min ||
          v.get<double>() > info->fit_max)
        throw InputError(where, fmt::format("host parameter '{}' is not a number of {} between {:g} and {:g}", k,
                                            info->unit, info->fit_min, info->fit_max));
      h.params[k] = v.get<double>();
    }
  }
  if (j.contains("machine_spread")) {
    // How long other machines of this kind take to issue the same ops, as a factor of this one's time.
    const auto& m = j["machine_spread"];
    const auto factor = [&](const char* key) {
      if (!m.is_object() || !m.contains(key) || !m[key].is_number() || !std::isfinite(m[key].get<double>()) ||
          m[key].get<double>() < 0.1 || m[key].get<double>() > 10)
        throw InputError(where, fmt::format("machine_spread.{} is not a factor between 0.1 and 10", key));
      return m[key].get<double>();
    };
    h.spread_low = factor("low");
    h.spread_high = factor("high");
    if (h.spread_low > 1 || h.spread_high < 1)
      throw InputError(where, "machine_spread must hold this machine: low <= 1 <= high");
  }
  if (j.contains("sources") && j["sources"].is_object())
    for (const auto& [k, v] : j["sources"].items())
      if (v.is_string()) h.sources[k] = v.get<std::string>();
  return h;
}

nlohmann::json host_to_json(const HostModel& h) {
  nlohmann::json j = {{"name", h.name}, {"trust", h.trust}, {"params", h.params}, {"sources", h.sources}};
  if (h.spread_low != 1 || h.spread_high != 1) j["machine_spread"] = {{"low", h.spread_low}, {"high", h.spread_high}};
  // Reading it back is the check that the writer and the reader agree.
  (void)host_from_json(j, h.id, "the host file being written");
  return j;
}

HostModel load_host(const std::string& id_or_path, const std::string& gpu_dir) {
  namespace fs = std::filesystem;
  if (id_or_path == "builtin") return builtin_host();
  const bool is_path = id_or_path.find('/') != std::string::npos ||
                       (id_or_path.size() > 5 && id_or_path.compare(id_or_path.size() - 5, 5, ".json") == 0);
  if (!is_path && (id_or_path.empty() || id_or_path.size() > 64 ||
                   id_or_path.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") != std::string::npos))
    throw InputError("--host", "'" + id_or_path.substr(0, 64) + "' is not a host id (lower-case letters, digits, - _ .)");
  const fs::path path = is_path ? fs::path(id_or_path) : fs::path(gpu_dir) / "hosts" / (id_or_path + ".json");
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path.string(), "no such host description");
  if (!fs::is_regular_file(st)) throw InputError(path.string(), "not a regular file");
  if (fs::file_size(path, ec) > (1u << 20)) throw InputError(path.string(), "larger than 1 MB: not a host description");
  // The project's one checked reader: a nesting limit, errors naming the file.
  const nlohmann::json j = read_json_file(path.string(), "host description");
  return host_from_json(j, is_path ? path.stem().string() : id_or_path, path.string());
}

Schedule schedule_step(const std::vector<LaunchItem>& items, Launch launch, const HostModel& host,
                       double launch_gap_us, bool timeline) {
  Schedule s;
  s.launch = launch;
  // The search schedules every candidate: no per-kernel rows, no lookups by name in the loop.
  ScheduledKernel scratch;
  if (timeline) s.kernels.resize(items.size());
  auto row = [&](size_t i) -> ScheduledKernel& { return timeline ? s.kernels[i] : scratch; };
  double call_us[kHostCallCount];
  for (int c = 0; c < kHostCallCount; ++c) call_us[c] = launch == Launch::loop ? host.call_us(HostCall(c)) : 0;
  const double gap = std::max(0.0, launch_gap_us);
  if (launch == Launch::graph) {
    double gpu = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      ScheduledKernel& k = row(i);
      k.gpu_wait_us = gap;
      k.gpu_start_us = gpu + gap;
      k.gpu_end_us = k.gpu_start_us + std::max(0.0, items[i].device_us);
      gpu = k.gpu_end_us;
      s.gpu_busy_us += std::max(0.0, items[i].device_us);
    }
    s.step_us = gpu;
    s.host_busy_us = 0;  // one graph launch, overlapped with the replay before
    s.step_low_us = s.step_high_us = s.step_us;
  } else {
    const double latency = host.param("launch_latency_us"), view_us = host.param("host_view_us");
    // The loop as a host `factor` times this one's issue time would run it;
    // the timeline and the busy times are this host's (factor 1).
    const auto issue_loop = [&](double factor, bool record) {
      double host_t = host.param("host_step_us") * factor, gpu = 0;
      for (size_t i = 0; i < items.size(); ++i) {
        ScheduledKernel& k = record ? row(i) : scratch;
        k.host_start_us = host_t;
        host_t += (call_us[int(items[i].call)] + items[i].host_views * view_us) * factor;
        k.host_end_us = host_t;
        k.gpu_start_us = std::max(host_t + latency, gpu);
        k.gpu_wait_us = k.gpu_start_us - gpu;
        k.gpu_end_us = k.gpu_start_us + std::max(0.0, items[i].device_us);
        gpu = k.gpu_end_us;
        if (record) s.gpu_busy_us += std::max(0.0, items[i].device_us);
      }
      if (record) s.host_busy_us = host_t;
      return std::max(host_t, gpu) + host.param("sync_us");
    };
    s.step_us = issue_loop(1, true);
    s.step_low_us = host.spread_low == 1 ? s.step_us : issue_loop(host.spread_low, false);
    s.step_high_us = host.spread_high == 1 ? s.step_us : issue_loop(host.spread_high, false);
  }
  s.gpu_idle_us = std::max(0.0, s.step_us - s.gpu_busy_us);
  s.host_bound = launch == Launch::loop && s.host_busy_us > s.gpu_busy_us;
  return s;
}

}  // namespace tilewave
