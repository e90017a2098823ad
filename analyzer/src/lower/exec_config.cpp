#include "tilewave/exec_config.h"

#include <nlohmann/json.hpp>

#include "tilewave/error.h"
#include "tilewave/lowering.h"

namespace tilewave {

const RuntimeProfile& ExecutionConfig::runtime_profile() const { return runtime ? *runtime : default_runtime(); }

DType ExecutionConfig::activation_dtype() const {
  // tf32 and PyTorch's fp32 both store fp32.
  return dtype == DType::tf32 ? DType::fp32 : dtype;
}

Layout ExecutionConfig::activation_layout() const {
  return runtime_profile().follows_layout() ? layout : Layout::nhwc;
}

std::string ExecutionConfig::name() const {
  std::string s = std::string(runtime_profile().name()) + " " + layout_name(layout) + " ";
  s += amp ? std::string("amp-") + dtype_name(dtype) : std::string(dtype_name(dtype));
  return s + " " + launch_name(launch);
}

std::string ExecutionConfig::params_key() const {
  return std::string(runtime_profile().name()) + " " + layout_name(layout) + (amp ? " amp" : " half");
}

nlohmann::json ExecutionConfig::to_json() const {
  return {{"runtime", runtime_profile().name()}, {"dtype", dtype_name(dtype)}, {"amp", amp},
          {"layout", layout_name(layout)},        {"launch", launch_name(launch)},
          {"attention", fuse_attention ? "fused" : "unfused"}};
}

ExecutionConfig default_execution(const RuntimeProfile& runtime, DType dtype) {
  const RuntimeDefaults d = runtime.defaults();
  ExecutionConfig e;
  e.runtime = &runtime;
  e.dtype = dtype;
  e.amp = d.amp && (dtype == DType::fp16 || dtype == DType::bf16);
  e.layout = d.layout;
  e.launch = d.launch;
  return e;
}

ExecutionConfig cuda_graph_harness(const RuntimeProfile& runtime, DType dtype) {
  ExecutionConfig e;
  e.runtime = &runtime;
  e.dtype = dtype;
  e.amp = false;
  e.layout = Layout::nhwc;
  e.launch = Launch::graph;
  return e;
}

ExecutionConfig execution_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "the execution configuration is not a JSON object");
  auto text = [&](const char* key) -> std::string {
    if (!j.contains(key)) return "";
    if (!j[key].is_string()) throw InputError(where, std::string("execution '") + key + "' is not a string");
    return j[key].get<std::string>();
  };
  const std::string runtime = text("runtime"), dtype = text("dtype");
  ExecutionConfig e = default_execution(runtime.empty() ? default_runtime() : runtime_named(runtime, where),
                                        dtype.empty() ? DType::fp16 : dtype_named(dtype, where));
  if (auto s = text("layout"); !s.empty()) e.layout = layout_named(s, where);
  if (auto s = text("launch"); !s.empty()) e.launch = launch_named(s, where);
  if (auto s = text("attention"); !s.empty()) {
    if (s != "fused" && s != "unfused") throw InputError(where, "execution 'attention' is fused or unfused");
    e.fuse_attention = s == "fused";
  }
  if (j.contains("amp")) {
    if (!j["amp"].is_boolean()) throw InputError(where, "execution 'amp' is not true or false");
    e.amp = j["amp"].get<bool>();
  }
  if (e.amp && e.dtype != DType::fp16 && e.dtype != DType::bf16)
    throw InputError(where, "amp autocasts to fp16 or bf16, not " + std::string(dtype_name(e.dtype)));
  return e;
}

}  // namespace tilewave
