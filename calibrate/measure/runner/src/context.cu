#include "context.hpp"

#include <algorithm>
#include <stdexcept>

#include "check.hpp"

namespace tw {

namespace {

void require_gpu() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("no usable CUDA GPU: cudaGetDeviceCount failed: ") +
                             cudaGetErrorString(err));
  if (count == 0) throw std::runtime_error("no CUDA GPU found");
}

// Leave room for cuDNN/cuBLAS internals; cap so one process never hogs a card.
size_t arena_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  TW_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  constexpr size_t kReserve = size_t(2) << 30;
  constexpr size_t kCap = size_t(48) << 30;
  size_t usable = free_bytes > kReserve ? (free_bytes - kReserve) * 3 / 4 : free_bytes / 2;
  return std::min(usable, kCap);
}

}  // namespace

Context::~Context() {
  arena.reset();
  lt_workspace.reset();
  cudnn_workspace.reset();
  if (lt) cublasLtDestroy(lt);
  if (cudnn) cudnnDestroy(cudnn);
  if (stream) cudaStreamDestroy(stream);
}

std::unique_ptr<Context> create_context(const TimingConfig& timing) {
  require_gpu();
  auto ctx = std::make_unique<Context>();
  ctx->timing = timing;
  TW_CUDA(cudaSetDevice(ctx->device));
  TW_CUDA(cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount, ctx->device));
  TW_CUDA(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  TW_CUDNN(cudnnCreate(&ctx->cudnn));
  TW_CUDNN(cudnnSetStream(ctx->cudnn, ctx->stream));
  TW_CUBLAS(cublasLtCreate(&ctx->lt));
  ctx->cudnn_workspace = std::make_unique<DeviceBuffer>(kCudnnWorkspaceBytes);
  ctx->lt_workspace = std::make_unique<DeviceBuffer>(kCublasLtWorkspaceBytes);
  ctx->arena = std::make_unique<Arena>(arena_bytes());
  return ctx;
}

}  // namespace tw
