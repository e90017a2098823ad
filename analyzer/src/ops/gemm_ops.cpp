// Gemm and MatMul: (batched) matrix products.
#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

// Gemm and com.microsoft.QGemm (A, B, C at other positions; int8).
struct GemmOperands {
  size_t a = 0, b = 1, c = 2;
  bool int8 = false;
};

std::optional<Layer> lower_gemm(const LowerContext& ctx, const GemmOperands& at) {
  const auto& a = ctx.input(at.a);
  const auto& y = ctx.output(0);
  if (a.dims.size() != 2 || y.dims.size() != 2) throw Unmodelled("Gemm operands must be 2-D");
  GemmProblem g;
  g.M = y.dims[0];
  g.N = y.dims[1];
  g.K = attr_int(ctx.node, "transA", 0) ? a.dims[0] : a.dims[1];
  Layer l;
  l.problem = g;
  l.dtype = at.int8 || fed_by_dequantize(ctx, at.a) ? DType::int8 : ctx.dtype;
  if (ctx.has_input(at.c)) l.extra_bytes = ctx.bytes_of(ctx.input(at.c).numel());  // C / bias
  return l;
}

std::optional<Layer> lower_matmul(const LowerContext& ctx) {
  return lower_matmul_dims(ctx, ctx.input(0).dims, ctx.input(1).dims, ctx.output(0).dims,
                           fed_by_dequantize(ctx, 0));
}

void shape_gemm(ShapeContext& ctx, const GemmOperands& at) {
  const auto& a = ctx.dims(at.a);
  const auto& b = ctx.dims(at.b);
  if (a.size() != 2 || b.size() != 2) ctx.fail(fmt::format("operands have ranks {} and {}; Gemm takes 2-D", a.size(), b.size()));
  shape::require_nonempty(ctx, a, "A");
  shape::require_nonempty(ctx, b, "B");
  const bool ta = attr_int(ctx.node, "transA", 0), tb = attr_int(ctx.node, "transB", 0);
  const int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  if (ka >= 0 && kb >= 0 && ka != kb) ctx.fail(fmt::format("inner dimensions differ ({} and {})", ka, kb));
  ctx.set_output(0, {m, n}, ctx.elem_type(at.a));
}

// com.microsoft.FusedMatMul: MatMul with the last two dims of A or B transposed.
std::vector<int64_t> transposed_last(std::vector<int64_t> d, bool t) {
  if (t && d.size() >= 2) std::swap(d[d.size() - 1], d[d.size() - 2]);
  return d;
}

}  // namespace

// numpy matmul: 1-D operands are promoted and their unit dim dropped again;
// leading dims broadcast.
std::vector<int64_t> matmul_dims(const ShapeContext& ctx, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.empty() || b.empty()) ctx.fail("MatMul of a scalar");
  shape::require_nonempty(ctx, a, "A");
  shape::require_nonempty(ctx, b, "B");
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  const int64_t ka = a.back(), kb = b[b.size() - 2];
  if (ka >= 0 && kb >= 0 && ka != kb) ctx.fail(fmt::format("inner dimensions differ ({} and {})", ka, kb));
  std::vector<int64_t> out = broadcast_shapes(ctx, {std::vector<int64_t>(a.begin(), a.end() - 2),
                                                    std::vector<int64_t>(b.begin(), b.end() - 2)});
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return out;
}

std::optional<Layer> lower_matmul_dims(const LowerContext& ctx, const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b, const std::vector<int64_t>& y, bool int8) {
  if (a.empty() || b.empty()) throw Unmodelled("MatMul of scalars");
  GemmProblem g;
  g.K = a.back();
  g.N = b.size() == 1 ? 1 : b.back();
  int64_t out_elems = 1;
  for (int64_t d : y) out_elems *= d;
  const int64_t rows = g.N > 0 ? out_elems / g.N : 0;  // all output rows over every batch
  if (b.size() <= 2) {
    // A shared 2-D right operand (a weight): every batch of A is one tall GEMM.
    g.M = rows;
    g.batch = 1;
  } else {
    g.M = a.size() >= 2 ? a[a.size() - 2] : 1;
    g.batch = g.M > 0 ? rows / g.M : 1;
  }
  Layer l;
  l.problem = g;
  l.dtype = int8 ? DType::int8 : ctx.dtype;
  return l;
}

void register_gemm_ops(OpRegistry& r) {
  auto gemm = [&](const char* domain, const char* op, GemmOperands at, int min_inputs, int max_inputs) {
    r.add({domain, op, FusionRole::gemm, [at](ShapeContext& c) { shape_gemm(c, at); },
           [at](const LowerContext& c) { return lower_gemm(c, at); }, TILEWAVE_HERE})
        .inputs(min_inputs, max_inputs)
        .rank(at.a, 2)
        .rank(at.b, 2);
  };
  gemm("", "Gemm", {}, 2, 3);
  gemm("com.microsoft", "QGemm", {.a = 0, .b = 3, .c = 6, .int8 = true}, 6, 9);
  r.add({"com.microsoft", "FusedMatMul", FusionRole::gemm,
         [](ShapeContext& c) {
           c.set_output(0,
                        matmul_dims(c, transposed_last(c.dims(0), attr_int(c.node, "transA", 0)),
                                    transposed_last(c.dims(1), attr_int(c.node, "transB", 0))),
                        c.elem_type(0));
         },
         [](const LowerContext& c) {
           return lower_matmul_dims(c, transposed_last(c.input(0).dims, attr_int(c.node, "transA", 0)),
                                    transposed_last(c.input(1).dims, attr_int(c.node, "transB", 0)),
                                    c.output(0).dims, false);
         },
         TILEWAVE_HERE})
      .inputs(2, 2);
  // Quantized matrix products: int8 GEMMs whatever --dtype says.
  r.add({"", "QLinearMatMul", FusionRole::gemm,
         [](ShapeContext& c) { c.set_output(0, matmul_dims(c, c.dims(0), c.dims(3)), c.elem_type(7)); },
         [](const LowerContext& c) {
           return lower_matmul_dims(c, c.input(0).dims, c.input(3).dims, c.output(0).dims, true);
         },
         TILEWAVE_HERE})
      .inputs(8, 8);
  r.add({"", "MatMulInteger", FusionRole::gemm,
         [](ShapeContext& c) { c.set_output(0, matmul_dims(c, c.dims(0), c.dims(1)), elem::kInt32); },
         [](const LowerContext& c) {
           return lower_matmul_dims(c, c.input(0).dims, c.input(1).dims, c.output(0).dims, true);
         },
         TILEWAVE_HERE})
      .inputs(2, 4);
  r.add({"", "MatMul", FusionRole::gemm,
         [](ShapeContext& c) { c.set_output(0, matmul_dims(c, c.dims(0), c.dims(1)), c.elem_type(0)); }, lower_matmul,
         TILEWAVE_HERE})
      .inputs(2, 2);
}

}  // namespace tilewave
