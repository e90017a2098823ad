// Gemm and MatMul: (batched) matrix products.
#include <fmt/format.h>

#include "shape_helpers.h"
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

void shape_gemm(ShapeContext& ctx) {
  const auto& a = ctx.dims(0);
  const auto& b = ctx.dims(1);
  if (a.size() != 2 || b.size() != 2) ctx.fail(fmt::format("operands have ranks {} and {}; Gemm takes 2-D", a.size(), b.size()));
  const bool ta = attr_int(ctx.node, "transA", 0), tb = attr_int(ctx.node, "transB", 0);
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka >= 0 && kb >= 0 && ka != kb) ctx.fail(fmt::format("inner dimensions differ ({} and {})", ka, kb));
  ctx.set_output(0, {m, n}, ctx.elem_type(0));
}

// numpy matmul: 1-D operands are promoted and their unit dim dropped again;
// leading dims broadcast. out_type 0: the type of A.
void matmul_shape(ShapeContext& ctx, size_t a_in, size_t b_in, int32_t out_type) {
  std::vector<int64_t> a = ctx.dims(a_in), b = ctx.dims(b_in);
  if (a.empty() || b.empty()) ctx.fail("MatMul of a scalar");
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  const int64_t ka = a.back(), kb = b[b.size() - 2];
  if (ka >= 0 && kb >= 0 && ka != kb) ctx.fail(fmt::format("inner dimensions differ ({} and {})", ka, kb));
  std::vector<int64_t> out = broadcast_shapes(ctx, {std::vector<int64_t>(a.begin(), a.end() - 2),
                                                    std::vector<int64_t>(b.begin(), b.end() - 2)});
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  ctx.set_output(0, out, out_type ? out_type : ctx.elem_type(a_in));
}

}  // namespace

void register_gemm_ops(OpRegistry& r) {
  r.add({"", "Gemm", FusionRole::gemm, shape_gemm, lower_gemm, TILEWAVE_HERE});
  r.add({"", "MatMul", FusionRole::gemm, [](ShapeContext& c) { matmul_shape(c, 0, 1, 0); }, lower_matmul,
         TILEWAVE_HERE});
}

}  // namespace tilewave
