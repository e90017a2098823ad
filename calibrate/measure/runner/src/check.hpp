// Error types and status-check macros shared by every op runner.
//
// A layer's measurement either succeeds, is `unsupported` (the library has no
// kernel for that type/shape: throw Unsupported) or `failed` (anything else:
// throw LayerError). The measure loop turns these into the output `status`.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>

namespace tw {

// The problem cannot run with this library/type combination (not a bug).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Something went wrong while measuring one layer; the run continues.
struct LayerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The input file is malformed; the whole run stops with exit code 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda(cudaError_t err, const char* expr, const char* file, int line);
[[noreturn]] void throw_cudnn(cudnnStatus_t st, const char* expr, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t st, const char* expr, const char* file, int line);

// cuDNN 9 sub-codes 3000..3999 all mean "not supported".
inline bool cudnn_not_supported(cudnnStatus_t st) {
  return static_cast<int>(st) >= 3000 && static_cast<int>(st) < 4000;
}

}  // namespace tw

#define TW_CUDA(expr)                                                      \
  do {                                                                     \
    cudaError_t tw_err_ = (expr);                                          \
    if (tw_err_ != cudaSuccess) ::tw::throw_cuda(tw_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define TW_CUDNN(expr)                                                     \
  do {                                                                     \
    cudnnStatus_t tw_st_ = (expr);                                         \
    if (tw_st_ != CUDNN_STATUS_SUCCESS) ::tw::throw_cudnn(tw_st_, #expr, __FILE__, __LINE__); \
  } while (0)

#define TW_CUBLAS(expr)                                                    \
  do {                                                                     \
    cublasStatus_t tw_st_ = (expr);                                        \
    if (tw_st_ != CUBLAS_STATUS_SUCCESS) ::tw::throw_cublas(tw_st_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a <<<>>> launch: launch-configuration errors surface here.
#define TW_KERNEL_CHECK() TW_CUDA(cudaGetLastError())
