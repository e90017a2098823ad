#include "tilewave/ir/kernel_graph.h"

namespace tilewave {

const char* host_call_name(HostCall c) {
  switch (c) {
    case HostCall::inner: return "inner";
    case HostCall::op: return "op";
    case HostCall::conv: return "conv";
    case HostCall::gemm: return "gemm";
    case HostCall::norm: return "norm";
    case HostCall::cast: return "cast";
  }
  return "?";
}

HostCall host_call_of(const Kernel& k) {
  if (k.host_call != HostCall::op || !k.layer) return k.host_call;
  const Problem& p = k.layer->problem;
  if (std::holds_alternative<ConvProblem>(p)) return HostCall::conv;
  if (std::holds_alternative<GemmProblem>(p) || std::holds_alternative<AttentionProblem>(p)) return HostCall::gemm;
  if (std::get<MemoryProblem>(p).op == MemoryOp::norm) return HostCall::norm;
  return HostCall::op;
}

Kernel derived_kernel(const Kernel& owner, const std::string& suffix, const std::string& ops, Layer layer,
                      HostCall call) {
  Kernel k;
  k.name = owner.name + suffix;
  k.ops = ops;
  k.nodes = {owner.nodes.empty() ? -1 : owner.nodes[0]};
  k.layer = std::move(layer);
  k.host_call = call;
  return k;
}

}  // namespace tilewave
