// Pooling, reductions and row normalisations: memory-bound kernels whose
// output is smaller than (reduce) or equal to (softmax) their input.
#include <fmt/format.h>

#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

std::optional<Layer> lower_pool(const LowerContext& ctx, bool max_pool) {
  const auto& x = ctx.input(0);
  const auto& y = ctx.output(0);
  if (x.dims.size() != 4) throw Unmodelled("only 2-D pooling is modelled");
  auto k = attr_ints(ctx.node, "kernel_shape");
  auto s = attr_ints(ctx.node, "strides", {1, 1});
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

std::optional<Layer> lower_reduce(const LowerContext& ctx) {
  const int64_t in = ctx.input(0).numel(), out = ctx.output(0).numel();
  MemoryProblem m;
  m.op = MemoryOp::reduce;
  m.outer = std::max<int64_t>(out, 1);
  m.inner = in / m.outer;
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  return l;
}

// Softmax, LayerNormalization …: normalise rows of the last axis.
std::optional<Layer> lower_rowwise(const LowerContext& ctx) {
  const auto& x = ctx.input(0);
  MemoryProblem m;
  m.op = MemoryOp::softmax;
  m.inner = x.dims.empty() ? 1 : x.dims.back();
  m.outer = x.numel() / std::max<int64_t>(m.inner, 1);
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  for (size_t i = 1; i < ctx.node.inputs.size(); ++i)
    if (ctx.has_input(i)) l.extra_bytes += ctx.bytes_of(ctx.input(i).numel());  // scale, bias
  return l;
}

}  // namespace

void register_pool_reduce_ops(OpRegistry& r) {
  r.add({"", "MaxPool", FusionRole::reduction, [](const LowerContext& c) { return lower_pool(c, true); }, TILEWAVE_HERE});
  r.add({"", "AveragePool", FusionRole::reduction, [](const LowerContext& c) { return lower_pool(c, false); },
         TILEWAVE_HERE});
  r.add({"", "LpPool", FusionRole::opaque, [](const LowerContext& c) { return lower_pool(c, false); }, TILEWAVE_HERE});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ReduceMean", "ReduceSum",
                         "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp",
                         "ReduceSumSquare", "ArgMax", "ArgMin"})
    r.add({"", op, FusionRole::reduction, lower_reduce, TILEWAVE_HERE});
  for (const char* op : {"Softmax", "LogSoftmax", "LayerNormalization", "InstanceNormalization", "LRN",
                         "MeanVarianceNormalization", "Hardmax"})
    r.add({"", op, FusionRole::opaque, lower_rowwise, TILEWAVE_HERE});
}

}  // namespace tilewave
