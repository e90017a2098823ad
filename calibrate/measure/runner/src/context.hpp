// Process-wide GPU state shared by all op runners: handles, workspaces, the
// per-layer arena, timing settings and autotune caches.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <exception>
#include <memory>
#include <string>
#include <unordered_map>

#include "device.hpp"
#include "timing.hpp"

namespace tw {

// cudnnFind may use up to this much workspace (frameworks cap it similarly).
constexpr size_t kCudnnWorkspaceBytes = size_t(1) << 30;
// cuBLASLt workspace, as PyTorch/cuBLAS use on Hopper.
constexpr size_t kCublasLtWorkspaceBytes = size_t(64) << 20;
// Rotating buffer sets should total at least this (> 2x the H200's 60 MB L2).
constexpr size_t kRotationTargetBytes = size_t(200) << 20;
constexpr int kMaxCopies = 32;

// Graph-API execution plans may use at most this much workspace.
constexpr size_t kBackendWorkspaceCapBytes = size_t(256) << 20;

// A legacy-API algorithm under a math type.
struct ConvAlgo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace_bytes = 0;
};

struct BackendConvPlan;  // conv_backend.hpp

// Autotune result of one convolution problem, per path.
struct ConvChoice {
  ConvAlgo legacy;
  std::exception_ptr legacy_error;                // set when the legacy API has nothing to run
  std::shared_ptr<const BackendConvPlan> plan;    // graph API's fastest plan (null: none)
  std::string backend_note;                       // why there is no plan
};

struct GemmChoice {
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;
};

struct Context {
  int device = 0;
  int sm_count = 0;
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
  std::unique_ptr<DeviceBuffer> cudnn_workspace;
  std::unique_ptr<DeviceBuffer> lt_workspace;
  std::unique_ptr<Arena> arena;
  TimingConfig timing;
  // Autotune results per identical problem (key built by each runner).
  std::unordered_map<std::string, ConvChoice> conv_cache;
  std::unordered_map<std::string, GemmChoice> gemm_cache;

  Context() = default;
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
};

// Picks device 0, creates handles and workspaces. Throws std::runtime_error
// with a readable message when there is no usable GPU.
std::unique_ptr<Context> create_context(const TimingConfig& timing);

}  // namespace tw
