#include "conv_kernels.h"

namespace tilewave {

namespace {

Kernel memory_kernel(const Kernel& conv, const std::string& suffix, RuntimeStep step, MemoryProblem m,
                     DType dtype, int64_t extra_bytes = 0) {
  Kernel k;
  k.name = conv.name + suffix;
  k.ops = step;
  k.nodes = {conv.nodes[0]};
  Layer l;
  l.problem = m;
  l.dtype = dtype;
  l.extra_bytes = extra_bytes;
  k.layer = l;
  k.host_call = HostCall::inner;  // launched inside the conv's or the BatchNorm's op
  return k;
}

const ConvProblem* conv_problem(const Kernel& k) {
  return k.layer ? std::get_if<ConvProblem>(&k.layer->problem) : nullptr;
}

}  // namespace

bool bias_is_own(const Node& conv, const ConvProblem& p) {
  const std::string& bias = conv.inputs[2];
  const std::string suffix = "bias";
  const bool named_parameter = bias.size() >= suffix.size() &&
                               bias.compare(bias.size() - suffix.size(), suffix.size(), suffix) == 0;
  return named_parameter || (p.H == 1 && p.W == 1);
}

bool conv_has_bias(const Node& n) {
  return (n.op_type == "Conv" || n.op_type == "ConvTranspose") && n.inputs.size() > 2 && !n.inputs[2].empty();
}

std::vector<Kernel> channel_padding_kernels(const LowerInput& in, const KernelEdges& edges, Kernel& conv) {
  const ConvProblem* p = conv_problem(conv);
  constexpr int64_t padded_channels = 4;
  if (!p || p->groups != 1 || p->transposed || p->C >= padded_channels) return {};
  // In half precision only cuDNN's first-layer kernels take padded input,
  // and from NCHW their layout transform pads it (docs/model.md
  // "Narrow-channel convolutions").
  const bool half = in.dtype == DType::fp16 || in.dtype == DType::bf16;
  const int align = int(16 / dtype_bytes(in.dtype));
  if (half && (in.exec.activation_layout() == Layout::nchw ||
               narrow_conv(*p, align, false) != NarrowConv::first_layer))
    return {};
  MemoryProblem image;
  image.op = MemoryOp::copy;
  image.elems_in = p->N * p->C * p->H * p->W;
  image.elems_out = p->N * padded_channels * p->H * p->W;
  MemoryProblem filter = image;
  filter.elems_in = p->K * p->C * p->R * p->S;
  filter.elems_out = p->K * padded_channels * p->R * p->S;
  Kernel pad_input = memory_kernel(conv, "/pad_input", RuntimeStep::pad, image, in.dtype);
  const TensorRef x = edges.ref(in.model.nodes[conv.nodes[0]].inputs[0]);
  const TensorRef padded{x.name + "#pad", image.elems_out * dtype_bytes(x.dtype), x.dtype, x.layout};
  if (!x.name.empty()) pad_input.reads = {x};
  pad_input.writes = {padded};
  for (auto& r : conv.reads)
    if (r.name == x.name) r = padded;
  return {pad_input, memory_kernel(conv, "/pad_filter", RuntimeStep::pad, filter, in.dtype)};
}

TensorRef raw_output(Kernel& conv) {
  if (conv.writes.empty()) return {};
  TensorRef& y = conv.writes[0];
  const TensorRef before = y;
  y.name += "#raw";
  return before;
}

std::vector<Kernel> batchnorm_aux_kernels(const LowerInput& in, const Kernel& owner, int64_t channels, int count) {
  MemoryProblem m;
  m.op = MemoryOp::eltwise;
  m.elems = channels;
  m.inputs = 1;
  std::vector<Kernel> out;
  for (int i = 0; i < count; ++i) {
    // The first is a copy of the running statistics, the rest elementwise.
    MemoryProblem k = m;
    if (i == 0) {
      k.op = MemoryOp::copy;
      k.elems_in = k.elems_out = channels;
    }
    out.push_back(memory_kernel(owner, "/bn_prep" + std::to_string(i), RuntimeStep::bn_prep, k, in.dtype));
  }
  return out;
}

std::vector<Kernel> eager_bias_kernels(const LowerInput& in, Kernel& conv, int aux_kernels) {
  const ConvProblem* p = conv_problem(conv);
  if (!p || !conv_has_bias(in.model.nodes[conv.nodes[0]])) return {};
  const bool own_bias = bias_is_own(in.model.nodes[conv.nodes[0]], *p);
  std::vector<Kernel> out = batchnorm_aux_kernels(in, conv, p->K, own_bias ? 0 : aux_kernels);
  MemoryProblem pass;
  pass.op = own_bias ? MemoryOp::eltwise : MemoryOp::norm;
  pass.elems = p->N * p->K * p->P() * p->Q();
  pass.inputs = 1;
  pass.outer = p->N * p->K;  // (image, channel) planes (docs/model.md "Memory-bound kernels")
  pass.strided = own_bias;   // the conv's bias, added per channel
  // Scale and shift per channel, read once.
  Kernel bias = memory_kernel(conv, "/bias", RuntimeStep::bias, pass, in.dtype, 2 * p->K * dtype_bytes(in.dtype));
  if (!own_bias) bias.host_call = HostCall::op;  // the BatchNorm op of its own
  const TensorRef y = raw_output(conv);
  if (!y.name.empty()) {
    bias.reads = {conv.writes[0]};
    bias.writes = {y};
  }
  out.push_back(std::move(bias));
  return out;
}

}  // namespace tilewave
