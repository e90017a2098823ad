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
  MemoryProblem m;
  m.op = MemoryOp::eltwise;
  m.elems = elems;
  m.inputs = 1;
  Layer l;
  l.problem = m;
  l.dtype = to;
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
  for (Kernel& k : graph.kernels) {
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
      // Cast in, run and write in fp32; the next autocast op casts back.
      const auto& p = std::get<MemoryProblem>(k.layer->problem);
      const int64_t read = p.elems_read(), written = p.elems_written();
      out.push_back(cast_kernel(k, "/cast_fp32", read, half, DType::fp32));
      k.layer->dtype = DType::fp32;
      for (auto& w : k.writes) {
        w.dtype = DType::fp32;
        w.bytes *= 2;
      }
      Kernel back = cast_kernel(k, "/cast_back", written, DType::fp32, half);
      out.push_back(std::move(k));
      out.push_back(std::move(back));
      continue;
    }
    out.push_back(std::move(k));
  }
  graph.kernels = std::move(out);
}

}  // namespace tilewave
