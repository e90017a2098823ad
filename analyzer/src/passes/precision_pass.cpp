// docs/model.md "Precision pass".
#include <unordered_set>

#include "tilewave/passes.h"

namespace tilewave {

namespace {

bool pytorch_runtime(const ExecutionConfig& e) {
  const std::string r = e.runtime_profile().name();
  return r == "eager" || r == "inductor";
}

Kernel cast_kernel(const Kernel& owner, const std::string& suffix, int64_t elems, DType from, DType to) {
  // A vectorized elementwise kernel (at::native's float16 copy), not a strided copy.
  Layer l = elementwise_layer(elems, to);
  l.input_dtype = from;
  return derived_kernel(owner, suffix, RuntimeStep::cast, l, HostCall::cast);
}

bool is_compute(const Kernel& k) {
  return k.layer && (std::holds_alternative<ConvProblem>(k.layer->problem) ||
                     std::holds_alternative<GemmProblem>(k.layer->problem));
}

// Softmax-class kernels (LayerNorm, GroupNorm, Softmax, RMSNorm): on
// autocast's fp32 list.
bool runs_in_fp32(const Kernel& k) {
  if (!k.layer) return false;
  const auto* m = std::get_if<MemoryProblem>(&k.layer->problem);
  return m && m->op == MemoryOp::row_norm;
}

// A kernel the runtime launches inside `owner`'s op, after it.
bool same_op(const Kernel& owner, const Kernel& next) {
  return next.layer && std::holds_alternative<MemoryProblem>(next.layer->problem) && !owner.nodes.empty() &&
         !next.nodes.empty() && next.nodes[0] == owner.nodes[0] &&
         (next.ops.is(RuntimeStep::norm_params) || next.ops.is(RuntimeStep::norm_apply));
}

}  // namespace

void precision_pass(const LowerInput& in, KernelGraph& graph) {
  const ExecutionConfig& e = in.exec;
  if (!pytorch_runtime(e)) return;
  // PyTorch's fp32 default: cuDNN convolutions in TF32 (allow_tf32), matmuls in fp32.
  if (e.dtype == DType::fp32 && !e.amp) {
    for (Kernel& k : graph.kernels)
      if (k.layer && std::holds_alternative<ConvProblem>(k.layer->problem)) k.layer->dtype = DType::tf32;
    return;
  }
  if (!e.amp) return;
  const Model& m = in.model;
  const DType half = e.dtype;
  std::unordered_set<std::string> graph_inputs(m.inputs.begin(), m.inputs.end());
  std::vector<Kernel> out;
  out.reserve(graph.kernels.size() * 2);
  for (size_t i = 0; i < graph.kernels.size(); ++i) {
    Kernel& k = graph.kernels[i];
    if (is_compute(k) && !k.nodes.empty() && k.nodes[0] >= 0) {
      const Node& n = m.nodes[size_t(k.nodes[0])];
      // The fp32 input reaches the first op as fp32: autocast casts it there.
      for (const auto& t : n.inputs)
        if (graph_inputs.count(t) && m.numel(t) > 0) {
          Kernel cast = cast_kernel(k, "/cast_input", m.numel(t), DType::fp32, half);
          // It reads the network's fp32 input: the search knows it by that edge.
          cast.reads = {{t, m.numel(t) * 4, DType::fp32, e.activation_layout()}};
          out.push_back(std::move(cast));
        }
      // Every weight is cast on every forward (no cast cache under inference_mode).
      const bool conv = std::holds_alternative<ConvProblem>(k.layer->problem);
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        const std::string& t = n.inputs[i];
        if (t.empty() || !m.initializers.count(t) || m.numel(t) <= 0) continue;
        // A folded BatchNorm's bias is not the conv's: PyTorch's BatchNorm keeps fp32 parameters.
        if (conv && i == 2 && !bias_is_own(n, std::get<ConvProblem>(k.layer->problem))) continue;
        out.push_back(cast_kernel(k, i == 1 ? "/cast_weight" : "/cast_bias", m.numel(t), DType::fp32, half));
      }
      out.push_back(std::move(k));
      continue;
    }
    if (runs_in_fp32(k)) {
      // Cast in, run and write in fp32; the next autocast op casts back. The
      // op's later kernels (GroupNorm's scale and apply) run in fp32 too.
      const auto& p = std::get<MemoryProblem>(k.layer->problem);
      Kernel cast = cast_kernel(k, "/cast_fp32", p.elems_read(), half, DType::fp32);
      const Kernel owner = k;
      size_t last = i;
      while (last + 1 < graph.kernels.size() && same_op(owner, graph.kernels[last + 1])) ++last;
      // The op reads the fp32 copy the cast just wrote (docs/model.md
      // "Inside a network": its L2 hits are that copy's).
      TensorRef x, x32;
      if (!owner.reads.empty() && owner.reads[0].dtype != DType::fp32) {
        x = owner.reads[0];
        x32 = {x.name + "#fp32", x.bytes / dtype_bytes(x.dtype) * dtype_bytes(DType::fp32), DType::fp32, x.layout};
        cast.reads = {x};
        cast.writes = {x32};
      }
      out.push_back(std::move(cast));
      int64_t written = 0;
      for (size_t j = i; j <= last; ++j) {
        Kernel& part = graph.kernels[j];
        for (auto& r : part.reads)
          if (!x.name.empty() && r.name == x.name) r = x32;
        part.layer->dtype = DType::fp32;
        for (auto& w : part.writes) {
          w.dtype = DType::fp32;
          w.bytes *= 2;
        }
        written = std::get<MemoryProblem>(part.layer->problem).elems_written();
        out.push_back(std::move(part));
      }
      out.push_back(cast_kernel(owner, "/cast_back", written, DType::fp32, half));
      i = last;
      continue;
    }
    out.push_back(std::move(k));
  }
  graph.kernels = std::move(out);
}

}  // namespace tilewave
