// Pooling, reductions and row normalisations: memory-bound kernels whose
// output is smaller than (reduce) or equal to (softmax) their input.
#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"
#include "window_shape.h"

namespace tilewave {

namespace {

std::optional<Layer> lower_pool(const LowerContext& ctx, bool max_pool) {
  const auto& x = ctx.input(0);
  const auto& y = ctx.output(0);
  if (x.dims.size() != 4) throw Unmodelled("only 2-D pooling is modelled");
  auto k = attr_ints(ctx.node, "kernel_shape");
  auto s = attr_ints(ctx.node, "strides", {1, 1});
  if (s.empty()) s = {1, 1};  // an empty list is the default, as the shape rule reads it
  if (k.size() != 2) throw Unmodelled("pooling without a 2-D kernel_shape");
  MemoryProblem m;
  m.op = MemoryOp::pool;
  m.max_pool = max_pool;
  ConvProblem& w = m.window;
  w.N = x.dims[0];
  w.C = x.dims[1];
  w.K = x.dims[1];
  w.H = x.dims[2];
  w.W = x.dims[3];
  w.R = k[0];
  w.S = k[1];
  w.stride = {s[0], s.size() > 1 ? s[1] : s[0]};
  // Padding that reproduces ONNX's output size (ceil_mode included).
  auto pad_for = [](int64_t in, int64_t out, int64_t kk, int64_t st) {
    const int64_t total = (out - 1) * st + kk - in;
    return total > 0 ? (total + 1) / 2 : int64_t(0);
  };
  w.pad = {pad_for(w.H, y.dims[2], w.R, w.stride[0]), pad_for(w.W, y.dims[3], w.S, w.stride[1])};
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  return l;
}

}  // namespace

namespace {

// Kept elements inside the innermost reduced axis, in memory order (a 4-D
// tensor in NHWC lies as N,H,W,C). The reduced axes are read off the shapes:
// a kept axis keeps its size, a reduced one becomes 1 or goes (keepdims=0,
// matched from the innermost axis). Axes of size 1 do not move memory.
int64_t kept_inside(const std::vector<int64_t>& in, const std::vector<int64_t>& out, Layout layout) {
  std::vector<bool> reduced(in.size(), false);
  if (out.size() == in.size()) {
    for (size_t k = 0; k < in.size(); ++k) reduced[k] = in[k] != out[k];
  } else {
    size_t j = out.size();
    for (size_t k = in.size(); k-- > 0;) {
      if (j > 0 && out[j - 1] == in[k]) --j;
      else reduced[k] = true;
    }
  }
  std::vector<size_t> order(in.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  if (in.size() == 4 && layout == Layout::nhwc) order = {0, 2, 3, 1};
  int64_t kept = 1;
  for (size_t i = order.size(); i-- > 0;) {
    const size_t k = order[i];
    if (reduced[k] && in[k] > 1) return kept;
    if (!reduced[k]) kept *= in[k];
  }
  return 1;  // nothing of size > 1 reduced: a copy, row-wise
}

}  // namespace

std::optional<Layer> lower_reduce(const LowerContext& ctx) {
  const int64_t in = ctx.input(0).numel(), out = ctx.output(0).numel();
  MemoryProblem m;
  m.op = MemoryOp::reduce;
  m.outer = std::max<int64_t>(out, 1);
  m.inner = in / m.outer;
  m.kept_inside = kept_inside(ctx.input(0).dims, ctx.output(0).dims, ctx.layout);
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  return l;
}

namespace {

// InstanceNormalization, LRN and friends: normalise rows of the last axis.
std::optional<Layer> lower_rowwise(const LowerContext& ctx) { return lower_rowwise_from(ctx, -1); }

// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D
// at `axis` (default 1): each row is every value from it on. From 13 it is
// one axis (default -1), whose values lie the axes after it apart. PyTorch
// makes the input contiguous first, so the activation layout moves nothing.
std::optional<Layer> lower_softmax(const LowerContext& ctx) {
  const auto& x = ctx.input(0);
  const int64_t rank = int64_t(x.dims.size());
  const bool one_axis = ctx.model.opset(ctx.node.domain) >= 13;
  int64_t axis = attr_int(ctx.node, "axis", one_axis ? -1 : 1);
  auto l = lower_rowwise_from(ctx, axis);
  auto& m = std::get<MemoryProblem>(l->problem);
  if (axis < 0) axis += rank;
  if (one_axis && rank > 0) {
    if (axis >= rank) throw Unmodelled(fmt::format("softmax axis {} of a rank-{} tensor", axis, rank));
    m.inner = x.dims[size_t(axis)];
    m.kept_inside = 1;
    for (int64_t k = axis + 1; k < rank; ++k) m.kept_inside = saturating_mul(m.kept_inside, x.dims[size_t(k)]);
    m.outer = x.numel() / std::max<int64_t>(m.inner, 1);
  }
  m.warp_rows = ctx.node.op_type != "Hardmax" && m.kept_inside == 1 && m.inner <= kWarpRowsMaxValues;
  return l;
}

}  // namespace

std::optional<Layer> lower_norm(const LowerContext& ctx) { return lower_rowwise_from(ctx, attr_int(ctx.node, "axis", -1)); }

// LayerNorm's forms, not RMSNorm's: PyTorch's LayerNorm kernel's rows cost
// more over fp32 values (docs/model.md "Memory-bound kernels").
std::optional<Layer> lower_layer_norm(const LowerContext& ctx) {
  std::optional<Layer> l = lower_norm(ctx);
  if (l) std::get<MemoryProblem>(l->problem).layer_norm = true;
  return l;
}

// LayerNorm and its kin (RMSNorm, ONNX Runtime's Skip*/Simplified*): Y as X;
// extra outputs are the per-row statistics (leading dims kept), or the
// summed input (Skip*'s fourth output).
void shape_norm(ShapeContext& ctx) {
  ctx.same_as_input(0);
  const auto& x = ctx.dims(0);
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", -1), int64_t(x.size()));
  std::vector<int64_t> stats(x.begin(), x.begin() + axis);
  stats.resize(x.size(), 1);
  const bool skip = ctx.node.op_type.rfind("Skip", 0) == 0;
  for (size_t o = 1; o < ctx.num_outputs(); ++o) {
    if (!ctx.has_output(o)) continue;
    if (skip && o == 3) ctx.same_as_input(0, o);
    else ctx.set_output(o, stats, elem::kFloat);
  }
}

std::optional<Layer> lower_rowwise_from(const LowerContext& ctx, int64_t axis) {
  const auto& x = ctx.input(0);
  const int64_t rank = int64_t(x.dims.size());
  if (axis < 0) axis += rank;
  if (rank == 0) axis = 0;
  if (axis < 0 || axis > rank) throw Unmodelled(fmt::format("normalisation axis {} of a rank-{} tensor", axis, rank));
  MemoryProblem m;
  m.op = MemoryOp::row_norm;
  m.inner = 1;
  for (int64_t k = axis; k < rank; ++k) m.inner *= x.dims[size_t(k)];
  m.outer = x.numel() / std::max<int64_t>(m.inner, 1);
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  for (size_t i = 1; i < ctx.node.inputs.size(); ++i)
    if (ctx.has_input(i)) l.extra_bytes += ctx.bytes_of(ctx.input(i).numel());  // scale, bias
  return l;
}

namespace {

void shape_pool(ShapeContext& ctx) {
  const auto& x = ctx.dims(0);
  if (x.size() < 3) ctx.fail(fmt::format("input has rank {}; pooling needs N x C x spatial", x.size()));
  const auto kernel = attr_ints(ctx.node, "kernel_shape");
  if (kernel.empty()) ctx.fail("no kernel_shape");
  const auto spatial = window::output_dims(ctx, x, kernel, false, attr_int(ctx.node, "ceil_mode", 0) != 0);
  std::vector<int64_t> out = {x[0], x[1]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  ctx.set_output(0, out, ctx.elem_type(0));
  if (ctx.has_output(1)) ctx.set_output(1, out, elem::kInt64);  // MaxPool's indices
}

void shape_global_pool(ShapeContext& ctx) {
  auto out = ctx.dims(0);
  if (out.size() < 3) ctx.fail(fmt::format("input has rank {}; pooling needs N x C x spatial", out.size()));
  std::fill(out.begin() + 2, out.end(), 1);
  ctx.set_output(0, out, ctx.elem_type(0));
}

// Reduce*: axes from the attribute (before opset 18; ReduceSum before 13) or
// from input 1; none means all axes unless noop_with_empty_axes.
void shape_reduce(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  const bool keep = attr_int(ctx.node, "keepdims", 1) != 0;
  auto axes = ctx.ints_from(1, "axes");
  std::vector<bool> reduced(in.size(), false);
  if (!axes || axes->empty()) {
    if (attr_int(ctx.node, "noop_with_empty_axes", 0)) {
      ctx.same_as_input(0);
      if (const TensorValue* v = ctx.value(0)) ctx.set_value(0, *v);
      return;
    }
    std::fill(reduced.begin(), reduced.end(), true);
  } else {
    for (int64_t a : *axes) reduced[size_t(normalize_axis(ctx, a, rank))] = true;
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!reduced[k]) out.push_back(in[k]);
    else if (keep) out.push_back(1);
  ctx.set_output(0, out, ctx.elem_type(0));
  // Known integer values (shape arithmetic: ReduceProd of a Shape) reduce too.
  const TensorValue* v = ctx.value(0);
  const std::string& op = ctx.node.op_type;
  if (!v || v->real || !shape::known(in)) return;
  if (op != "ReduceProd" && op != "ReduceSum" && op != "ReduceMax" && op != "ReduceMin") return;
  TensorValue r = shape::make_value(out, elem::kInt64);
  const int64_t n_out = shape::product(out);
  r.ints.assign(size_t(n_out), op == "ReduceProd" ? 1 : op == "ReduceSum" ? 0 : op == "ReduceMax" ? INT64_MIN : INT64_MAX);
  const int64_t n_in = shape::product(in);
  for (int64_t i = 0; i < n_in; ++i) {
    int64_t rem = i, o = 0, stride = 1;
    for (size_t k = in.size(); k-- > 0;) {
      const int64_t c = rem % in[k];
      rem /= in[k];
      if (!reduced[k]) {
        o += c * stride;
        stride *= in[k];
      }
    }
    int64_t& acc = r.ints[size_t(o)];
    const int64_t x = v->ints[size_t(i)];
    // A product or sum past 64 bits leaves the value unknown (the shape stays
    // known): a runtime would wrap it, and tilewave will not guess a wrapped shape.
    if (op == "ReduceProd" ? __builtin_mul_overflow(acc, x, &acc)
        : op == "ReduceSum" ? __builtin_add_overflow(acc, x, &acc)
                            : ((acc = op == "ReduceMax" ? std::max(acc, x) : std::min(acc, x)), false))
      return;
  }
  ctx.set_value(0, std::move(r));
}

void shape_arg(ShapeContext& ctx) {
  auto out = ctx.dims(0);
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", 0), int64_t(out.size()));
  if (attr_int(ctx.node, "keepdims", 1)) out[size_t(axis)] = 1;
  else out.erase(out.begin() + axis);
  ctx.set_output(0, out, elem::kInt64);
}

void shape_same(ShapeContext& ctx) { ctx.same_as_input(0); }

}  // namespace

void register_pool_reduce_ops(OpRegistry& r) {
  r.add({"", "MaxPool", FusionRole::reduction, shape_pool, [](const LowerContext& c) { return lower_pool(c, true); },
         TILEWAVE_HERE})
      .inputs(1, 1)
      .rank(0, 3, 8)
      .traits(op_trait::carries_channels);
  r.add({"", "AveragePool", FusionRole::reduction, shape_pool,
         [](const LowerContext& c) { return lower_pool(c, false); }, TILEWAVE_HERE})
      .inputs(1, 1)
      .rank(0, 3, 8)
      .traits(op_trait::carries_channels);
  r.add({"", "LpPool", FusionRole::opaque, shape_pool, [](const LowerContext& c) { return lower_pool(c, false); },
         TILEWAVE_HERE})
      .inputs(1, 1)
      .rank(0, 3, 8);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    r.add({"", op, FusionRole::reduction, shape_global_pool, lower_reduce, TILEWAVE_HERE})
        .inputs(1, 1)
        .rank(0, 3, 8)
        .traits(op_trait::carries_channels);
  r.add({"", "GlobalLpPool", FusionRole::reduction, shape_global_pool, lower_reduce, TILEWAVE_HERE}).inputs(1, 1).rank(0, 3, 8);
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSumExp", "ReduceSumSquare", "ReduceLogSum"})
    r.add({"", op, FusionRole::reduction, shape_reduce, lower_reduce, TILEWAVE_HERE}).inputs(1, 2);
  for (const char* op : {"ArgMax", "ArgMin"})
    r.add({"", op, FusionRole::reduction, shape_arg, lower_reduce, TILEWAVE_HERE}).inputs(1, 1);
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"})
    r.add({"", op, FusionRole::opaque, shape_same, lower_softmax, TILEWAVE_HERE}).inputs(1, 3);
  for (const char* op : {"InstanceNormalization", "LRN", "MeanVarianceNormalization", "LpNormalization"})
    r.add({"", op, FusionRole::opaque, shape_same, lower_rowwise, TILEWAVE_HERE}).inputs(1, 3);
  r.add({"", "LayerNormalization", FusionRole::opaque, shape_norm, lower_layer_norm, TILEWAVE_HERE}).inputs(1, 3);
}

}  // namespace tilewave
