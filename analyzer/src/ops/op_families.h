// Shape functions and lowerings one op family lends another (quantized and
// ONNX Runtime forms of Conv, MatMul, Gelu, LayerNorm …), so that each form
// is one registry entry over the same code.
#pragma once
#include <optional>

#include "tilewave/op_registry.h"

namespace tilewave {

// Where a conv-shaped op keeps its operands.
struct ConvOperands {
  size_t x = 0, w = 1;
  int bias = 2;            // -1: none
  bool transposed = false;
  bool int8 = false;       // quantized: an int8 conv whatever --dtype says
  int out_type = -1;       // element type of Y: -1 as X, -2 int32, else that input's type (a zero point)
};
void shape_conv(ShapeContext& ctx, const ConvOperands& at);
std::optional<Layer> lower_conv(const LowerContext& ctx, const ConvOperands& at);
// True when input i comes out of a DequantizeLinear (QDQ graphs).
bool fed_by_dequantize(const LowerContext& ctx, size_t i);

// numpy matmul of dims a and b; fail()s when the inner dims differ.
std::vector<int64_t> matmul_dims(const ShapeContext& ctx, std::vector<int64_t> a, std::vector<int64_t> b);
// A (batched) GEMM from the operand and output shapes.
std::optional<Layer> lower_matmul_dims(const LowerContext& ctx, const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b, const std::vector<int64_t>& y, bool int8);

std::optional<Layer> lower_elementwise(const LowerContext& ctx);
// Whether `expand` (an Expand node) launches nothing: every reader is
// elementwise and reads the stride-0 view in place (docs/model.md "Framework ops").
bool expand_is_view(const LowerContext& ctx, const Node& expand);
// A data-movement kernel reading elems_in and writing elems_out.
std::optional<Layer> make_copy(const LowerContext& ctx, int64_t elems_in, int64_t elems_out);
// A row normalisation over the dims from `axis` on (softmax, LayerNorm, RMSNorm).
std::optional<Layer> lower_rowwise_from(const LowerContext& ctx, int64_t axis);
// LayerNorm and its kin, normalising from their `axis` attribute on.
void shape_norm(ShapeContext& ctx);
std::optional<Layer> lower_norm(const LowerContext& ctx);
std::optional<Layer> lower_layer_norm(const LowerContext& ctx);
// outer reductions of inner elements each (Reduce*, global pooling).
std::optional<Layer> lower_reduce(const LowerContext& ctx);

}  // namespace tilewave
