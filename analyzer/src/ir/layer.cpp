#include "tilewave/layer.h"

#include <algorithm>

namespace tilewave {

namespace {
int64_t out_dim(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}
int64_t transposed_out_dim(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in - 1) * stride - 2 * pad + dil * (k - 1) + 1;
}
}  // namespace

int64_t ConvProblem::P() const {
  return transposed ? transposed_out_dim(H, R, stride[0], pad[0], dilation[0])
                    : out_dim(H, R, stride[0], pad[0], dilation[0]);
}
int64_t ConvProblem::Q() const {
  return transposed ? transposed_out_dim(W, S, stride[1], pad[1], dilation[1])
                    : out_dim(W, S, stride[1], pad[1], dilation[1]);
}

int64_t ConvProblem::macs() const {
  // A transposed conv does the MACs of the forward conv it is the gradient of:
  // every input pixel meets every filter tap once.
  const int64_t pixels = transposed ? N * H * W : N * P() * Q();
  return pixels * K * (C / groups) * R * S;
}

const char* memory_op_name(MemoryOp op) {
  switch (op) {
    case MemoryOp::eltwise: return "eltwise";
    case MemoryOp::pool: return "pool";
    case MemoryOp::reduce: return "reduce";
    case MemoryOp::row_norm: return "softmax";
    case MemoryOp::copy: return "copy";
    case MemoryOp::fused: return "fused";
    case MemoryOp::transform: return "transform";
    case MemoryOp::norm: return "norm";
  }
  return "?";
}

const char* resample_kernel_name(ResampleKernel k) {
  switch (k) {
    case ResampleKernel::none: return "none";
    case ResampleKernel::nearest_nchw: return "nearest_nchw";
    case ResampleKernel::nearest_nhwc: return "nearest_nhwc";
    case ResampleKernel::linear_nhwc: return "linear_nhwc";
  }
  return "?";
}

std::optional<ResampleKernel> resample_kernel_of(std::string_view name) {
  for (ResampleKernel k : {ResampleKernel::nearest_nchw, ResampleKernel::nearest_nhwc, ResampleKernel::linear_nhwc})
    if (name == resample_kernel_name(k)) return k;
  return std::nullopt;
}

Layer elementwise_layer(int64_t elems, DType dtype, int64_t extra_bytes) {
  MemoryProblem m;
  m.op = MemoryOp::eltwise;
  m.elems = elems;
  m.inputs = 1;
  Layer l;
  l.problem = m;
  l.dtype = dtype;
  l.extra_bytes = extra_bytes;
  return l;
}

int64_t MemoryProblem::elems_read() const {
  switch (op) {
    case MemoryOp::eltwise:
    case MemoryOp::norm: return elems * inputs;
    case MemoryOp::pool: return window.N * window.C * window.H * window.W;
    case MemoryOp::reduce:
    case MemoryOp::row_norm: return outer * inner;
    case MemoryOp::copy:
    case MemoryOp::fused:
    case MemoryOp::transform: return elems_in;
  }
  return 0;
}

int64_t MemoryProblem::elems_written() const {
  switch (op) {
    case MemoryOp::eltwise:
    case MemoryOp::norm: return elems;
    case MemoryOp::pool: return window.N * window.C * window.P() * window.Q();
    case MemoryOp::reduce: return outer;
    case MemoryOp::row_norm: return row_moments ? 2 * outer : outer * inner;  // mean and 1/std per row
    case MemoryOp::copy:
    case MemoryOp::fused:
    case MemoryOp::transform: return elems_out;
  }
  return 0;
}

bool grouped_fallback(const ConvProblem& p, int align) {
  const int64_t cg = p.C / p.groups, kg = p.K / p.groups;
  const auto pow2 = [](int64_t v) { return v > 0 && (v & (v - 1)) == 0; };
  return p.groups > 1 && cg >= align && kg >= align && !(pow2(cg) && pow2(kg));
}

bool is_depthwise(int64_t in_channels, int64_t groups) { return groups > 1 && in_channels == groups; }
bool is_depthwise(const ConvProblem& p) { return is_depthwise(p.C, p.groups); }
bool is_pointwise(const ConvProblem& p) {
  return !p.transposed && p.R == 1 && p.S == 1 && p.stride[0] == 1 && p.stride[1] == 1 && p.pad[0] == 0 && p.pad[1] == 0;
}
bool is_dense_half_pointwise(const ConvProblem& p, DType dtype) {
  return p.groups == 1 && is_pointwise(p) && (dtype == DType::fp16 || dtype == DType::bf16);
}

NarrowConv narrow_conv(const ConvProblem& p, int align, bool nchw) {
  // Fewer filters than a vector too (ECA's 1-D channel convolution) run
  // cuDNN's direct kernels instead.
  if (p.groups != 1 || p.transposed || p.C >= align || p.K < align) return NarrowConv::none;
  // cuDNN's first-layer kernels, by their names: k64 r7s7, k64 r3s3 and k32
  // r7s7, stride 2, over 4 channels. From NCHW its heuristic takes only the
  // 7x7 ones (they then run between layout transforms).
  const bool stride2 = p.stride[0] == 2 && p.stride[1] == 2 && p.dilation[0] == 1 && p.dilation[1] == 1;
  const bool square = p.R == p.S;
  const bool shape = square && ((p.R == 7 && (p.K == 64 || p.K == 32)) || (p.R == 3 && p.K == 64 && !nchw));
  return p.C < 4 && stride2 && shape ? NarrowConv::first_layer : NarrowConv::unaligned;
}

int64_t useful_flops(const Layer& l) {
  if (auto* c = std::get_if<ConvProblem>(&l.problem)) return 2 * c->macs();
  if (auto* g = std::get_if<GemmProblem>(&l.problem)) return 2 * g->macs();
  if (auto* a = std::get_if<AttentionProblem>(&l.problem)) return 2 * a->macs();
  return 0;
}

int64_t min_bytes(const Layer& l) {
  const int64_t e = dtype_bytes(l.dtype);
  int64_t elems = 0;
  if (auto* c = std::get_if<ConvProblem>(&l.problem)) {
    int64_t in_px = c->N * c->H * c->W;
    const int64_t out_px = c->N * c->P() * c->Q();
    // A strided window smaller than its stride (1x1/2) reads only the pixels it uses.
    if (!c->transposed) in_px = std::min(in_px, out_px * c->R * c->S);
    // Forward and transposed weights both hold C*K/groups filters of R*S taps.
    const int64_t weights = c->K * (c->C / c->groups) * c->R * c->S;
    elems = in_px * c->C + out_px * c->K + weights;
  } else if (auto* g = std::get_if<GemmProblem>(&l.problem)) {
    elems = g->batch * (g->M * g->K + g->K * g->N + g->M * g->N);
  } else if (auto* a = std::get_if<AttentionProblem>(&l.problem)) {
    // Q, K and V read once, the output written once; the scores stay on chip.
    elems = a->batch_heads * (a->q_len * (a->head_dim + a->v_head_dim) + a->kv_len * (a->head_dim + a->v_head_dim));
  } else {
    auto& m = std::get<MemoryProblem>(l.problem);
    const int64_t in_bytes = dtype_bytes(l.input_dtype.value_or(l.dtype));
    return m.elems_read() * in_bytes + m.elems_written() * e + l.extra_bytes;
  }
  return elems * e + l.extra_bytes;
}

bool layer_within_limits(const Layer& l) {
  using W = long double;  // 64-bit mantissa: exact enough to compare with 2^60
  W macs = 0, elems = 0;
  if (auto* c = std::get_if<ConvProblem>(&l.problem)) {
    const W pixels = c->transposed ? W(c->N) * c->H * c->W : W(c->N) * c->P() * c->Q();
    macs = pixels * c->K * W(c->C / std::max<int64_t>(c->groups, 1)) * c->R * c->S;
    elems = W(c->N) * c->H * c->W * c->C + pixels * c->K + W(c->K) * c->C * c->R * c->S;
  } else if (auto* g = std::get_if<GemmProblem>(&l.problem)) {
    macs = W(g->M) * g->N * g->K * g->batch;
    elems = W(g->batch) * (W(g->M) * g->K + W(g->K) * g->N + W(g->M) * g->N);
  } else if (auto* a = std::get_if<AttentionProblem>(&l.problem)) {
    macs = W(a->batch_heads) * a->q_len * a->kv_len * (a->head_dim + a->v_head_dim);
    elems = W(a->batch_heads) * (a->q_len + a->kv_len) * (a->head_dim + a->v_head_dim);
  } else {
    const auto& m = std::get<MemoryProblem>(l.problem);
    elems = W(m.elems) * std::max<int64_t>(m.inputs, 1) + W(m.outer) * m.inner + W(m.elems_in) + m.elems_out +
            W(m.window.N) * m.window.C * m.window.H * m.window.W;
  }
  const int widest = std::max(dtype_bytes(l.dtype), dtype_bytes(l.input_dtype.value_or(l.dtype)));
  return 2 * macs <= kMaxKernelCount && (elems * widest + l.extra_bytes) <= kMaxKernelCount;
}

KernelClass kernel_class(const Layer& l) {
  if (auto* c = std::get_if<ConvProblem>(&l.problem)) {
    if (c->transposed) return KernelClass::conv_transpose;
    if (is_depthwise(*c)) return KernelClass::conv_depthwise;
    return c->groups > 1 ? KernelClass::conv_grouped : KernelClass::conv;
  }
  if (std::holds_alternative<GemmProblem>(l.problem)) return KernelClass::gemm;
  if (std::holds_alternative<AttentionProblem>(l.problem)) return KernelClass::attention;
  switch (std::get<MemoryProblem>(l.problem).op) {
    case MemoryOp::eltwise: return KernelClass::eltwise;
    case MemoryOp::pool: return KernelClass::pool;
    case MemoryOp::reduce: return KernelClass::reduce;
    case MemoryOp::row_norm: return KernelClass::row_norm;
    case MemoryOp::copy: return KernelClass::copy;
    case MemoryOp::fused: return KernelClass::fused;
    case MemoryOp::transform: return KernelClass::transform;
    case MemoryOp::norm: return KernelClass::norm;
  }
  return KernelClass::eltwise;
}

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::conv: return "conv";
    case KernelClass::conv_grouped: return "conv_grouped";
    case KernelClass::conv_depthwise: return "conv_depthwise";
    case KernelClass::conv_transpose: return "conv_transpose";
    case KernelClass::gemm: return "gemm";
    case KernelClass::attention: return "attention";
    case KernelClass::eltwise: return memory_op_name(MemoryOp::eltwise);
    case KernelClass::pool: return memory_op_name(MemoryOp::pool);
    case KernelClass::reduce: return memory_op_name(MemoryOp::reduce);
    case KernelClass::row_norm: return memory_op_name(MemoryOp::row_norm);
    case KernelClass::copy: return memory_op_name(MemoryOp::copy);
    case KernelClass::fused: return memory_op_name(MemoryOp::fused);
    case KernelClass::transform: return memory_op_name(MemoryOp::transform);
    case KernelClass::norm: return memory_op_name(MemoryOp::norm);
  }
  return "?";
}

bool is_library(KernelClass c) {
  switch (c) {
    case KernelClass::conv:
    case KernelClass::conv_grouped:
    case KernelClass::conv_depthwise:
    case KernelClass::conv_transpose:
    case KernelClass::gemm:
    case KernelClass::attention: return true;
    default: return false;
  }
}

std::string layer_kind(const Layer& l) {
  const KernelClass c = kernel_class(l);
  return c == KernelClass::conv_grouped || c == KernelClass::conv_depthwise ? "conv" : kernel_class_name(c);
}

}  // namespace tilewave
