// Device memory helpers: an owning buffer, a bump arena for per-layer buffers,
// and random fills that mimic torch.randn.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "dtype.hpp"

namespace tw {

// One cudaMalloc'd block, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Per-layer buffers come from one big allocation and are released all at once
// by reset(): avoids thousands of cudaMalloc/cudaFree pairs (each a device sync).
class Arena {
 public:
  explicit Arena(size_t capacity_bytes) : block_(capacity_bytes) {}
  void* alloc(size_t bytes);  // 256-byte aligned; throws LayerError when full
  void reset() { used_bytes_ = 0; }
  size_t capacity_bytes() const { return block_.bytes(); }

 private:
  DeviceBuffer block_;
  size_t used_bytes_ = 0;
};

// Standard-normal values (hash + Box-Muller, as torch.randn's distribution).
// int8 gets round(clamp(32*z, -127, 127)) so values span the type; int32
// buffers (outputs only) get the same integers.
void fill_randn(void* ptr, int64_t elems, Storage storage, uint64_t seed, cudaStream_t stream);

// All bytes 0xFF: NaN for every float format, so unwritten outputs are caught.
void poison(void* ptr, size_t bytes, cudaStream_t stream);

// Keeps every SM busy for about `ms` milliseconds (lifts the GPU out of idle clocks).
void spin_gpu(cudaStream_t stream, int sm_count, double ms);

// Enqueues a one-warp kernel that waits `us` microseconds, without synchronizing:
// launches enqueued behind it queue up, so host-side call overhead (tens of µs
// per cuDNN legacy call) does not show up as idle time between timed launches.
void enqueue_spin(cudaStream_t stream, double us);

}  // namespace tw
