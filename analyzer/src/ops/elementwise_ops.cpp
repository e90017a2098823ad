// Elementwise ops (activations, arithmetic, inference-time normalisation):
// memory-bound kernels reading their full-size inputs and writing one output.
// Their shape functions broadcast, and evaluate small known integer values
// (the shape arithmetic exporters write) as they go.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"

namespace tilewave {

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
    const TensorInfo* operand = &ctx.input(i);
    // An expand it reads in place: the tensor before the expand is what it reads.
    if (const Node* p = ctx.model.producer_of(ctx.node.inputs[i]); p && expand_is_view(ctx, *p))
      operand = ctx.model.tensor(p->inputs[0]);
    const int64_t n = operand->numel();
    // Full-size operands stream through; broadcast ones (bias, BN scale) are
    // small and make the kernel strided, unless a scalar: the export writes a
    // Python number as a rank-0 constant, which PyTorch passes as an argument,
    // and a one-element tensor (StarReLU's scale) with its rank.
    if (n >= out) ++m.inputs;
    else l.extra_bytes += ctx.bytes_of(n);
    if (n < out && (n > 1 || !operand->dims.empty())) m.strided = true;
  }
  if (ctx.registry) m.special_functions = ctx.registry->special_functions(ctx.node.domain, ctx.node.op_type);
  l.problem = m;
  return l;
}

namespace {

// Element value function: operands as reals and as integers, whichever the
// output type uses.
using RealFn = std::function<double(const std::vector<double>&)>;
using IntFn = std::function<int64_t(const std::vector<int64_t>&)>;

using BoolFn = std::function<bool(const std::vector<double>&)>;

struct ValueRule {
  RealFn real;  // null: not evaluated for real outputs
  IntFn integer;
  BoolFn boolean = nullptr;  // comparisons: operands read as reals, exact for shape-sized integers
};

// Evaluates the output when every input's value is known.
void evaluate(ShapeContext& ctx, const std::vector<int64_t>& out_dims, int32_t out_type, const ValueRule& rule,
              size_t first = 0, size_t last = SIZE_MAX) {
  std::vector<const TensorValue*> vals;
  for (size_t i = first; i < std::min(last, ctx.num_inputs()); ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorValue* v = ctx.value(i);
    if (!v) return;
    vals.push_back(v);
  }
  const int64_t n = shape::product(out_dims);
  if (vals.empty() || n < 0 || n > ctx.value_room()) return;
  TensorValue out = shape::make_value(out_dims, out_type);
  if (out.real ? !rule.real : !(rule.integer || rule.boolean)) return;
  std::vector<double> reals(vals.size());
  std::vector<int64_t> ints(vals.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < vals.size(); ++k) {
      const size_t at = shape::broadcast_offset(size_t(i), out_dims, vals[k]->dims);
      if (at >= vals[k]->size()) return;
      reals[k] = vals[k]->real_at(at);
      ints[k] = vals[k]->int_at(at);
    }
    if (out.real) out.reals.push_back(rule.real(reals));
    else if (rule.boolean) out.ints.push_back(rule.boolean(reals));
    else out.ints.push_back(rule.integer(ints));
  }
  ctx.set_value(0, std::move(out));
}

std::vector<std::vector<int64_t>> input_shapes(const ShapeContext& ctx, size_t first = 0) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = first; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) shapes.push_back(ctx.dims(i));
  return shapes;
}

// out_type 0: the type of the first input. The entry's signature holds the
// input count: two for the binary ops (Add, Pow, Less...), whose value rules
// read both; one or more for the variadic ones (Sum, Max...).
ShapeFn broadcast(ValueRule rule = {}, int32_t out_type = 0) {
  return [rule, out_type](ShapeContext& ctx) {
    const auto dims = broadcast_shapes(ctx, input_shapes(ctx));
    const int32_t type = out_type ? out_type : ctx.elem_type(0);
    ctx.set_output(0, dims, type);
    evaluate(ctx, dims, type, rule);
  };
}

ShapeFn unary(ValueRule rule = {}) {
  return [rule](ShapeContext& ctx) {
    ctx.same_as_input(0);
    evaluate(ctx, ctx.dims(0), ctx.elem_type(0), rule, 0, 1);
  };
}

// Integer shape arithmetic from a file: an overflow leaves the value unknown
// (a runtime would wrap it; tilewave will not guess a wrapped shape).
[[noreturn]] void overflow() { throw ShapeUnknown("shape arithmetic overflows 64-bit integers"); }
int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow();
  return r;
}
int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) overflow();
  return r;
}
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow();
  return r;
}

int64_t checked_div(int64_t a, int64_t b) {
  if (b == 0) throw ShapeUnknown("integer division by zero in shape arithmetic");
  if (b == -1) return checked_sub(0, a);
  return a / b;  // ONNX integer Div truncates
}

int64_t c_mod(int64_t a, int64_t b) {
  if (b == 0) throw ShapeUnknown("integer modulo by zero in shape arithmetic");
  return b == -1 ? 0 : a % b;  // INT64_MIN % -1 is undefined in C++
}

int64_t python_mod(int64_t a, int64_t b) {
  const int64_t r = c_mod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

void shape_cast(ShapeContext& ctx) {
  const int32_t to = int32_t(attr_int(ctx.node, "to", 0));
  if (to == 0) ctx.fail("Cast has no 'to' attribute");
  ctx.set_output(0, ctx.dims(0), to);
  // A real source cast to an integer truncates toward zero, as int_at() reads it.
  if (to == elem::kBool)
    evaluate(ctx, ctx.dims(0), to, {nullptr, nullptr, [](const auto& v) { return v[0] != 0; }}, 0, 1);
  else
    evaluate(ctx, ctx.dims(0), to, {[](const auto& v) { return v[0]; }, [](const auto& v) { return v[0]; }}, 0, 1);
}

void shape_where(ShapeContext& ctx) {
  // Its value rule reads condition, X and Y alike (the signature requires all three).
  const auto dims = broadcast_shapes(ctx, input_shapes(ctx));
  const int32_t type = ctx.elem_type(1);
  ctx.set_output(0, dims, type);
  evaluate(ctx, dims, type,
           {[](const auto& v) { return v[0] != 0 ? v[1] : v[2]; }, [](const auto& v) { return v[0] ? v[1] : v[2]; }});
}

// BatchNormalization: Y as X; training-mode outputs as the statistics.
void shape_batchnorm(ShapeContext& ctx) {
  ctx.same_as_input(0);
  for (size_t o = 1; o < ctx.num_outputs(); ++o)
    if (ctx.has_output(o) && ctx.has_input(3)) ctx.same_as_input(3, o);
}

// PRelu: the slope broadcasts to X.
void shape_prelu(ShapeContext& ctx) {
  const auto dims = broadcast_shapes(ctx, input_shapes(ctx));
  if (dims != ctx.dims(0) && shape::known(ctx.dims(0))) ctx.fail("slope does not broadcast to the input");
  ctx.same_as_input(0);
}

// Clip: bounds as attributes (before 11) or inputs; TF-"same" padding
// clips its pad amounts at zero, so the value matters.
void shape_clip(ShapeContext& ctx) {
  ctx.same_as_input(0);
  double lo = -INFINITY, hi = INFINITY;
  if (ctx.opset < 11) {
    lo = attr_float(ctx.node, "min", -INFINITY);
    hi = attr_float(ctx.node, "max", INFINITY);
  } else {
    for (size_t i : {1, 2}) {
      if (!ctx.has_input(i)) continue;
      const TensorValue* b = ctx.value(i);
      if (!b || b->size() != 1) return;
      (i == 1 ? lo : hi) = b->real_at(0);
    }
  }
  evaluate(ctx, ctx.dims(0), ctx.elem_type(0),
           // min then max, as ONNX defines it; std::clamp is undefined for lo > hi.
           {[lo, hi](const auto& v) { return std::min(std::max(v[0], lo), hi); },
            [lo, hi](const auto& v) { return int64_t(std::min(std::max(double(v[0]), lo), hi)); }},
           0, 1);
}

void shape_bool_out(ShapeContext& ctx) { ctx.set_output(0, ctx.dims(0), elem::kBool); }

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  auto add = [&](const char* op, ShapeFn shape, int since = 7) -> OpEntry {
    OpRule rule{"", op, FusionRole::elementwise, std::move(shape), lower_elementwise, TILEWAVE_HERE};
    rule.since_opset = since;
    return r.add(std::move(rule));
  };
  // Activations and other one-input ops keep their input's shape.
  // Activations advise moves with their conv, and others that keep channels as they are.
  using namespace op_trait;
  for (const char* op : {"LeakyRelu", "HardSwish"}) add(op, unary()).inputs(1, 1).traits(activation | carries_channels);
  for (const char* op : {"Sigmoid", "Tanh"})
    add(op, unary()).inputs(1, 1).traits(activation | carries_channels).special_functions(1);
  add("Elu", unary()).inputs(1, 1).traits(carries_channels).special_functions(1);
  add("HardSigmoid", unary()).inputs(1, 1).traits(carries_channels);
  for (const char* op : {"Selu", "Celu", "Softplus", "Erf", "Exp", "Log", "Sin", "Cos"})
    add(op, unary()).inputs(1, 1).special_functions(1);
  // x·tanh(softplus(x)): the H100 sweep prices it as two (calibrate/data/h100/special_functions).
  add("Mish", unary()).inputs(1, 1).special_functions(2);
  for (const char* op : {"Softsign", "ThresholdedRelu"}) add(op, unary()).inputs(1, 1);
  // Shrink (opset 9): x - bias above lambd, x + bias below -lambd, else 0. Not
  // an activation: advise's Fused-MBConv pairs activations by op type alone,
  // which would take two Shrinks of different lambd for one.
  add("Shrink", [](ShapeContext& ctx) {
    const double lambd = attr_float(ctx.node, "lambd", 0.5f), bias = attr_float(ctx.node, "bias", 0.0f);
    unary({[=](const auto& v) { return v[0] > lambd ? v[0] - bias : v[0] < -lambd ? v[0] + bias : 0.0; },
           nullptr})(ctx);
  }, 9).inputs(1, 1).traits(carries_channels);
  add("Clip", shape_clip).inputs(1, 3).traits(activation | carries_channels);
  add("Gelu", unary(), 20).inputs(1, 1).traits(activation | carries_channels).special_functions(1);
  add("Relu", unary({[](const auto& v) { return std::max(v[0], 0.0); },
                     [](const auto& v) { return std::max<int64_t>(v[0], 0); }}))
      .inputs(1, 1)
      .traits(activation | carries_channels);
  add("Neg", unary({[](const auto& v) { return -v[0]; }, [](const auto& v) { return checked_sub(0, v[0]); }})).inputs(1, 1);
  add("Abs", unary({[](const auto& v) { return std::fabs(v[0]); },
                    [](const auto& v) { return v[0] < 0 ? checked_sub(0, v[0]) : v[0]; }})).inputs(1, 1);
  add("Sign", unary({[](const auto& v) { return double((v[0] > 0) - (v[0] < 0)); },
                     [](const auto& v) { return int64_t((v[0] > 0) - (v[0] < 0)); }})).inputs(1, 1);
  add("Floor", unary({[](const auto& v) { return std::floor(v[0]); }, nullptr})).inputs(1, 1);
  add("Ceil", unary({[](const auto& v) { return std::ceil(v[0]); }, nullptr})).inputs(1, 1);
  add("Round", unary({[](const auto& v) { return std::nearbyint(v[0]); }, nullptr})).inputs(1, 1);
  add("Sqrt", unary({[](const auto& v) { return std::sqrt(v[0]); }, nullptr})).inputs(1, 1);
  add("Reciprocal", unary({[](const auto& v) { return 1.0 / v[0]; }, nullptr})).inputs(1, 1);
  add("Not", unary({nullptr, [](const auto& v) { return int64_t(!v[0]); }})).inputs(1, 1);
  add("Add", broadcast({[](const auto& v) { return v[0] + v[1]; }, [](const auto& v) { return checked_add(v[0], v[1]); }})).inputs(2, 2).traits(channel_binary);
  add("Sub", broadcast({[](const auto& v) { return v[0] - v[1]; }, [](const auto& v) { return checked_sub(v[0], v[1]); }})).inputs(2, 2).traits(channel_binary);
  add("Mul", broadcast({[](const auto& v) { return v[0] * v[1]; }, [](const auto& v) { return checked_mul(v[0], v[1]); }})).inputs(2, 2).traits(channel_binary);
  add("Div", broadcast({[](const auto& v) { return v[0] / v[1]; },
                        [](const auto& v) { return checked_div(v[0], v[1]); }})).inputs(2, 2).traits(channel_binary);
  add("Pow", broadcast({[](const auto& v) { return std::pow(v[0], v[1]); }, nullptr})).inputs(2, 2);
  add("Mod", [](ShapeContext& ctx) {
    const bool fmod = attr_int(ctx.node, "fmod", 0) != 0;
    broadcast({[fmod](const auto& v) { return fmod ? std::fmod(v[0], v[1]) : v[0] - v[1] * std::floor(v[0] / v[1]); },
               [fmod](const auto& v) { return fmod ? c_mod(v[0], v[1]) : python_mod(v[0], v[1]); }})(ctx);
  }).inputs(2, 2);
  add("Max", broadcast({[](const auto& v) { return *std::max_element(v.begin(), v.end()); },
                        [](const auto& v) { return *std::max_element(v.begin(), v.end()); }})).inputs(1, -1);
  add("Min", broadcast({[](const auto& v) { return *std::min_element(v.begin(), v.end()); },
                        [](const auto& v) { return *std::min_element(v.begin(), v.end()); }})).inputs(1, -1);
  add("Sum", broadcast({[](const auto& v) { double s = 0; for (double x : v) s += x; return s; },
                        [](const auto& v) { int64_t s = 0; for (int64_t x : v) s = checked_add(s, x); return s; }})).inputs(1, -1);
  add("Mean", broadcast({[](const auto& v) { double s = 0; for (double x : v) s += x; return s / v.size(); },
                         nullptr})).inputs(1, -1);
  auto compare = [&](const char* op, std::function<bool(double, double)> pred) {
    add(op, broadcast({nullptr, nullptr, [pred](const auto& v) { return pred(v[0], v[1]); }}, elem::kBool)).inputs(2, 2);
  };
  compare("Equal", [](double a, double b) { return a == b; });
  compare("Less", [](double a, double b) { return a < b; });
  compare("Greater", [](double a, double b) { return a > b; });
  compare("LessOrEqual", [](double a, double b) { return a <= b; });
  compare("GreaterOrEqual", [](double a, double b) { return a >= b; });
  compare("And", [](double a, double b) { return a != 0 && b != 0; });
  compare("Or", [](double a, double b) { return a != 0 || b != 0; });
  compare("Xor", [](double a, double b) { return (a != 0) != (b != 0); });
  add("BitShift", broadcast()).inputs(2, 2);
  add("Where", shape_where).inputs(3, 3);
  add("Cast", shape_cast).inputs(1, 1);
  add("PRelu", shape_prelu).inputs(2, 2);
  add("BatchNormalization", shape_batchnorm).inputs(5, 5).rank(0, 1, 8).traits(carries_channels | running_stats_inputs);
  add("IsNaN", shape_bool_out).inputs(1, 1);
  add("IsInf", shape_bool_out).inputs(1, 1);
}

}  // namespace tilewave
