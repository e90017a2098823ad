// Ops that change only metadata: runtimes alias the buffer or fold them at
// load time, so they launch no kernel. Their shape functions carry known
// values through, which is how exporters' shape arithmetic resolves.
#include <cmath>

#include <fmt/format.h>
#include "tilewave_onnx.pb.h"

#include "shape_helpers.h"
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

// Output 0 holds input 0's data under new dims.
void set_view(ShapeContext& ctx, const std::vector<int64_t>& dims) {
  ctx.set_output(0, dims, ctx.elem_type(0));
  if (const TensorValue* v = ctx.value(0)) ctx.set_value(0, shape::reshaped(*v, dims));
}

void shape_reshape(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  std::vector<int64_t> target = ctx.ints(1, "target shape");
  const bool allow_zero = attr_int(ctx.node, "allowzero", 0) != 0;
  int64_t infer_at = -1, known_product = 1;
  for (size_t k = 0; k < target.size(); ++k) {
    if (target[k] == 0 && !allow_zero) {
      if (k >= in.size()) ctx.fail(fmt::format("target dim {} copies an input dim that does not exist", k));
      target[k] = in[k];
    }
    if (target[k] == -1) {
      if (infer_at >= 0) ctx.fail("target shape has more than one -1");
      infer_at = int64_t(k);
    } else if (target[k] < -1) {
      ctx.fail(fmt::format("target shape has dimension {}", target[k]));
    } else if (target[k] >= 0 && known_product >= 0) {
      known_product = target[k] < 0 ? -1 : saturating_mul(known_product, target[k]);
    }
  }
  const int64_t total = shape::product(in);
  if (infer_at >= 0) {
    if (total < 0) throw ShapeUnknown("reshape with -1 of a tensor whose size is unknown");
    if (known_product == 0 || total % known_product)
      ctx.fail(fmt::format("cannot reshape {} elements into the target shape", total));
    target[size_t(infer_at)] = total / known_product;
  } else if (total >= 0 && shape::known(target) && shape::product(target) != total) {
    ctx.fail(fmt::format("cannot reshape {} elements into {} elements", total, shape::product(target)));
  }
  set_view(ctx, target);
}

void shape_flatten(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  int64_t axis = attr_int(ctx.node, "axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  set_view(ctx, {shape::product(in, 0, size_t(axis)), shape::product(in, size_t(axis))});
}

void shape_squeeze(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  auto axes = ctx.ints_from(1, "axes");
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      const int64_t k = normalize_axis(ctx, a, rank);
      if (in[size_t(k)] != 1 && in[size_t(k)] != -1) ctx.fail(fmt::format("cannot squeeze axis {} of size {}", a, in[size_t(k)]));
      drop[size_t(k)] = true;
    }
  } else {
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k] == -1) throw ShapeUnknown("squeeze without axes of a tensor with unknown dims");
      drop[k] = in[k] == 1;
    }
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!drop[k]) out.push_back(in[k]);
  set_view(ctx, out);
}

void shape_unsqueeze(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  auto axes = ctx.ints_from(1, "axes");
  if (!axes) ctx.fail("Unsqueeze needs axes");
  const int64_t rank = int64_t(in.size() + axes->size());
  std::vector<bool> inserted(size_t(rank), false);
  for (int64_t a : *axes) {
    const int64_t k = normalize_axis(ctx, a, rank);
    if (inserted[size_t(k)]) ctx.fail(fmt::format("axis {} given twice", a));
    inserted[size_t(k)] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t k = 0; k < rank; ++k) out.push_back(inserted[size_t(k)] ? 1 : in[next++]);
  set_view(ctx, out);
}

void shape_identity(ShapeContext& ctx) { set_view(ctx, ctx.dims(0)); }

void shape_dropout(ShapeContext& ctx) {
  set_view(ctx, ctx.dims(0));
  if (ctx.has_output(1)) ctx.set_output(1, ctx.dims(0), elem::kBool);
}

void shape_shape(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  int64_t start = attr_int(ctx.node, "start", 0), end = attr_int(ctx.node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  ctx.set_output(0, {end - start}, elem::kInt64);
  std::vector<int64_t> part(in.begin() + start, in.begin() + end);
  if (!shape::known(part)) return;
  TensorValue v = shape::make_value({end - start}, elem::kInt64);
  v.ints = part;
  ctx.set_value(0, std::move(v));
}

void shape_size(ShapeContext& ctx) {
  ctx.set_output(0, {}, elem::kInt64);
  const int64_t n = shape::product(ctx.dims(0));
  if (n < 0) return;
  TensorValue v = shape::make_value({}, elem::kInt64);
  v.ints = {n};
  ctx.set_value(0, std::move(v));
}

void shape_constant(ShapeContext& ctx) {
  for (const auto& a : ctx.node.proto->attribute()) {
    const std::string& name = a.name();
    if (name == "value") {
      const auto& t = a.t();
      ctx.set_output(0, {t.dims().begin(), t.dims().end()}, t.data_type());
      if (auto v = tensor_value(t)) ctx.set_value(0, std::move(*v));
      return;
    }
    TensorValue v;
    if (name == "value_int" || name == "value_ints") {
      v.ints = name == "value_int" ? std::vector<int64_t>{a.i()} : std::vector<int64_t>(a.ints().begin(), a.ints().end());
      if (name == "value_ints") v.dims = {int64_t(v.ints.size())};
      ctx.set_output(0, v.dims, elem::kInt64);
    } else if (name == "value_float" || name == "value_floats") {
      v.real = true;
      if (name == "value_float") v.reals = {a.f()};
      else v.reals.assign(a.floats().begin(), a.floats().end());
      if (name == "value_floats") v.dims = {int64_t(v.reals.size())};
      ctx.set_output(0, v.dims, elem::kFloat);
    } else {
      continue;
    }
    ctx.set_value(0, std::move(v));
    return;
  }
  throw ShapeUnknown("Constant without a tensor, int or float value (sparse and string constants are not read)");
}

void shape_constant_of_shape(ShapeContext& ctx) {
  std::vector<int64_t> dims = ctx.ints(0, "shape");
  for (int64_t d : dims)
    if (d < 0) ctx.fail(fmt::format("shape has dimension {}", d));
  int32_t type = elem::kFloat;
  std::optional<TensorValue> fill;
  if (const auto* a = find_attr(ctx.node, "value")) {
    type = a->t().data_type();
    fill = tensor_value(a->t());
  }
  ctx.set_output(0, dims, type);
  const int64_t n = shape::product(dims);
  if (n > ctx.value_room()) return;
  TensorValue v = shape::make_value(dims, type);
  for (int64_t i = 0; i < n; ++i)
    shape::push(v, fill && fill->size() ? fill->real_at(0) : 0.0, fill && fill->size() ? fill->int_at(0) : 0);
  ctx.set_value(0, std::move(v));
}

void shape_range(ShapeContext& ctx) {
  const TensorValue *s = ctx.value(0), *l = ctx.value(1), *d = ctx.value(2);
  const int32_t type = ctx.elem_type(0);
  if (!s || !l || !d || !s->size() || !l->size() || !d->size()) {
    ctx.set_output(0, {-1}, type);
    return;
  }
  const double start = s->real_at(0), limit = l->real_at(0), delta = d->real_at(0);
  if (delta == 0) ctx.fail("Range with delta 0");
  const int64_t n = std::max<int64_t>(saturating_int64(std::ceil((limit - start) / delta)), 0);
  ctx.set_output(0, {n}, type);
  if (n > ctx.value_room()) return;
  TensorValue v = shape::make_value({n}, type);
  for (int64_t i = 0; i < n; ++i) {
    int64_t step, integer;
    if (__builtin_mul_overflow(i, d->int_at(0), &step) || __builtin_add_overflow(s->int_at(0), step, &integer))
      return;  // the value stays unknown rather than wrapped
    shape::push(v, start + double(i) * delta, integer);
  }
  ctx.set_value(0, std::move(v));
}

void shape_eye_like(ShapeContext& ctx) {
  const int32_t dtype = int32_t(attr_int(ctx.node, "dtype", ctx.elem_type(0)));
  ctx.set_output(0, ctx.dims(0), dtype);
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  auto no_work = [](const LowerContext&) -> std::optional<Layer> { return std::nullopt; };
  struct Entry {
    const char* op;
    ShapeFn shape;
    int min_inputs, max_inputs;
  };
  const Entry ops[] = {{"Reshape", shape_reshape, 1, 2},     {"Flatten", shape_flatten, 1, 1},
                       {"Squeeze", shape_squeeze, 1, 2},     {"Unsqueeze", shape_unsqueeze, 1, 2},
                       {"Identity", shape_identity, 1, 1},   {"Shape", shape_shape, 1, 1},
                       {"Size", shape_size, 1, 1},           {"Constant", shape_constant, 0, 0},
                       {"ConstantOfShape", shape_constant_of_shape, 1, 1}, {"Dropout", shape_dropout, 1, 3},
                       {"Range", shape_range, 3, 3},         {"EyeLike", shape_eye_like, 1, 1}};
  // Identity keeps its input's channels: advise's channel padding passes through it.
  for (const auto& e : ops)
    r.add({"", e.op, FusionRole::none, e.shape, no_work, TILEWAVE_HERE})
        .inputs(e.min_inputs, e.max_inputs)
        .traits(e.op == std::string("Identity") ? op_trait::carries_channels : 0u);
}

}  // namespace tilewave
