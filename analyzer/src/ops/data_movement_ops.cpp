// Ops that only move data (Concat, Transpose, Slice, Pad, Resize, Gather …):
// copy kernels reading their dynamic inputs and writing their outputs.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

int64_t dynamic_input_elems(const LowerContext& ctx) {
  int64_t n = 0;
  for (size_t i = 0; i < ctx.node.inputs.size(); ++i)
    if (ctx.has_input(i) && !ctx.input_is_static(i)) n += ctx.input(i).numel();
  return n;
}

int64_t output_elems(const LowerContext& ctx) {
  int64_t n = 0;
  for (size_t i = 0; i < ctx.node.outputs.size(); ++i)
    if (!ctx.node.outputs[i].empty()) n += ctx.output(i).numel();
  return n;
}

}  // namespace

std::optional<Layer> make_copy(const LowerContext& ctx, int64_t elems_in, int64_t elems_out) {
  MemoryProblem m;
  m.op = MemoryOp::copy;
  m.elems_in = elems_in;
  m.elems_out = elems_out;
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  return l;
}

bool expand_is_view(const LowerContext& ctx, const Node& expand) {
  if (!ctx.registry || expand.op_type != "Expand" || !expand.domain.empty() || expand.outputs.size() != 1 ||
      expand.inputs.empty() || ctx.model.is_output(expand.outputs[0]) || ctx.model.numel(expand.inputs[0]) < 0 ||
      ctx.model.static_tensors.count(expand.inputs[0]))  // a constant expanded is a tensor of its own
    return false;
  const auto& readers = ctx.model.readers_of(expand.outputs[0]);
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](const TensorRead& r) {
    const Node& n = ctx.model.nodes[size_t(r.node)];
    const OpRule* rule = ctx.registry->find(n.domain, n.op_type);
    return rule && rule->role == FusionRole::elementwise;
  });
}

namespace {

// Reads what it writes, wherever it comes from.
std::optional<Layer> lower_move(const LowerContext& ctx) {
  const int64_t out = output_elems(ctx);
  return make_copy(ctx, std::min(dynamic_input_elems(ctx), out), out);
}

// Reads all of its input (Concat reads every part; Expand/Tile/Resize/Pad
// read the smaller input once and write the larger output).
std::optional<Layer> lower_read_all(const LowerContext& ctx) {
  return make_copy(ctx, dynamic_input_elems(ctx), output_elems(ctx));
}

// PyTorch's expand (expand_as) is a view with stride 0 where it broadcasts:
// an elementwise op reads it in place, anything else copies it.
std::optional<Layer> lower_expand(const LowerContext& ctx) {
  if (expand_is_view(ctx, ctx.node)) return std::nullopt;
  return lower_read_all(ctx);
}

// Whether PyTorch holds `tensor` channels-last under a channels_last
// configuration: the network's input (timm's harness converts it), a
// convolution's, pooling's or BatchNorm's output, or an elementwise op's over
// such a tensor (its output takes its input's strides). A matmul's or a
// reshape's output is contiguous in its own dimension order.
bool channels_last_in_memory(const Model& m, std::string tensor) {
  static const std::set<std::string> kept = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool",
                                             "GlobalMaxPool", "BatchNormalization", "Resize", "Upsample", "Pad"};
  static const std::set<std::string> follows = {"Relu", "Sigmoid", "Tanh", "Add", "Sub", "Mul", "Div", "Erf",
                                                "Clip", "HardSigmoid", "HardSwish", "LeakyRelu", "Softplus", "Exp",
                                                "Neg", "Abs", "Sqrt", "Pow", "Cast", "Identity", "Dropout"};
  for (int depth = 0; depth < 256; ++depth) {  // a bounded walk: hostile graphs chain without end
    const Node* p = m.producer_of(tensor);
    if (!p) return std::find(m.inputs.begin(), m.inputs.end(), tensor) != m.inputs.end();
    if (kept.count(p->op_type)) return true;
    if (!follows.count(p->op_type)) return false;
    const auto x = std::find_if(p->inputs.begin(), p->inputs.end(),
                                [&](const std::string& t) { return !t.empty() && !m.static_tensors.count(t); });
    if (x == p->inputs.end()) return false;
    tensor = *x;
  }
  return false;
}

// Whether `tensor` is a token sequence [B, N, C] transposed to [B, C, N] and
// reshaped to a map [B, C, H, W] (a hybrid ViT's tokens back to an image):
// PyTorch's reshape is a view there, whose strides are channels-last.
bool token_map_view(const Model& m, const std::string& tensor) {
  const Node* reshape = m.producer_of(tensor);
  if (!reshape || reshape->op_type != "Reshape" || reshape->inputs.empty()) return false;
  const TensorInfo* map = m.tensor(tensor);
  const Node* transpose = m.producer_of(reshape->inputs[0]);
  const TensorInfo* tokens = transpose && !transpose->inputs.empty() ? m.tensor(transpose->inputs[0]) : nullptr;
  return map && map->dims.size() == 4 && tokens && tokens->dims.size() == 3 && transpose->op_type == "Transpose" &&
         attr_ints(*transpose, "perm") == std::vector<int64_t>{0, 2, 1};
}

// Resize and Upsample read their input once and write the output; every
// resample is on autocast's fp32 list. Where the runtime runs PyTorch's own
// kernels (eager), a linear resample of an NCHW map and a cubic one of any
// gives each thread one output position walking every (image, channel)
// plane; nearest, and linear over channels-last memory, spread over the
// output values at an index cost per value (docs/model.md "Memory-bound
// kernels": calibrate/data/h100/resize_kernels).
std::optional<Layer> lower_resize(const LowerContext& ctx) {
  std::optional<Layer> l = lower_read_all(ctx);
  const std::string mode = attr_string(ctx.node, "mode", "nearest");
  const bool linear = mode == "linear" || mode == "bilinear";
  if (!linear && mode != "cubic" && mode != "nearest") return l;
  auto& m = std::get<MemoryProblem>(l->problem);
  m.autocast_fp32 = true;
  const auto& in = ctx.input(0).dims;
  const auto& out = ctx.output(0).dims;
  const bool spatial_only = in.size() == 4 && out.size() == 4 && in[0] == out[0] && in[1] == out[1];
  if (!ctx.aten_resample_kernels || !spatial_only || out[0] <= 0 || out[1] <= 0) return l;
  // A map in channels-last memory runs PyTorch's NHWC kernel, over every
  // output value: a tensor the configuration keeps channels-last, or a view of
  // tokens (CoaT's parallel blocks), in either layout.
  const bool nchw_memory = !token_map_view(ctx.model, ctx.node.inputs[0]) &&
                           (ctx.layout == Layout::nchw || !channels_last_in_memory(ctx.model, ctx.node.inputs[0]));
  if (mode == "cubic" || (linear && nchw_memory))  // PyTorch's cubic kernel has no channels-last variant
    m.resample_planes = out[0] * out[1];
  else
    m.resample_kernel = !linear ? (nchw_memory ? ResampleKernel::nearest_nchw : ResampleKernel::nearest_nhwc)
                                : ResampleKernel::linear_nhwc;
  return l;
}

// tilewave keeps 4-D activations channels-last (NHWC, as cuDNN's tensor-core
// convs and PyTorch's channels_last run them), so the permutes between the
// NCHW and NHWC views of one tensor are relabelings, not copies
// (docs/model.md "Framework ops").
std::optional<Layer> lower_transpose(const LowerContext& ctx) {
  const std::vector<int64_t> perm = attr_ints(ctx.node, "perm");
  const bool layout_view = ctx.input(0).dims.size() == 4 &&
                           (perm == std::vector<int64_t>{0, 2, 3, 1} || perm == std::vector<int64_t>{0, 3, 1, 2});
  // A channels-last tensor permuted to [N, H, W, C] is contiguous already.
  const bool contiguous = perm == std::vector<int64_t>{0, 2, 3, 1} && ctx.layout == Layout::nhwc &&
                          channels_last_in_memory(ctx.model, ctx.node.inputs[0]);
  if (layout_view && ctx.copies_permuted_views && !contiguous)
    for (const auto& r : ctx.model.readers_of(ctx.node.outputs[0])) {
      // docs/model.md "Framework ops": a matmul or softmax copies the permuted
      // view contiguous in PyTorch's unvectorised copy kernel, which the
      // strided elementwise terms price.
      const std::string& op = ctx.model.nodes[size_t(r.node)].op_type;
      if (op == "MatMul" || op == "Softmax") {
        Layer copy = elementwise_layer(ctx.input(0).numel(), ctx.dtype);
        std::get<MemoryProblem>(copy.problem).strided = true;
        return copy;
      }
    }
  if (layout_view) return std::nullopt;
  return lower_read_all(ctx);
}


// ---- shape functions ----

void shape_transpose(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  std::vector<int64_t> perm = attr_ints(ctx.node, "perm");
  if (perm.empty())
    for (size_t k = in.size(); k-- > 0;) perm.push_back(int64_t(k));
  if (perm.size() != in.size()) ctx.fail(fmt::format("perm has {} entries for rank {}", perm.size(), in.size()));
  std::vector<int64_t> out;
  std::vector<bool> used(in.size(), false);
  for (int64_t p : perm) {
    const int64_t k = normalize_axis(ctx, p, int64_t(in.size()));
    if (used[size_t(k)]) ctx.fail("perm repeats an axis");
    used[size_t(k)] = true;
    out.push_back(in[size_t(k)]);
  }
  ctx.set_output(0, out, ctx.elem_type(0));
  if (!shape::known(in)) return;
  std::vector<int64_t> in_strides(in.size(), 1);
  for (size_t k = in.size(); k-- > 1;) in_strides[k - 1] = in_strides[k] * in[k];
  shape::remap_value(ctx, out, [&](size_t i) {
    const auto c = shape::coords(i, out);
    int64_t at = 0;
    for (size_t k = 0; k < c.size(); ++k) at += c[k] * in_strides[size_t(normalize_axis(ctx, perm[k], int64_t(in.size())))];
    return size_t(at);
  });
}

void shape_concat(ShapeContext& ctx) {
  const auto& first = ctx.dims(0);
  const int64_t rank = int64_t(first.size());
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", 0), rank);
  std::vector<int64_t> out = first;
  out[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const auto& d = ctx.dims(i);
    if (int64_t(d.size()) != rank) ctx.fail(fmt::format("input {} has rank {}, input 0 rank {}", i, d.size(), rank));
    for (size_t k = 0; k < d.size(); ++k) {
      if (int64_t(k) == axis) continue;
      if (out[k] == -1) out[k] = d[k];
      else if (d[k] >= 0 && d[k] != out[k]) ctx.fail(fmt::format("input {} has {} in dim {}, not {}", i, d[k], k, out[k]));
    }
    out[size_t(axis)] = (out[size_t(axis)] < 0 || d[size_t(axis)] < 0) ? -1 : out[size_t(axis)] + d[size_t(axis)];
  }
  ctx.set_output(0, out, ctx.elem_type(0));
  // Known values concatenate (the shape vectors exporters assemble).
  // Checked before any element is made: 10,000 parts of 2^16 elements each
  // would be 655 million (issue 32).
  if (!shape::known(out) || shape::product(out) > ctx.value_room()) return;
  const int64_t outer = shape::product(out, 0, size_t(axis));
  std::vector<const TensorValue*> parts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorValue* part = ctx.value(i);
    if (!part) return;
    parts.push_back(part);
  }
  TensorValue v = shape::make_value(out, ctx.elem_type(0));
  for (int64_t o = 0; o < outer; ++o)
    for (const TensorValue* p : parts) {
      const int64_t len = int64_t(p->size()) / std::max<int64_t>(outer, 1);
      for (int64_t k = 0; k < len; ++k) shape::push(v, p->real_at(size_t(o * len + k)), p->int_at(size_t(o * len + k)));
    }
  ctx.set_value(0, std::move(v));
}

void shape_gather(ShapeContext& ctx) {
  const auto& data = ctx.dims(0);
  const auto& idx = ctx.dims(1);
  const int64_t rank = int64_t(data.size());
  if (rank == 0) ctx.fail("Gather from a scalar");
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", 0), rank);
  std::vector<int64_t> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.set_output(0, out, ctx.elem_type(0));
  // Checked before any element is made: 2^16 indices into 2^16 elements
  // once made 2^32 (issue 32).
  const int64_t n = shape::product(out);
  if (n < 0 || n > ctx.value_room()) return;
  const TensorValue *dv = ctx.value(0), *iv = ctx.value(1);
  if (!dv || !iv || !shape::known(data)) return;
  const int64_t outer = shape::product(data, 0, size_t(axis)), inner = shape::product(data, size_t(axis) + 1);
  const int64_t len = data[size_t(axis)];
  TensorValue v = shape::make_value(out, ctx.elem_type(0));
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < iv->size(); ++j) {
      int64_t at = iv->int_at(j);
      if (at < 0) at += len;
      if (at < 0 || at >= len) ctx.fail(fmt::format("index {} is out of range for a dim of {}", iv->int_at(j), len));
      for (int64_t k = 0; k < inner; ++k) {
        const size_t src = size_t((o * len + at) * inner + k);
        shape::push(v, dv->real_at(src), dv->int_at(src));
      }
    }
  ctx.set_value(0, std::move(v));
}

void shape_gather_elements(ShapeContext& ctx) { ctx.set_output(0, ctx.dims(1), ctx.elem_type(0)); }

void shape_gather_nd(ShapeContext& ctx) {
  const auto& data = ctx.dims(0);
  const auto& idx = ctx.dims(1);
  const int64_t b = attr_int(ctx.node, "batch_dims", 0);
  if (idx.empty() || idx.back() < 0) throw ShapeUnknown("GatherND indices' last dim is unknown");
  const int64_t last = idx.back();
  const int64_t r = int64_t(data.size()), q = int64_t(idx.size());
  if (b < 0 || b >= std::min(r, q)) ctx.fail(fmt::format("batch_dims {} is outside [0, {})", b, std::min(r, q)));
  if (last < 1 || last > r - b) ctx.fail(fmt::format("indices address {} dims; the data has {} after the batch dims", last, r - b));
  std::vector<int64_t> out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + last, data.end());
  ctx.set_output(0, out, ctx.elem_type(0));
}

void shape_same_as_data(ShapeContext& ctx) { ctx.same_as_input(0); }

// Slice: starts/ends/axes/steps as attributes (opset < 10) or inputs.
void shape_slice(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  const bool from_inputs = ctx.opset >= 10;
  const auto starts = from_inputs ? ctx.ints(1, "starts") : attr_ints(ctx.node, "starts");
  const auto ends = from_inputs ? ctx.ints(2, "ends") : attr_ints(ctx.node, "ends");
  std::vector<int64_t> axes = from_inputs ? (ctx.has_input(3) ? ctx.ints(3, "axes") : std::vector<int64_t>{})
                                          : attr_ints(ctx.node, "axes");
  std::vector<int64_t> steps = from_inputs && ctx.has_input(4) ? ctx.ints(4, "steps") : std::vector<int64_t>{};
  if (starts.size() != ends.size()) ctx.fail("starts and ends differ in length");
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) ctx.fail("axes or steps differ in length from starts");
  std::vector<int64_t> out = in, first(in.size(), 0), step(in.size(), 1);
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normalize_axis(ctx, axes[k], rank);
    const int64_t len = in[size_t(a)];
    if (steps[k] == 0) ctx.fail("slice step 0");
    if (len < 0) {
      out[size_t(a)] = -1;
      continue;
    }
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += len;
    if (e < 0) e += len;
    // A step beyond the dim takes one element, as does len + 1; clamped so that no sum below overflows.
    const int64_t st = std::clamp<int64_t>(steps[k], -(len + 1), len + 1);
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, len);
      e = std::clamp<int64_t>(e, 0, len);
      out[size_t(a)] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, len - 1);
      e = std::clamp<int64_t>(e, -1, len - 1);
      out[size_t(a)] = s > e ? (s - e - st - 1) / -st : 0;
    }
    first[size_t(a)] = s;
    step[size_t(a)] = st;
  }
  ctx.set_output(0, out, ctx.elem_type(0));
  shape::remap_value(ctx, out, [&](size_t i) {
    const auto c = shape::coords(i, out);
    int64_t at = 0, stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
      at += (first[k] + c[k] * step[k]) * stride;
      stride *= in[k];
    }
    return size_t(at);
  });
}

// Split: sizes from the attribute (< 13) or input 1, or num_outputs (18), or equal parts.
void shape_split(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", 0), int64_t(in.size()));
  const int64_t len = in[size_t(axis)];
  const size_t parts = ctx.num_outputs();
  std::vector<int64_t> sizes;
  if (auto given = ctx.ints_from(1, "split"); given && !given->empty()) {
    sizes = *given;
  } else {
    if (len < 0) throw ShapeUnknown("split of a dim whose size is unknown");
    const int64_t n = attr_int(ctx.node, "num_outputs", int64_t(parts));
    if (n <= 0) ctx.fail("num_outputs must be positive");
    // Checked before any part is made (issue 20: 10^12 parts allocated without bound).
    if (size_t(n) != parts) ctx.fail(fmt::format("num_outputs is {} for {} outputs", n, parts));
    const int64_t each = (len + n - 1) / n;  // the last part takes the remainder (opset 18)
    for (int64_t k = 0; k < n; ++k) sizes.push_back(std::min(each, len - k * each));
  }
  if (sizes.size() != parts) ctx.fail(fmt::format("{} split sizes for {} outputs", sizes.size(), parts));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) ctx.fail(fmt::format("split size {}", s));
    if (__builtin_add_overflow(total, s, &total)) ctx.fail("split sizes add up past 2^63");
  }
  if (len >= 0 && total != len) ctx.fail(fmt::format("split sizes add up to {}, the dim is {}", total, len));
  for (size_t o = 0; o < parts; ++o) {
    auto out = in;
    out[size_t(axis)] = sizes[o];
    ctx.set_output(o, out, ctx.elem_type(0));
  }
}

// Pad: pads from the attribute (< 11) or input 1, optionally over axes (18).
void shape_pad(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  const auto pads = ctx.opset >= 11 ? ctx.ints(1, "pads") : attr_ints(ctx.node, "pads");
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    for (int64_t a : ctx.ints(3, "axes")) axes.push_back(normalize_axis(ctx, a, rank));
  } else {
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  }
  if (pads.size() != 2 * axes.size()) ctx.fail(fmt::format("{} pads for {} axes", pads.size(), axes.size()));
  auto out = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t& d = out[size_t(axes[k])];
    if (d < 0) continue;
    int64_t padded;
    if (__builtin_add_overflow(d, pads[k], &padded) || __builtin_add_overflow(padded, pads[k + axes.size()], &padded))
      ctx.fail("pads overflow 64-bit integers");
    d = padded;
    if (d < 0) ctx.fail("padding removes more than the whole dim");
  }
  ctx.set_output(0, out, ctx.elem_type(0));
}

// Resize (10+) and Upsample: sizes, or floor(input x scale) per axis.
void shape_resize(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const int64_t rank = int64_t(in.size());
  std::vector<int64_t> axes = attr_ints(ctx.node, "axes");
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  for (auto& a : axes) a = normalize_axis(ctx, a, rank);
  const bool upsample = ctx.node.op_type == "Upsample";
  const size_t scales_at = upsample || ctx.opset < 11 ? 1 : 2, sizes_at = 3;
  auto out = in;
  const TensorValue* sizes = ctx.has_input(sizes_at) ? ctx.value(sizes_at) : nullptr;
  if (ctx.has_input(sizes_at) && ctx.rank(sizes_at) > 0 && ctx.dims(sizes_at)[0] != 0) {
    if (!sizes) throw ShapeUnknown("its sizes are not known before run time");
    if (sizes->size() != axes.size()) ctx.fail(fmt::format("{} sizes for {} axes", sizes->size(), axes.size()));
    const std::string policy = attr_string(ctx.node, "keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") throw ShapeUnknown("keep_aspect_ratio_policy other than stretch");
    for (size_t k = 0; k < axes.size(); ++k) out[size_t(axes[k])] = sizes->int_at(k);
    ctx.set_output(0, out, ctx.elem_type(0));
    return;
  }
  std::vector<double> scales;
  if (upsample && ctx.opset < 9) {
    for (float f : attr_floats(ctx.node, "scales")) scales.push_back(f);
    if (scales.empty()) ctx.fail("Upsample has no scales");
  } else {
    const TensorValue* sv = ctx.value(scales_at);
    if (!sv) throw ShapeUnknown("its scales are not known before run time");
    for (size_t k = 0; k < sv->size(); ++k) scales.push_back(sv->real_at(k));
  }
  if (scales.size() != axes.size()) ctx.fail(fmt::format("{} scales for {} axes", scales.size(), axes.size()));
  for (size_t k = 0; k < axes.size(); ++k) {
    // NaN passed `<= 0` and floor(d x NaN) made a silent 0 (issue 32).
    if (!(scales[k] > 0) || !std::isfinite(scales[k]))
      ctx.fail(fmt::format("scale {} ({}, axis {}) is not a finite number above 0", scales[k],
                           upsample && ctx.opset < 9 ? "attribute 'scales'" : fmt::format("input {} 'scales'", scales_at),
                           axes[k]));
    int64_t& d = out[size_t(axes[k])];
    if (d >= 0) d = saturating_int64(std::floor(double(d) * scales[k] + 1e-9));
  }
  ctx.set_output(0, out, ctx.elem_type(0));
}

void shape_expand(ShapeContext& ctx) {
  const auto target = ctx.ints(1, "shape");
  const auto out = broadcast_shapes(ctx, {ctx.dims(0), target});
  ctx.set_output(0, out, ctx.elem_type(0));
  shape::remap_value(ctx, out, [&](size_t i) { return shape::broadcast_offset(i, out, ctx.dims(0)); });
}

void shape_tile(ShapeContext& ctx) {
  const auto& in = ctx.dims(0);
  const auto repeats = ctx.ints(1, "repeats");
  if (repeats.size() != in.size()) ctx.fail(fmt::format("{} repeats for rank {}", repeats.size(), in.size()));
  auto out = in;
  for (size_t k = 0; k < in.size(); ++k) {
    if (repeats[k] < 0) ctx.fail("negative repeats");
    if (out[k] >= 0) out[k] = saturating_mul(out[k], repeats[k]);
  }
  ctx.set_output(0, out, ctx.elem_type(0));
  if (!shape::known(in)) return;
  shape::remap_value(ctx, out, [&](size_t i) {
    const auto c = shape::coords(i, out);
    int64_t at = 0, stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
      at += (c[k] % in[k]) * stride;
      stride *= in[k];
    }
    return size_t(at);
  });
}

void shape_depth_space(ShapeContext& ctx, bool to_space) {
  const auto& in = ctx.dims(0);
  const int64_t b = attr_int(ctx.node, "blocksize", 0);
  if (in.size() != 4) ctx.fail("needs a 4-D input");
  // Bounded so that b*b and a dim times it stay far inside 64 bits (issue 20: 2^32 squared wrapped to 0).
  if (b <= 0 || b > (int64_t(1) << 16)) ctx.fail(fmt::format("blocksize {} is not in [1, 65536]", b));
  auto grown = [&](int64_t d, int64_t f) {
    if (d < 0) return int64_t(-1);
    if (d > (int64_t(1) << 62) / f) ctx.fail(fmt::format("a dim of {} times {} exceeds 2^62", d, f));
    return d * f;
  };
  auto out = in;
  if (to_space) {
    if (in[1] >= 0 && in[1] % (b * b)) ctx.fail("channels not divisible by blocksize squared");
    out = {in[0], in[1] < 0 ? -1 : in[1] / (b * b), grown(in[2], b), grown(in[3], b)};
  } else {
    if ((in[2] >= 0 && in[2] % b) || (in[3] >= 0 && in[3] % b)) ctx.fail("spatial dims not divisible by blocksize");
    out = {in[0], grown(in[1], b * b), in[2] < 0 ? -1 : in[2] / b, in[3] < 0 ? -1 : in[3] / b};
  }
  ctx.set_output(0, out, ctx.elem_type(0));
}

void shape_topk(ShapeContext& ctx) {
  auto out = ctx.dims(0);
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", -1), int64_t(out.size()));
  const int64_t k = ctx.opset >= 10 ? ctx.single_int(1, "k") : attr_int(ctx.node, "k", -1);
  if (k < 0) ctx.fail("k must be non-negative");
  out[size_t(axis)] = k;
  ctx.set_output(0, out, ctx.elem_type(0));
  if (ctx.has_output(1)) ctx.set_output(1, out, elem::kInt64);
}

void shape_one_hot(ShapeContext& ctx) {
  auto out = ctx.dims(0);
  const int64_t depth = ctx.single_int(1, "depth");
  const int64_t axis = normalize_axis(ctx, attr_int(ctx.node, "axis", -1), int64_t(out.size()) + 1);
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, out, ctx.elem_type(2));
}

// Data-dependent sizes: rank known, the count is not.
void shape_non_zero(ShapeContext& ctx) { ctx.set_output(0, {ctx.rank(0), -1}, elem::kInt64); }
void shape_compress(ShapeContext& ctx) {
  if (find_attr(ctx.node, "axis")) {
    auto out = ctx.dims(0);
    out[size_t(normalize_axis(ctx, attr_int(ctx.node, "axis", 0), int64_t(out.size())))] = -1;
    ctx.set_output(0, out, ctx.elem_type(0));
  } else {
    ctx.set_output(0, {-1}, ctx.elem_type(0));
  }
}

}  // namespace

void register_data_movement_ops(OpRegistry& r) {
  struct Move {
    const char* op;
    ShapeFn shape;
    int min_inputs, max_inputs;
  };
  const Move moves[] = {{"Slice", shape_slice, 1, 5},         {"Gather", shape_gather, 2, 2},
                        {"GatherElements", shape_gather_elements, 2, 2}, {"GatherND", shape_gather_nd, 2, 2},
                        {"Split", shape_split, 1, 2},         {"Compress", shape_compress, 2, 2}};
  // Slice and Split take elements at other positions: inductor reads through them.
  for (const auto& m : moves)
    r.add({"", m.op, FusionRole::opaque, m.shape, lower_move, TILEWAVE_HERE})
        .inputs(m.min_inputs, m.max_inputs)
        .traits(m.op == std::string("Slice") || m.op == std::string("Split") ? op_trait::index_remap : 0u);
  auto read_all = [&](const char* op, ShapeFn shape) -> OpEntry {
    return r.add({"", op, FusionRole::opaque, std::move(shape), lower_read_all, TILEWAVE_HERE});
  };
  using op_trait::index_remap;
  r.add({"", "Transpose", FusionRole::opaque, shape_transpose, lower_transpose, TILEWAVE_HERE})
      .inputs(1, 1)
      .traits(index_remap);
  read_all("Concat", shape_concat).inputs(1, -1).traits(index_remap);
  read_all("Pad", shape_pad).inputs(1, 4).traits(index_remap);
  r.add({"", "Resize", FusionRole::opaque, shape_resize, lower_resize, TILEWAVE_HERE}).inputs(1, 4).traits(index_remap);
  r.add({"", "Upsample", FusionRole::opaque, shape_resize, lower_resize, TILEWAVE_HERE}).inputs(1, 2).traits(index_remap);
  r.add({"", "Expand", FusionRole::opaque, shape_expand, lower_expand, TILEWAVE_HERE}).inputs(2, 2).traits(index_remap);
  read_all("Tile", shape_tile).inputs(2, 3).traits(index_remap);
  read_all("DepthToSpace", [](ShapeContext& c) { shape_depth_space(c, true); }).inputs(1, 1).rank(0, 4).traits(index_remap);
  read_all("SpaceToDepth", [](ShapeContext& c) { shape_depth_space(c, false); }).inputs(1, 1).rank(0, 4).traits(index_remap);
  read_all("ScatterND", shape_same_as_data).inputs(3, 3);
  read_all("ScatterElements", shape_same_as_data).inputs(3, 3);
  read_all("ReverseSequence", shape_same_as_data).inputs(2, 2);
  read_all("Trilu", shape_same_as_data).inputs(1, 2).rank(0, 2, 8);
  read_all("CumSum", shape_same_as_data).inputs(2, 2);
  read_all("TopK", shape_topk).inputs(1, 2);
  read_all("OneHot", shape_one_hot).inputs(3, 3);
  read_all("NonZero", shape_non_zero).inputs(1, 1);
}

}  // namespace tilewave
