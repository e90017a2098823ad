// Forward convolution through the cuDNN backend (graph) API, the path PyTorch 2.x
// takes via cudnn-frontend: operation graph -> engine heuristics -> engine configs
// -> execution plans. Written against the C API in cudnn_graph.h (no frontend
// library). The graph API exposes engines the legacy API lacks (dedicated
// depthwise/grouped kernels, runtime-compiled engines).
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"

namespace tw {

// Owns one cudnnBackendDescriptor_t.
class BackendDesc {
 public:
  explicit BackendDesc(cudnnBackendDescriptorType_t type) { TW_CUDNN(cudnnBackendCreateDescriptor(type, &d_)); }
  ~BackendDesc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  BackendDesc(BackendDesc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;
  BackendDesc& operator=(BackendDesc&&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

  // Sets `count` values of attribute `name` (throws on failure).
  template <class T>
  BackendDesc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values,
                   int64_t count = 1) {
    TW_CUDNN(cudnnBackendSetAttribute(d_, name, type, count, values));
    return *this;
  }
  BackendDesc& set_desc(cudnnBackendAttributeName_t name, const BackendDesc& d) {
    cudnnBackendDescriptor_t v = d.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &v);
  }
  BackendDesc& finalize() {
    TW_CUDNN(cudnnBackendFinalize(d_));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

struct BackendConvProblem {
  int64_t N, C, H, W, K, R, S, groups, P, Q;  // NHWC x N×C×H×W, w K×(C/g)×R×S, y N×K×P×Q
  std::array<int64_t, 2> stride, pad, dilation;
  cudnnDataType_t data;     // x, w and y
  cudnnDataType_t compute;  // accumulation (FLOAT for fp16/bf16/fp32/tf32)
  bool allow_tensor_core;   // false (fp32): engines noted TENSOR_CORE (TF32 on float data) are excluded
};

struct BackendConvGraph;  // tensors, operation and operation graph

// One finalized execution plan; keeps its graph alive.
struct BackendConvPlan {
  std::shared_ptr<const BackendConvGraph> graph;
  std::shared_ptr<BackendDesc> config;
  BackendDesc plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  int64_t workspace_bytes = 0;
  std::string name;  // "engine=12 knobs=2:3,14:4" (+ " rtc" for runtime-compiled engines)
};

// The engine configs the heuristics propose for one problem, best-ranked first:
// CUDNN_HEUR_MODE_A's list, then CUDNN_HEUR_MODE_FALLBACK's, duplicates and
// filtered engines removed. Throws Unsupported when cuDNN builds no graph/heuristics.
class BackendConvTuner {
 public:
  BackendConvTuner(cudnnHandle_t handle, const BackendConvProblem& p);
  size_t size() const { return configs_.size(); }
  const std::string& config_name(size_t i) const { return names_[i]; }
  // Builds the plan for config i; nullptr (and *why) when it cannot be finalized
  // or needs more than workspace_cap bytes.
  std::unique_ptr<BackendConvPlan> make_plan(size_t i, size_t workspace_cap, std::string* why) const;
  int filtered() const { return filtered_; }  // configs dropped by the numerical-note filter

 private:
  cudnnHandle_t handle_;
  std::shared_ptr<const BackendConvGraph> graph_;
  std::vector<std::shared_ptr<BackendDesc>> configs_;
  std::vector<std::string> names_;
  int filtered_ = 0;
};

// Variant pack binding x, w, y and the workspace (unique ids 1, 2, 3).
BackendDesc make_conv_variant_pack(void* x, void* w, void* y, void* workspace);

// Enqueues the plan on the handle's stream.
void execute_backend_plan(cudnnHandle_t handle, const BackendConvPlan& plan, const BackendDesc& variant_pack);

}  // namespace tw
