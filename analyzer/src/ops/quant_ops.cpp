// Quantization nodes as deployments write them for int8: QuantizeLinear /
// DequantizeLinear around convs and GEMMs (QDQ), and ONNX Runtime's QLinear
// elementwise ops. The quantized convs and GEMMs themselves are conv_ops'
// and gemm_ops' entries. Every op here is an elementwise pass in every
// runtime (docs/model.md "Quantized graphs and other op families").
#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

// QuantizeLinear: the zero point's type, else output_dtype (21), else uint8.
void shape_quantize(ShapeContext& ctx) {
  int32_t type = int32_t(attr_int(ctx.node, "output_dtype", elem::kUint8));
  if (ctx.has_input(2)) type = ctx.elem_type(2);
  ctx.set_output(0, ctx.dims(0), type);
}

// DequantizeLinear: the scale's type (float unless fp16/bf16 scales).
void shape_dequantize(ShapeContext& ctx) {
  ctx.set_output(0, ctx.dims(0), ctx.has_input(1) ? ctx.elem_type(1) : elem::kFloat);
}

void shape_dynamic_quantize(ShapeContext& ctx) {
  ctx.set_output(0, ctx.dims(0), elem::kUint8);
  ctx.set_output(1, {}, elem::kFloat);
  ctx.set_output(2, {}, elem::kUint8);
}

// QLinearAdd / QLinearMul: A at 0, B at 3, broadcast; Y as A.
void shape_qlinear_binary(ShapeContext& ctx) {
  ctx.set_output(0, broadcast_shapes(ctx, {ctx.dims(0), ctx.dims(3)}), ctx.elem_type(0));
}

// QLinearGlobalAveragePool: NCHW, or NHWC with channels_last.
void shape_qlinear_global_pool(ShapeContext& ctx) {
  auto out = ctx.dims(0);
  if (out.size() < 3) ctx.fail(fmt::format("input has rank {}", out.size()));
  const bool last = attr_int(ctx.node, "channels_last", 0) != 0;
  for (size_t k = last ? 1 : 2; k < out.size() - (last ? 1 : 0); ++k) out[k] = 1;
  ctx.set_output(0, out, ctx.elem_type(0));
}

// ONNX Runtime's QLinear ops move int8 data whatever --dtype says.
LowerFn in_int8(LowerFn lower) {
  return [lower](const LowerContext& ctx) {
    auto l = lower(ctx);
    if (l) l->dtype = DType::int8;
    return l;
  };
}

}  // namespace

void register_quant_ops(OpRegistry& r) {
  auto add = [&](const char* domain, const char* op, ShapeFn shape, LowerFn lower, int since = 10) -> OpEntry {
    OpRule rule{domain, op, FusionRole::elementwise, std::move(shape), std::move(lower), TILEWAVE_HERE};
    rule.since_opset = since;
    return r.add(std::move(rule));
  };
  add("", "QuantizeLinear", shape_quantize, lower_elementwise).inputs(2, 3).traits(op_trait::quantize_boundary);
  add("", "DequantizeLinear", shape_dequantize, lower_elementwise).inputs(2, 3).traits(op_trait::quantize_boundary);
  add("", "DynamicQuantizeLinear", shape_dynamic_quantize, lower_elementwise, 11).inputs(1, 1);
  add("com.microsoft", "QLinearAdd", shape_qlinear_binary, in_int8(lower_elementwise), 1);
  add("com.microsoft", "QLinearMul", shape_qlinear_binary, in_int8(lower_elementwise), 1);
  for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"})
    add("com.microsoft", op, [](ShapeContext& c) { c.same_as_input(0); }, in_int8(lower_elementwise), 1);
  OpRule pool{"com.microsoft", "QLinearGlobalAveragePool", FusionRole::reduction, shape_qlinear_global_pool,
              in_int8(lower_reduce), TILEWAVE_HERE};
  pool.since_opset = 1;
  r.add(std::move(pool));
}

}  // namespace tilewave
