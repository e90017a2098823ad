#include "device.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>

#include "check.hpp"

namespace tw {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes) TW_CUDA(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

void* Arena::alloc(size_t bytes) {
  constexpr size_t kAlign = 256;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (used_bytes_ + rounded > block_.bytes())
    throw LayerError("device arena exhausted: need " + std::to_string(rounded >> 20) +
                     " MiB more, arena is " + std::to_string(block_.bytes() >> 20) + " MiB");
  void* p = static_cast<char*>(block_.data()) + used_bytes_;
  used_bytes_ += rounded;
  return p;
}

namespace {

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// One standard-normal sample per index, independent of launch geometry.
__device__ __forceinline__ float randn_at(uint64_t seed, int64_t i) {
  uint64_t h = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(i)));
  float u1 = (static_cast<uint32_t>(h >> 40) + 1.0f) * (1.0f / 16777217.0f);  // (0,1]
  float u2 = static_cast<uint32_t>(h & 0xFFFFFFu) * (1.0f / 16777216.0f);     // [0,1)
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

template <class T>
__device__ __forceinline__ T from_normal(float z);
template <> __device__ __forceinline__ float from_normal<float>(float z) { return z; }
template <> __device__ __forceinline__ __half from_normal<__half>(float z) { return __float2half_rn(z); }
template <> __device__ __forceinline__ __nv_bfloat16 from_normal<__nv_bfloat16>(float z) {
  return __float2bfloat16_rn(z);
}
template <> __device__ __forceinline__ int8_t from_normal<int8_t>(float z) {
  return static_cast<int8_t>(__float2int_rn(fminf(fmaxf(32.0f * z, -127.0f), 127.0f)));
}
template <> __device__ __forceinline__ int32_t from_normal<int32_t>(float z) {
  return __float2int_rn(fminf(fmaxf(32.0f * z, -127.0f), 127.0f));
}

template <class T>
__global__ void randn_kernel(T* out, int64_t n, uint64_t seed) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    out[i] = from_normal<T>(randn_at(seed, i));
}

template <class T>
void launch_randn(void* ptr, int64_t n, uint64_t seed, cudaStream_t stream) {
  constexpr int kThreads = 256;
  int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 65536);
  randn_kernel<T><<<static_cast<unsigned>(std::max<int64_t>(blocks, 1)), kThreads, 0, stream>>>(
      static_cast<T*>(ptr), n, seed);
  TW_KERNEL_CHECK();
}

__global__ void spin_kernel(uint64_t duration_ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < duration_ns);
}

}  // namespace

void fill_randn(void* ptr, int64_t elems, Storage storage, uint64_t seed, cudaStream_t stream) {
  switch (storage) {
    case Storage::f32: return launch_randn<float>(ptr, elems, seed, stream);
    case Storage::f16: return launch_randn<__half>(ptr, elems, seed, stream);
    case Storage::bf16: return launch_randn<__nv_bfloat16>(ptr, elems, seed, stream);
    case Storage::i8: return launch_randn<int8_t>(ptr, elems, seed, stream);
    case Storage::i32: return launch_randn<int32_t>(ptr, elems, seed, stream);
  }
}

void poison(void* ptr, size_t bytes, cudaStream_t stream) {
  TW_CUDA(cudaMemsetAsync(ptr, 0xFF, bytes, stream));
}

void spin_gpu(cudaStream_t stream, int sm_count, double ms) {
  spin_kernel<<<sm_count * 4, 128, 0, stream>>>(static_cast<uint64_t>(ms * 1e6));
  TW_KERNEL_CHECK();
  TW_CUDA(cudaStreamSynchronize(stream));
}

void enqueue_spin(cudaStream_t stream, double us) {
  spin_kernel<<<1, 32, 0, stream>>>(static_cast<uint64_t>(us * 1e3));
  TW_KERNEL_CHECK();
}

}  // namespace tw
