// docs/model.md "Layout pass".
#include "tilewave/passes.h"

namespace tilewave {

namespace {

Kernel transform_kernel(const Kernel& conv, const char* suffix, int64_t elems, DType dtype) {
  MemoryProblem m;
  m.op = MemoryOp::transform;
  m.elems_in = m.elems_out = elems;
  Layer l;
  l.problem = m;
  l.dtype = dtype;
  return derived_kernel(conv, suffix, RuntimeStep::layout_transform, l, HostCall::inner);  // cuDNN launches them inside the conv
}

// cuDNN's tensor-core convolutions run NHWC; given NCHW tensors it
// transforms input and filter before and the output after. Pointwise
// (1x1, stride 1) convolutions run as GEMMs on NCHW directly, depthwise and
// other direct convolutions on CUDA cores in NCHW, an RGB stem in its own
// first-layer kernel that reads NCHW. Grouped convolutions on tensor cores
// are transformed too.
bool wrapped_in_transforms(const ConvProblem& p, DType dtype) {
  if (dtype == DType::fp32 || dtype == DType::int8 || p.transposed || p.C < 4) return false;
  // Groups of at least one 16-byte vector of channels run on tensor cores
  // (docs/model.md "Direct convolution (depthwise and small groups)").
  if (p.groups > 1) return p.C / p.groups >= 16 / dtype_bytes(dtype);
  return !(p.R == 1 && p.S == 1 && p.stride[0] == 1 && p.stride[1] == 1);
}

}  // namespace

void layout_pass(const LowerInput& in, KernelGraph& graph) {
  if (in.exec.layout == Layout::nhwc || !in.exec.runtime_profile().follows_layout()) return;
  std::vector<Kernel> out;
  out.reserve(graph.kernels.size() * 2);
  for (Kernel& k : graph.kernels) {
    for (auto* refs : {&k.reads, &k.writes})
      for (auto& r : *refs) r.layout = Layout::nchw;
    const ConvProblem* p = k.layer ? std::get_if<ConvProblem>(&k.layer->problem) : nullptr;
    if (!p || !wrapped_in_transforms(*p, k.layer->dtype)) {
      out.push_back(std::move(k));
      continue;
    }
    const DType d = k.layer->dtype;
    Kernel input = transform_kernel(k, "/to_nhwc", p->N * p->C * p->H * p->W, d);
    Kernel filter = transform_kernel(k, "/filter_to_nhwc", p->K * p->C * p->R * p->S, d);
    Kernel output = transform_kernel(k, "/to_nchw", p->N * p->K * p->P() * p->Q(), d);
    if (!k.reads.empty()) {
      input.reads = {k.reads[0]};
      k.reads[0].name += "#nhwc";
      k.reads[0].layout = Layout::nhwc;
      input.writes = {k.reads[0]};
    }
    if (!k.writes.empty()) {
      output.writes = {k.writes[0]};
      k.writes[0].name += "#nhwc";
      k.writes[0].layout = Layout::nhwc;
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
