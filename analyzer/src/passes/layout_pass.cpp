// docs/model.md "Layout pass".
#include "tilewave/passes.h"

#include <string>
#include <unordered_map>

namespace tilewave {

Layout conv_kernel_layout(const ConvProblem& p, DType dtype, int align, Layout given) {
  if (p.transposed) return given;
  // A group width without a native kernel runs in the other layout, whichever
  // is given: from NCHW cuDNN's NHWC kernel, from channels_last its
  // tensorTransformGeneric layout (docs/model.md "Grouped convolutions").
  if (grouped_fallback(p, align)) return given == Layout::nhwc ? Layout::nchw : Layout::nhwc;
  if (given == Layout::nhwc || dtype == DType::fp32 || dtype == DType::int8) return given;
  // Given NCHW, cuDNN's tensor-core convolutions run NHWC. Pointwise (1x1,
  // stride 1) ones run as GEMMs on NCHW directly, depthwise and other direct
  // convolutions on CUDA cores in NCHW, an RGB stem in NHWC only where it
  // has a first-layer kernel (docs/model.md "Narrow-channel convolutions").
  // Groups of at least one 16-byte vector of channels run on tensor cores
  // (docs/model.md "Direct convolution (depthwise and small groups)").
  switch (narrow_conv(p, align, true)) {
    case NarrowConv::first_layer: return Layout::nhwc;
    case NarrowConv::unaligned: return given;
    case NarrowConv::none: break;
  }
  // Fewer filters than a vector as well (ECA's 1-D convolution over the
  // channels): cuDNN's direct kernels, in the layout given.
  if (p.groups == 1 && p.C < align) return given;
  if (p.groups > 1) return p.C / p.groups >= 16 / dtype_bytes(dtype) ? Layout::nhwc : given;
  return is_pointwise(p) ? given : Layout::nhwc;
}

namespace {

Layer transform_layer(int64_t elems, DType dtype) {
  MemoryProblem m;
  m.op = MemoryOp::transform;
  m.elems_in = m.elems_out = elems;
  Layer l;
  l.problem = m;
  l.dtype = dtype;
  return l;
}

Kernel transform_kernel(const Kernel& conv, Layout to, const char* what, int64_t elems, DType dtype) {
  const std::string suffix = std::string("/") + what + "to_" + layout_name(to);
  // cuDNN launches them inside the convolution's call.
  return derived_kernel(conv, suffix, RuntimeStep::layout_transform, transform_layer(elems, dtype), HostCall::inner);
}

// docs/model.md "Pointwise convolutions on NCHW": cuDNN's benchmark mode
// times both paths of a half-precision pointwise convolution given NCHW and
// keeps the faster; each is costed alone, as the benchmark times it.
Layout faster_pointwise_layout(const Layer& conv, const LayerTime& layer_us) {
  const auto& p = std::get<ConvProblem>(conv.problem);
  Layer direct = conv, nhwc = conv;
  std::get<ConvProblem>(direct.problem).nchw = true;
  std::get<ConvProblem>(nhwc.problem).nchw = false;
  const double via_nhwc_us = layer_us(nhwc) + layer_us(transform_layer(p.N * p.C * p.H * p.W, conv.dtype)) +
                             layer_us(transform_layer(p.N * p.K * p.P() * p.Q(), conv.dtype));
  return via_nhwc_us < layer_us(direct) ? Layout::nhwc : Layout::nchw;
}

// `t` as the transform into `to` writes it.
TensorRef transformed(TensorRef t, Layout to) {
  t.name += std::string("#") + layout_name(to);
  t.layout = to;
  return t;
}


// Eager PyTorch's memory formats under channels_last (docs/model.md "Layout
// pass"): the format each activation is in, by tensor name, where it is not
// the configuration's.
class MemoryFormats {
 public:
  explicit MemoryFormats(Layout given) : given_(given) {}
  Layout of(const TensorRef& t) const {
    auto it = formats_.find(t.name);
    return it == formats_.end() ? given_ : it->second;
  }
  void set(const TensorRef& t, Layout l) {
    if (l == given_) formats_.erase(t.name);
    else formats_[t.name] = l;
  }

 private:
  Layout given_;
  std::unordered_map<std::string, Layout> formats_;
};

// A GroupNorm's kernels index contiguous (NCHW) memory: its call copies a
// channels_last input to NCHW first and returns NCHW. `graph.kernels[i]`
// is its moments kernel; moves it and its op's later kernels to `out`
// (after the copy, where one is needed) and returns the last index.
size_t group_norm_in_nchw(KernelGraph& graph, size_t i, MemoryFormats& formats, std::vector<Kernel>& out) {
  size_t last = i;
  const Kernel& moments = graph.kernels[i];
  while (last + 1 < graph.kernels.size() && !moments.nodes.empty() && !graph.kernels[last + 1].nodes.empty() &&
         graph.kernels[last + 1].nodes[0] == moments.nodes[0] &&
         (graph.kernels[last + 1].ops.is(RuntimeStep::norm_params) ||
          graph.kernels[last + 1].ops.is(RuntimeStep::norm_apply)))
    ++last;
  if (!moments.reads.empty() && formats.of(moments.reads[0]) != Layout::nchw) {
    const auto& rows = std::get<MemoryProblem>(moments.layer->problem);
    Kernel copy = transform_kernel(moments, Layout::nchw, "", rows.outer * rows.inner, moments.layer->dtype);
    const TensorRef x = moments.reads[0];
    copy.reads = {x};
    copy.writes = {transformed(x, Layout::nchw)};
    for (size_t j = i; j <= last; ++j)
      for (auto& r : graph.kernels[j].reads)
        if (r.name == x.name) r = copy.writes[0];
    out.push_back(std::move(copy));
  }
  for (const auto& w : graph.kernels[last].writes) formats.set(w, Layout::nchw);
  for (size_t j = i; j <= last; ++j) out.push_back(std::move(graph.kernels[j]));
  return last;
}

// A convolution's weight is a parameter (the model's, which
// model.to(memory_format=...) converted), not one computed in the forward
// (weight standardisation), which is contiguous.
bool weight_is_parameter(const LowerInput& in, const Kernel& k) {
  if (k.nodes.empty() || k.nodes[0] < 0) return true;
  const Node& n = in.model.nodes[size_t(k.nodes[0])];
  return n.inputs.size() > 1 && in.model.initializers.count(n.inputs[1]) > 0;
}

}  // namespace

void layout_pass(const LowerInput& in, KernelGraph& graph, const LayerTime& layer_us) {
  // Between framework ops every activation has the configuration's layout
  // (PyTorch returns a convolution's output in its input's memory format),
  // so a kernel needing the other one is wrapped once on each side, and no
  // two transforms ever meet. Eager under channels_last is the exception:
  // a GroupNorm returns NCHW, and the format then follows the ops.
  const Layout given = in.exec.activation_layout();
  const bool formats_follow_ops = given == Layout::nhwc && in.exec.runtime_profile().follows_layout();
  MemoryFormats formats(given);
  std::vector<Kernel> out;
  out.reserve(graph.kernels.size());
  for (size_t i = 0; i < graph.kernels.size(); ++i) {
    Kernel& k = graph.kernels[i];
    if (formats_follow_ops && is_group_norm(k)) {
      i = group_norm_in_nchw(graph, i, formats, out);
      continue;
    }
    const ConvProblem* p = k.layer ? std::get_if<ConvProblem>(&k.layer->problem) : nullptr;
    const Layout input_format = k.reads.empty() ? given : formats.of(k.reads[0]);
    if (!p) {
      // An elementwise op, a pool or a norm writes in its first input's
      // format; an elementwise op over operands in two formats cannot be
      // vectorised, as over a broadcast one (MemoryProblem::strided).
      auto* m = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr;
      if (m && m->op == MemoryOp::eltwise)
        for (const auto& r : k.reads)
          if (formats.of(r) != input_format) m->strided = true;
      for (const auto& w : k.writes) formats.set(w, input_format);
      out.push_back(std::move(k));
      continue;
    }
    const DType d = k.layer->dtype;
    // PyTorch runs a convolution channels_last when its input or its weight
    // is (cudnn_conv_suggest_memory_format), copying the other to match.
    const Layout format = formats_follow_ops && weight_is_parameter(in, k) ? Layout::nhwc : input_format;
    if (format != input_format) {
      Kernel copy = transform_kernel(k, format, "contiguous_", p->N * p->C * p->H * p->W, d);
      copy.reads = {k.reads[0]};
      k.reads[0] = transformed(k.reads[0], format);
      copy.writes = {k.reads[0]};
      out.push_back(std::move(copy));
    }
    for (const auto& w : k.writes) formats.set(w, format);
    Layout need = conv_kernel_layout(*p, d, int(16 / dtype_bytes(d)), format);
    if (layer_us && need == Layout::nchw && is_dense_half_pointwise(*p, d))
      need = faster_pointwise_layout(*k.layer, layer_us);
    std::get<ConvProblem>(k.layer->problem).nchw = need == Layout::nchw;
    if (need == format) {
      out.push_back(std::move(k));
      continue;
    }
    Kernel input = transform_kernel(k, need, "", p->N * p->C * p->H * p->W, d);
    Kernel output = transform_kernel(k, format, "", p->N * p->K * p->P() * p->Q(), d);
    if (!k.reads.empty()) {
      input.reads = {k.reads[0]};
      k.reads[0] = transformed(k.reads[0], need);
      input.writes = {k.reads[0]};
    }
    if (!k.writes.empty()) {
      output.writes = {k.writes[0]};
      k.writes[0] = transformed(k.writes[0], need);
      output.reads = {k.writes[0]};
    }
    out.push_back(std::move(input));
    // A 1x1 filter is the same memory in either layout: cuDNN transforms only
    // a wider one (calibrate/data/h100/pointwise_paths).
    if (p->R * p->S > 1)
      out.push_back(transform_kernel(k, need, "filter_", p->K * (p->C / p->groups) * p->R * p->S, d));
    out.push_back(std::move(k));
    out.push_back(std::move(output));
  }
  graph.kernels = std::move(out);
}

}  // namespace tilewave
