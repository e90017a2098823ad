// Elementwise ops (activations, arithmetic, inference-time normalisation):
// memory-bound kernels reading their full-size inputs and writing one output.
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

std::optional<Layer> lower_elementwise(const LowerContext& ctx) {
  const int64_t out = ctx.output(0).numel();
  MemoryProblem m;
  m.op = MemoryOp::eltwise;
  m.elems = out;
  m.inputs = 0;
  Layer l;
  l.dtype = ctx.dtype;
  for (size_t i = 0; i < ctx.node.inputs.size(); ++i) {
    if (!ctx.has_input(i)) continue;
    const int64_t n = ctx.input(i).numel();
    // Full-size operands stream through; broadcast ones (bias, BN scale) are small.
    if (n >= out) ++m.inputs;
    else l.extra_bytes += ctx.bytes_of(n);
  }
  l.problem = m;
  return l;
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  for (const char* op : {"Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Clip", "Sigmoid", "HardSigmoid",
                         "HardSwish", "Tanh", "Softplus", "Softsign", "Mish", "Gelu", "Erf", "Exp", "Log", "Sqrt",
                         "Reciprocal", "Neg", "Abs", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Not",
                         "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod", "Equal", "Less",
                         "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "Cast",
                         "BatchNormalization", "ThresholdedRelu", "BitShift", "IsNaN", "IsInf"})
    r.add({"", op, FusionRole::elementwise, lower_elementwise, TILEWAVE_HERE});
}

}  // namespace tilewave
