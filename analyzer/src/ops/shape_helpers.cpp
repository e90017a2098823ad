#include "shape_helpers.h"

#include <fmt/format.h>

#include <algorithm>

namespace tilewave::shape {

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t k = from; k < std::min(to, dims.size()); ++k) {
    if (dims[k] < 0) return -1;
    n = saturating_mul(n, dims[k]);
  }
  return n;
}

bool known(const std::vector<int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
}

size_t broadcast_offset(size_t i, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_dims) {
  size_t offset = 0, stride = 1;
  const size_t lead = out_dims.size() - in_dims.size();
  for (size_t k = out_dims.size(); k-- > 0;) {
    const size_t coord = i % size_t(out_dims[k]);
    i /= size_t(out_dims[k]);
    if (k < lead) continue;
    const int64_t d = in_dims[k - lead];
    if (d != 1) offset += coord * stride;
    stride *= size_t(d);
  }
  return offset;
}

TensorValue make_value(const std::vector<int64_t>& dims, int32_t elem_type) {
  TensorValue v;
  v.dims = dims;
  v.real = elem::is_real(elem_type);
  return v;
}

void push(TensorValue& v, double real, int64_t integer) {
  if (v.real) v.reals.push_back(real);
  else v.ints.push_back(integer);
}

void remap_value(ShapeContext& ctx, const std::vector<int64_t>& out_dims, const std::function<size_t(size_t)>& source) {
  const TensorValue* v = ctx.value(0);
  const int64_t n = product(out_dims);
  if (!v || n < 0 || n > ctx.value_room() || !known(ctx.dims(0))) return;
  TensorValue r = make_value(out_dims, ctx.elem_type(0));
  for (int64_t i = 0; i < n; ++i) {
    const size_t at = source(size_t(i));
    if (at >= v->size()) return;
    push(r, v->real_at(at), v->int_at(at));
  }
  ctx.set_value(0, std::move(r));
}

std::vector<int64_t> coords(size_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> c(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    c[k] = int64_t(i % size_t(dims[k]));
    i /= size_t(dims[k]);
  }
  return c;
}

TensorValue reshaped(const TensorValue& v, const std::vector<int64_t>& dims) {
  TensorValue out = v;
  out.dims = dims;
  return out;
}

void require_nonempty(const ShapeContext& ctx, const std::vector<int64_t>& dims, const char* operand) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == 0) ctx.fail(fmt::format("{} has a zero-sized dimension (dim {})", operand, i));
}

}  // namespace tilewave::shape
