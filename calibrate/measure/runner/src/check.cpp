#include "check.hpp"

#include <cstring>

namespace tw {

namespace {
std::string where(const char* expr, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return std::string(expr) + " at " + (base ? base + 1 : file) + ":" + std::to_string(line);
}
}  // namespace

void throw_cuda(cudaError_t err, const char* expr, const char* file, int line) {
  throw LayerError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                   cudaGetErrorString(err) + ") in " + where(expr, file, line));
}

void throw_cudnn(cudnnStatus_t st, const char* expr, const char* file, int line) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string msg = std::string("cuDNN ") + cudnnGetErrorString(st) + " in " + where(expr, file, line);
  if (detail[0]) msg += ": " + std::string(detail);
  if (cudnn_not_supported(st)) throw Unsupported(msg);
  throw LayerError(msg);
}

void throw_cublas(cublasStatus_t st, const char* expr, const char* file, int line) {
  std::string msg = std::string("cuBLAS ") + cublasLtGetStatusName(st) + " (" +
                    cublasLtGetStatusString(st) + ") in " + where(expr, file, line);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) throw Unsupported(msg);
  throw LayerError(msg);
}

}  // namespace tw
