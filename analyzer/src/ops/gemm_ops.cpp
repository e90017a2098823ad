// Gemm and MatMul: (batched) matrix products.
#include <fmt/format.h>

#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

std::optional<Layer> lower_gemm(const LowerContext& ctx) {
  const auto& a = ctx.input(0);
  const auto& y = ctx.output(0);
  if (a.dims.size() != 2 || y.dims.size() != 2) throw Unmodelled("Gemm operands must be 2-D");
  GemmProblem g;
  g.M = y.dims[0];
  g.N = y.dims[1];
  g.K = attr_int(ctx.node, "transA", 0) ? a.dims[0] : a.dims[1];
  Layer l;
  l.problem = g;
  l.dtype = ctx.dtype;
  if (ctx.has_input(2)) l.extra_bytes = ctx.bytes_of(ctx.input(2).numel());  // C / bias
  return l;
}

std::optional<Layer> lower_matmul(const LowerContext& ctx) {
  const auto& a = ctx.input(0);
  const auto& b = ctx.input(1);
  const auto& y = ctx.output(0);
  if (a.dims.empty() || b.dims.empty()) throw Unmodelled("MatMul of scalars");
  GemmProblem g;
  g.K = a.dims.back();
  g.N = b.dims.size() == 1 ? 1 : b.dims.back();
  const int64_t out_elems = y.numel();
  const int64_t rows = g.N > 0 ? out_elems / g.N : 0;  // all output rows over every batch
  if (b.dims.size() <= 2) {
    // A shared 2-D right operand (a weight): every batch of A is one tall GEMM.
    g.M = rows;
    g.batch = 1;
  } else {
    g.M = a.dims.size() >= 2 ? a.dims[a.dims.size() - 2] : 1;
    g.batch = g.M > 0 ? rows / g.M : 1;
  }
  Layer l;
  l.problem = g;
  l.dtype = ctx.dtype;
  return l;
}

}  // namespace

void register_gemm_ops(OpRegistry& r) {
  r.add({"", "Gemm", FusionRole::gemm, lower_gemm, TILEWAVE_HERE});
  r.add({"", "MatMul", FusionRole::gemm, lower_matmul, TILEWAVE_HERE});
}

}  // namespace tilewave
