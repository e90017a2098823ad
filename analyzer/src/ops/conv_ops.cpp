// Conv and ConvTranspose: implicit-GEMM or direct convolution problems.
#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"
#include "window_shape.h"

namespace tilewave {

namespace {

// Symmetric padding that reproduces the output size ONNX inferred, which
// covers explicit, asymmetric and auto_pad padding alike.
int64_t equivalent_pad(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil) {
  const int64_t total = (out - 1) * stride + dil * (k - 1) + 1 - in;
  return total > 0 ? (total + 1) / 2 : 0;
}

// The same for ConvTranspose: out = (in-1)*stride - 2*pad + dil*(k-1) + 1.
int64_t transposed_pad(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil) {
  const int64_t total = (in - 1) * stride + dil * (k - 1) + 1 - out;
  return total > 0 ? total / 2 : 0;
}

// Views an N-D (1-D or 2-D) spatial tensor as N x C x H x W.
std::array<int64_t, 4> as_nchw(const TensorInfo& t) {
  if (t.dims.size() == 4) return {t.dims[0], t.dims[1], t.dims[2], t.dims[3]};
  if (t.dims.size() == 3) return {t.dims[0], t.dims[1], 1, t.dims[2]};
  throw Unmodelled(fmt::format("{}-D convolution is not modelled (1-D and 2-D are)", int(t.dims.size()) - 2));
}

std::array<int64_t, 2> pair_attr(const Node& n, const char* name, int64_t fallback, size_t rank) {
  auto v = attr_ints(n, name);
  if (v.empty()) return {fallback, fallback};
  if (rank == 1) return {fallback, v[0]};
  return {v[0], v.size() > 1 ? v[1] : v[0]};
}

}  // namespace

// A conv fed by DequantizeLinear runs as an int8 conv (QDQ graphs).
bool fed_by_dequantize(const LowerContext& ctx, size_t i) {
  const Node* p = ctx.has_input(i) ? ctx.model.producer_of(ctx.node.inputs[i]) : nullptr;
  return p && p->op_type == "DequantizeLinear";
}

std::optional<Layer> lower_conv(const LowerContext& ctx, const ConvOperands& at) {
  const bool transposed = at.transposed;
  const auto& x = ctx.input(at.x);
  const auto& w = ctx.input(at.w);
  const auto& y = ctx.output(0);
  const size_t rank = x.dims.size() - 2;
  auto in = as_nchw(x), out = as_nchw(y), wt = as_nchw(w);
  ConvProblem p;
  p.N = in[0];
  p.C = in[1];
  p.H = in[2];
  p.W = in[3];
  p.K = out[1];
  p.R = wt[2];  // weights are K x C/g x R x S (Conv) or C x K/g x R x S (ConvTranspose)
  p.S = wt[3];
  p.groups = attr_int(ctx.node, "group", 1);
  p.stride = pair_attr(ctx.node, "strides", 1, rank);
  p.dilation = pair_attr(ctx.node, "dilations", 1, rank);
  p.transposed = transposed;
  if (p.groups <= 0 || p.C % p.groups || p.K % p.groups)
    throw Unmodelled(fmt::format("group={} does not divide C={} and K={}", p.groups, p.C, p.K));
  if (transposed) {
    p.pad = {transposed_pad(p.H, out[2], p.R, p.stride[0], p.dilation[0]),
             transposed_pad(p.W, out[3], p.S, p.stride[1], p.dilation[1])};
  } else {
    p.pad = {equivalent_pad(p.H, out[2], p.R, p.stride[0], p.dilation[0]),
             equivalent_pad(p.W, out[3], p.S, p.stride[1], p.dilation[1])};
  }
  Layer l;
  l.problem = p;
  l.dtype = at.int8 || fed_by_dequantize(ctx, at.x) ? DType::int8 : ctx.dtype;
  if (at.bias > 0 && ctx.has_input(size_t(at.bias))) l.extra_bytes = ctx.bytes_of(p.K);
  return l;
}

// Y = [N, M, spatial...] (docs/model.md "GEMM-like kernels").
void shape_conv(ShapeContext& ctx, const ConvOperands& at) {
  const bool transposed = at.transposed;
  const auto& x = ctx.dims(at.x);
  const auto& w = ctx.dims(at.w);
  if (x.size() < 3) ctx.fail(fmt::format("input has rank {}; a convolution needs N x C x spatial", x.size()));
  if (w.size() != x.size()) ctx.fail(fmt::format("weight has rank {}, input rank {}", w.size(), x.size()));
  shape::require_nonempty(ctx, x, "input");
  shape::require_nonempty(ctx, w, "weight");
  const int64_t group = attr_int(ctx.node, "group", 1);
  if (group <= 0) ctx.fail(fmt::format("group is {}", group));
  // Conv weights are M x C/group x k...; ConvTranspose weights C x M/group x k...
  const int64_t c_per_group = transposed ? -1 : w[1];
  if (!transposed && x[1] >= 0 && c_per_group >= 0 && x[1] != c_per_group * group)
    ctx.fail(fmt::format("input has {} channels; the weight expects {} (x group {})", x[1], c_per_group * group, group));
  if (transposed && x[1] >= 0 && w[0] >= 0 && x[1] != w[0])
    ctx.fail(fmt::format("input has {} channels; the weight expects {}", x[1], w[0]));
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const auto kernel_shape = attr_ints(ctx.node, "kernel_shape");
  if (!kernel_shape.empty() && shape::known(kernel) && kernel_shape != kernel)
    ctx.fail(fmt::format("kernel_shape {} differs from the weight's {}", fmt::join(kernel_shape, "x"), fmt::join(kernel, "x")));
  const auto spatial = window::output_dims(ctx, x, kernel, transposed);
  std::vector<int64_t> out = {x[0], transposed ? (w[1] < 0 ? -1 : w[1] * group) : w[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  ctx.set_output(0, out, at.out_type >= 0 ? ctx.elem_type(size_t(at.out_type)) : at.out_type == -2 ? elem::kInt32 : ctx.elem_type(at.x));
}

void register_conv_ops(OpRegistry& r) {
  auto add = [&](const char* domain, const char* op, ConvOperands at, int min_inputs, int max_inputs) {
    r.add({domain, op, FusionRole::gemm, [at](ShapeContext& c) { shape_conv(c, at); },
           [at](const LowerContext& c) { return lower_conv(c, at); }, TILEWAVE_HERE})
        .inputs(min_inputs, max_inputs)
        .rank(at.x, 3, 8)
        .rank(at.w, 3, 8)
        .attr("group", 1, int64_t(1) << 31);
  };
  add("", "Conv", {}, 2, 3);
  add("", "ConvTranspose", {.transposed = true}, 2, 3);
  add("com.microsoft", "FusedConv", {}, 2, 4);  // Conv + bias + activation, as ONNX Runtime fuses it
  // Quantized forms: int8 convolutions whatever --dtype says.
  add("", "QLinearConv", {.x = 0, .w = 3, .bias = 8, .int8 = true, .out_type = 7}, 8, 9);
  add("", "ConvInteger", {.x = 0, .w = 1, .bias = -1, .int8 = true, .out_type = -2}, 2, 4);
}

}  // namespace tilewave
