// Memory-bound stand-ins for framework kernels: eltwise, reduce, softmax, copy.
// Each is a plain, coalesced kernel; they measure the bandwidth terms of the model.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "check.hpp"
#include "context.hpp"
#include "layer.hpp"
#include "op_runner.hpp"
#include "ops.hpp"

namespace tw {

namespace {

constexpr int kThreads = 256;
constexpr int kMaxEltwiseInputs = 8;

// ---- element conversions (math is done in fp32) ----
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(int8_t v) { return static_cast<float>(v); }

template <class T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ int8_t from_f<int8_t>(float v) {
  return static_cast<int8_t>(__float2int_rn(fminf(fmaxf(v, -128.0f), 127.0f)));
}

// Calls f(T{}) with the C++ type stored as `s`.
template <class F>
void dispatch_storage(Storage s, F&& f) {
  switch (s) {
    case Storage::f32: return f(float{});
    case Storage::f16: return f(__half{});
    case Storage::bf16: return f(__nv_bfloat16{});
    case Storage::i8: return f(int8_t{});
    case Storage::i32: break;
  }
  throw LayerError("memory kernels have no int32 variant");
}

unsigned grid_for(int64_t work_items, int sm_count) {
  // Grid-stride loops; 8 blocks of 256 threads per SM fill Hopper's 2048 threads/SM.
  int64_t blocks = (std::max<int64_t>(work_items, 1) + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min<int64_t>(blocks, int64_t(sm_count) * 8));
}

// ---- eltwise: out = relu(in0 + in1 + ...), 16-byte vectors ----
struct EltwiseArgs {
  const void* in[kMaxEltwiseInputs];
  void* out;
  int64_t elems;
  int inputs;
};

template <class T>
__global__ void relu_sum_kernel(EltwiseArgs a) {
  constexpr int V = 16 / sizeof(T);
  const int64_t vecs = a.elems / V;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t i = tid; i < vecs; i += stride) {
    float acc[V] = {};
    for (int k = 0; k < a.inputs; ++k) {
      uint4 raw = static_cast<const uint4*>(a.in[k])[i];
      const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] += to_f(v[j]);
    }
    uint4 packed;
    T* o = reinterpret_cast<T*>(&packed);
#pragma unroll
    for (int j = 0; j < V; ++j) o[j] = from_f<T>(fmaxf(acc[j], 0.0f));
    static_cast<uint4*>(a.out)[i] = packed;
  }
  for (int64_t i = vecs * V + tid; i < a.elems; i += stride) {  // tail
    float acc = 0.0f;
    for (int k = 0; k < a.inputs; ++k) acc += to_f(static_cast<const T*>(a.in[k])[i]);
    static_cast<T*>(a.out)[i] = from_f<T>(fmaxf(acc, 0.0f));
  }
}

class EltwiseRunner : public OpRunner {
 public:
  EltwiseRunner(Context& ctx, const Layer& layer) : OpRunner(ctx), storage_(storage_of(layer.dtype)) {
    elems_ = layer.get("elems");
    inputs_ = static_cast<int>(layer.get("inputs"));
    if (inputs_ > kMaxEltwiseInputs) throw Unsupported("eltwise supports at most 8 inputs");
    for (int k = 0; k < inputs_; ++k) add_tensor(elems_, storage_, false);
    out_ = add_tensor(elems_, storage_, true);
  }
  void launch(int copy) override {
    EltwiseArgs args{};
    for (int k = 0; k < inputs_; ++k) args.in[k] = buffer(copy, k);
    args.out = buffer(copy, out_);
    args.elems = elems_;
    args.inputs = inputs_;
    dispatch_storage(storage_, [&](auto tag) {
      using T = decltype(tag);
      relu_sum_kernel<T><<<grid_for(elems_ * sizeof(T) / 16, ctx_.sm_count), kThreads, 0, ctx_.stream>>>(args);
    });
    TW_KERNEL_CHECK();
  }
  std::string algo_name() const override { return "relu_sum_kernel(16B vectors)"; }

 private:
  Storage storage_;
  int64_t elems_ = 0;
  int inputs_ = 0;
  size_t out_ = 0;
};

// ---- row reductions: a warp per row (short rows) or a block per row ----
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
  static __device__ float identity() { return 0.0f; }
};
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  static __device__ float identity() { return -INFINITY; }
};

// Reduces v over the TPR threads that share a row (TPR = 32 or the whole block).
template <int TPR, class Op>
__device__ float group_reduce(float v, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if constexpr (TPR == 32) {
    return v;
  } else {
    __shared__ float partial[TPR / 32];
    __shared__ float result;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
      float w = lane < TPR / 32 ? partial[lane] : Op::identity();
      for (int offset = 16; offset > 0; offset >>= 1) w = op(w, __shfl_xor_sync(0xffffffffu, w, offset));
      if (lane == 0) result = w;
    }
    __syncthreads();
    float r = result;
    __syncthreads();  // shared slots are reused by the next call
    return r;
  }
}

template <class T, int TPR>
__global__ void row_mean_kernel(const T* in, T* out, int64_t outer, int64_t inner) {
  const int64_t row = blockIdx.x * int64_t(blockDim.x / TPR) + threadIdx.x / TPR;
  const int lane = threadIdx.x % TPR;
  if (row >= outer) return;  // uniform per row group, so safe around barriers
  const T* p = in + row * inner;
  float acc = 0.0f;
  for (int64_t j = lane; j < inner; j += TPR) acc += to_f(p[j]);
  acc = group_reduce<TPR>(acc, SumOp{});
  if (lane == 0) out[row] = from_f<T>(acc / static_cast<float>(inner));
}

template <class T, int TPR>
__global__ void row_softmax_kernel(const T* in, T* out, int64_t outer, int64_t inner) {
  const int64_t row = blockIdx.x * int64_t(blockDim.x / TPR) + threadIdx.x / TPR;
  const int lane = threadIdx.x % TPR;
  if (row >= outer) return;
  const T* p = in + row * inner;
  T* q = out + row * inner;
  float mx = -INFINITY;
  for (int64_t j = lane; j < inner; j += TPR) mx = fmaxf(mx, to_f(p[j]));
  mx = group_reduce<TPR>(mx, MaxOp{});
  float sum = 0.0f;  // second and third passes mostly hit L1/L2
  for (int64_t j = lane; j < inner; j += TPR) sum += __expf(to_f(p[j]) - mx);
  const float inv = 1.0f / group_reduce<TPR>(sum, SumOp{});
  for (int64_t j = lane; j < inner; j += TPR) q[j] = from_f<T>(__expf(to_f(p[j]) - mx) * inv);
}

// Rows of up to 1024 elements get one warp each; longer rows one 256-thread block.
constexpr int64_t kWarpRowLimit = 1024;

class RowRunner : public OpRunner {
 public:
  RowRunner(Context& ctx, const Layer& layer, bool softmax)
      : OpRunner(ctx), softmax_(softmax), storage_(storage_of(layer.dtype)) {
    outer_ = layer.get("outer");
    inner_ = layer.get("inner");
    in_ = add_tensor(outer_ * inner_, storage_, false);
    out_ = add_tensor(softmax ? outer_ * inner_ : outer_, storage_, true);
  }
  void launch(int copy) override {
    dispatch_storage(storage_, [&](auto tag) {
      using T = decltype(tag);
      const T* in = static_cast<const T*>(buffer(copy, in_));
      T* out = static_cast<T*>(buffer(copy, out_));
      if (inner_ <= kWarpRowLimit) launch_rows<T, 32>(in, out);
      else launch_rows<T, kThreads>(in, out);
    });
    TW_KERNEL_CHECK();
  }
  std::string algo_name() const override {
    std::string kind = softmax_ ? "row_softmax_kernel" : "row_mean_kernel";
    return kind + (inner_ <= kWarpRowLimit ? "(warp per row)" : "(block per row)");
  }

 private:
  template <class T, int TPR>
  void launch_rows(const T* in, T* out) {
    const int64_t rows_per_block = kThreads / TPR;
    const unsigned blocks = static_cast<unsigned>((outer_ + rows_per_block - 1) / rows_per_block);
    if (softmax_) row_softmax_kernel<T, TPR><<<blocks, kThreads, 0, ctx_.stream>>>(in, out, outer_, inner_);
    else row_mean_kernel<T, TPR><<<blocks, kThreads, 0, ctx_.stream>>>(in, out, outer_, inner_);
  }

  bool softmax_;
  Storage storage_;
  int64_t outer_ = 0, inner_ = 0;
  size_t in_ = 0, out_ = 0;
};

// ---- copy: reads elems_in, writes elems_out, on raw 16-byte words ----
// in >= out (Slice, Gather-like): out[j] = in[j] ^ in[j+out] ^ ... so every input byte is read once.
// in <  out (Pad, Resize, Tile):  out[t*in + i] = in[i], one grid row (blockIdx.y) per repeat t.
__global__ void copy_words_kernel(const uint4* in, uint4* out, int64_t in_words, int64_t out_words) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (in_words >= out_words) {
    if (blockIdx.y != 0) return;
    for (int64_t j = tid; j < out_words; j += stride) {
      uint4 acc = in[j];
      for (int64_t s = j + out_words; s < in_words; s += out_words) {
        uint4 v = in[s];
        acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
      }
      out[j] = acc;
    }
    return;
  }
  for (int64_t base = blockIdx.y * in_words; base < out_words; base += int64_t(gridDim.y) * in_words)
    for (int64_t i = tid; i < in_words && base + i < out_words; i += stride) out[base + i] = in[i];
}

// Bytes past the last whole word (sizes that are not multiples of 16 bytes).
__global__ void copy_tail_kernel(const uint8_t* in, uint8_t* out, int64_t in_bytes, int64_t out_bytes,
                                 int64_t first) {
  for (int64_t b = first + threadIdx.x; b < out_bytes; b += blockDim.x) out[b] = in[b % in_bytes];
}

class CopyRunner : public OpRunner {
 public:
  CopyRunner(Context& ctx, const Layer& layer) : OpRunner(ctx) {
    const Storage st = storage_of(layer.dtype);
    in_bytes_ = layer.get("elems_in") * static_cast<int64_t>(storage_bytes(st));
    out_bytes_ = layer.get("elems_out") * static_cast<int64_t>(storage_bytes(st));
    in_ = add_tensor(layer.get("elems_in"), st, false);
    out_ = add_tensor(layer.get("elems_out"), st, true);
  }
  void launch(int copy) override {
    const int64_t in_words = in_bytes_ / 16;
    const int64_t out_words = in_words ? out_bytes_ / 16 : 0;
    if (out_words) {
      const int64_t repeats = in_words >= out_words ? 1 : (out_words + in_words - 1) / in_words;
      dim3 grid(grid_for(std::min(in_words, out_words), ctx_.sm_count),
                static_cast<unsigned>(std::min<int64_t>(repeats, 65535)));
      copy_words_kernel<<<grid, kThreads, 0, ctx_.stream>>>(static_cast<const uint4*>(buffer(copy, in_)),
                                                            static_cast<uint4*>(buffer(copy, out_)), in_words,
                                                            out_words);
      TW_KERNEL_CHECK();
    }
    if (out_words * 16 < out_bytes_) {
      copy_tail_kernel<<<1, kThreads, 0, ctx_.stream>>>(static_cast<const uint8_t*>(buffer(copy, in_)),
                                                        static_cast<uint8_t*>(buffer(copy, out_)), in_bytes_,
                                                        out_bytes_, out_words * 16);
      TW_KERNEL_CHECK();
    }
  }
  std::string algo_name() const override { return "copy_words_kernel(16B words)"; }

 private:
  int64_t in_bytes_ = 0, out_bytes_ = 0;
  size_t in_ = 0, out_ = 0;
};

}  // namespace

std::unique_ptr<OpRunner> make_eltwise(Context& ctx, const Layer& layer) {
  return std::make_unique<EltwiseRunner>(ctx, layer);
}
std::unique_ptr<OpRunner> make_reduce(Context& ctx, const Layer& layer) {
  return std::make_unique<RowRunner>(ctx, layer, false);
}
std::unique_ptr<OpRunner> make_softmax(Context& ctx, const Layer& layer) {
  return std::make_unique<RowRunner>(ctx, layer, true);
}
std::unique_ptr<OpRunner> make_copy(Context& ctx, const Layer& layer) {
  return std::make_unique<CopyRunner>(ctx, layer);
}

}  // namespace tw
