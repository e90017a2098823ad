// docs/model.md "Layout pass".
#include "tilewave/passes.h"

namespace tilewave {

Layout conv_kernel_layout(const ConvProblem& p, DType dtype, int align, Layout given) {
  if (p.transposed) return given;
  // A group width without a native kernel runs in the other layout, whichever
  // is given: from NCHW cuDNN's NHWC kernel, from channels_last its
  // tensorTransformGeneric layout (docs/model.md "Grouped convolutions").
  if (grouped_fallback(p, align)) return given == Layout::nhwc ? Layout::nchw : Layout::nhwc;
  if (given == Layout::nhwc || dtype == DType::fp32 || dtype == DType::int8 || p.C < 4) return given;
  // Given NCHW, cuDNN's tensor-core convolutions run NHWC. Pointwise (1x1,
  // stride 1) ones run as GEMMs on NCHW directly, depthwise and other direct
  // convolutions on CUDA cores in NCHW, an RGB stem in its own first-layer
  // kernel that reads NCHW. Groups of at least one 16-byte vector of
  // channels run on tensor cores (docs/model.md "Direct convolution
  // (depthwise and small groups)").
  if (p.groups > 1) return p.C / p.groups >= 16 / dtype_bytes(dtype) ? Layout::nhwc : given;
  const bool pointwise = p.R == 1 && p.S == 1 && p.stride[0] == 1 && p.stride[1] == 1;
  return pointwise ? given : Layout::nhwc;
}

namespace {

Kernel transform_kernel(const Kernel& conv, Layout to, const char* what, int64_t elems, DType dtype) {
  MemoryProblem m;
  m.op = MemoryOp::transform;
  m.elems_in = m.elems_out = elems;
  Layer l;
  l.problem = m;
  l.dtype = dtype;
  const std::string suffix = std::string("/") + what + "to_" + layout_name(to);
  // cuDNN launches them inside the convolution's call.
  return derived_kernel(conv, suffix, RuntimeStep::layout_transform, l, HostCall::inner);
}

// `t` as the transform into `to` writes it.
TensorRef transformed(TensorRef t, Layout to) {
  t.name += std::string("#") + layout_name(to);
  t.layout = to;
  return t;
}

}  // namespace

void layout_pass(const LowerInput& in, KernelGraph& graph) {
  // Between framework ops every activation has the configuration's layout
  // (PyTorch returns a convolution's output in its input's memory format),
  // so a kernel needing the other one is wrapped once on each side, and no
  // two transforms ever meet.
  const Layout given = in.exec.activation_layout();
  std::vector<Kernel> out;
  out.reserve(graph.kernels.size());
  for (Kernel& k : graph.kernels) {
    const ConvProblem* p = k.layer ? std::get_if<ConvProblem>(&k.layer->problem) : nullptr;
    const DType d = p ? k.layer->dtype : DType::fp16;
    const Layout need = p ? conv_kernel_layout(*p, d, int(16 / dtype_bytes(d)), given) : given;
    if (need == given) {
      out.push_back(std::move(k));
      continue;
    }
    Kernel input = transform_kernel(k, need, "", p->N * p->C * p->H * p->W, d);
    Kernel filter = transform_kernel(k, need, "filter_", p->K * (p->C / p->groups) * p->R * p->S, d);
    Kernel output = transform_kernel(k, given, "", p->N * p->K * p->P() * p->Q(), d);
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
    out.push_back(std::move(filter));
    out.push_back(std::move(k));
    out.push_back(std::move(output));
  }
  graph.kernels = std::move(out);
}

}  // namespace tilewave
