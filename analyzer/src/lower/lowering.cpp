// docs/model.md "Fusion" describes both execution models.
#include "tilewave/lowering.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "framework_ops.h"
#include "tilewave/op_registry.h"

namespace tilewave {

std::optional<Fusion> parse_fusion(const std::string& s) {
  if (s == "none") return Fusion::none;
  if (s == "trt") return Fusion::trt;
  return std::nullopt;
}

const char* fusion_name(Fusion f) { return f == Fusion::none ? "none" : "trt"; }

namespace {

bool produces_only_static(const Model& model, const Node& n) {
  for (const auto& out : n.outputs)
    if (!out.empty() && !model.static_tensors.count(out)) return false;
  return !n.outputs.empty();
}

const OpRule* rule_for(const Node& n) { return OpRegistry::builtin().find(n.domain, n.op_type); }

// Lowers one node alone: a kernel, or nullopt for a node with no GPU work.
std::optional<Kernel> lower_node(const Model& model, const Node& n, DType dtype) {
  if (produces_only_static(model, n)) return std::nullopt;  // folded at load time
  Kernel k;
  k.name = n.name;
  k.ops = n.op_type;
  k.nodes = {n.index};
  const OpRule* rule = rule_for(n);
  if (!rule) {
    k.unmodelled_reason = fmt::format("no cost rule for op '{}{}' (opset {})",
                                      n.domain.empty() ? "" : n.domain + ".", n.op_type, model.opset(n.domain));
    return k;
  }
  try {
    k.layer = rule->lower(LowerContext{model, n, dtype});
  } catch (const Unmodelled& e) {
    k.unmodelled_reason = e.what();
    return k;
  }
  if (!k.layer) return std::nullopt;
  return k;
}

FusionRole role_of(const Node& n) {
  const OpRule* r = rule_for(n);
  return r ? r->role : FusionRole::opaque;
}

// TensorRT-style fusion (docs/model.md "Fusion"): a GEMM-like head or an
// elementwise node absorbs the elementwise consumers that follow it, while
// each absorbed node is the only consumer of the value it extends and every
// other operand is ready before the head starts.
class TrtFuser {
 public:
  TrtFuser(const Model& m, const LayerGraph& g, DType d) : model_(m), graph_(g), dtype_(d) {
    for (const auto& n : m.nodes)
      for (const auto& out : n.outputs) producer_[out] = n.index;
  }

  Lowering run() {
    Lowering out;
    std::vector<bool> taken(model_.nodes.size(), false);
    for (int idx : graph_.topo_order) {
      if (taken[idx]) continue;
      const Node& head = model_.nodes[idx];
      std::optional<Kernel> k = lower_node(model_, head, dtype_);
      if (!k) {
        ++out.free_nodes;
        continue;
      }
      const FusionRole role = role_of(head);
      if (k->layer && (role == FusionRole::gemm || role == FusionRole::elementwise)) absorb(*k, idx, role, taken);
      out.kernels.push_back(std::move(*k));
    }
    return out;
  }

 private:
  void absorb(Kernel& k, int head, FusionRole head_role, std::vector<bool>& taken) {
    int tail = head;
    bool residual_used = false;
    std::vector<std::string> chain_inputs = model_.nodes[head].inputs;
    for (;;) {
      const Node& t = model_.nodes[tail];
      if (t.outputs.size() != 1) return;
      auto consumers = graph_.consumers_of(tail);
      if (model_.is_output(t.outputs[0])) return;
      if (consumers.size() == 2 && absorb_gate(k, tail, consumers, taken)) {
        tail = k.nodes.back();
        continue;
      }
      if (consumers.size() != 1) return;
      const Node& next = model_.nodes[consumers[0]];
      if (role_of(next) != FusionRole::elementwise || produces_only_static(model_, next)) return;
      // Every other operand of `next` must exist before the head runs.
      const int64_t full = model_.numel(next.outputs.empty() ? "" : next.outputs[0]);
      int64_t extra = 0;
      int full_size_operands = 0;
      for (const auto& in : next.inputs) {
        if (in.empty() || in == t.outputs[0]) continue;
        if (!ready_before(in, head)) return;
        const int64_t n = model_.numel(in);
        if (n < 0) return;
        if (n >= full) ++full_size_operands;
        extra += n * dtype_bytes(dtype_);
      }
      if (head_role == FusionRole::gemm) {
        // An epilogue takes one residual operand at most.
        if (full_size_operands > 1 || (full_size_operands == 1 && residual_used)) return;
        residual_used = residual_used || full_size_operands == 1;
        k.layer->extra_bytes += extra;
      } else {
        auto& m = std::get<MemoryProblem>(k.layer->problem);
        if (full != m.elems) return;  // a chain keeps one output size
        m.inputs += full_size_operands;
        k.layer->extra_bytes += extra - full_size_operands * full * dtype_bytes(dtype_);
      }
      taken[next.index] = true;
      k.nodes.push_back(next.index);
      k.ops += "+" + next.op_type;
      tail = next.index;
    }
  }

  // x * sigmoid(x) (SiLU) and x * hardsigmoid(x) (HardSwish) are one
  // activation to TensorRT, though x feeds two nodes.
  bool absorb_gate(Kernel& k, int tail, const std::vector<int>& consumers, std::vector<bool>& taken) {
    const std::string& x = model_.nodes[tail].outputs[0];
    for (int g = 0; g < 2; ++g) {
      const Node& gate = model_.nodes[consumers[g]];
      const Node& mul = model_.nodes[consumers[1 - g]];
      if ((gate.op_type != "Sigmoid" && gate.op_type != "HardSigmoid") || mul.op_type != "Mul") continue;
      const auto gate_users = graph_.consumers_of(gate.index);
      if (gate_users.size() != 1 || gate_users[0] != mul.index || gate.outputs.size() != 1) continue;
      const bool reads_both = (mul.inputs[0] == x && mul.inputs[1] == gate.outputs[0]) ||
                              (mul.inputs[1] == x && mul.inputs[0] == gate.outputs[0]);
      if (!reads_both) continue;
      for (const Node* n : {&gate, &mul}) {
        taken[n->index] = true;
        k.nodes.push_back(n->index);
        k.ops += "+" + n->op_type;
      }
      return true;
    }
    return false;
  }

  bool ready_before(const std::string& tensor, int head) const {
    if (model_.static_tensors.count(tensor)) return true;
    auto it = producer_.find(tensor);
    if (it == producer_.end()) return true;  // a graph input
    return graph_.topo_rank[it->second] < graph_.topo_rank[head];
  }

  const Model& model_;
  const LayerGraph& graph_;
  DType dtype_;
  std::unordered_map<std::string, int> producer_;
};

// One framework op's nodes as one kernel: an activation reads its input and
// writes its output once; a Linear is its GEMM plus a bias epilogue.
std::optional<Kernel> lower_framework_op(const Model& model, const FrameworkOp& op, DType dtype) {
  std::optional<Kernel> k = lower_node(model, model.nodes[op.nodes[0]], dtype);
  if (!k || !k->layer) return k;
  for (size_t i = 1; i < op.nodes.size(); ++i) {
    const Node& n = model.nodes[op.nodes[i]];
    k->nodes.push_back(n.index);
    k->ops += "+" + n.op_type;
  }
  if (op.kind == FrameworkOp::Kind::activation) {
    if (auto* m = std::get_if<MemoryProblem>(&k->layer->problem)) m->inputs = 1;
  } else {
    const Node& add = model.nodes[op.nodes[1]];
    for (const auto& in : add.inputs)
      if (model.static_tensors.count(in)) k->layer->extra_bytes += model.numel(in) * dtype_bytes(dtype);
  }
  return k;
}

}  // namespace

Lowering lower_model(const Model& model, const LayerGraph& graph, Fusion fusion, DType dtype) {
  if (fusion == Fusion::trt) return TrtFuser(model, graph, dtype).run();
  const std::vector<FrameworkOp> framework_ops = find_framework_ops(model, graph);
  std::unordered_map<int, const FrameworkOp*> group_of;
  for (const auto& op : framework_ops)
    for (int i : op.nodes) group_of[i] = &op;
  Lowering out;
  for (int idx : graph.topo_order) {
    auto g = group_of.find(idx);
    if (g != group_of.end() && g->second->nodes[0] != idx) continue;  // lowered with its head
    auto k = g != group_of.end() ? lower_framework_op(model, *g->second, dtype)
                                 : lower_node(model, model.nodes[idx], dtype);
    if (k) out.kernels.push_back(std::move(*k));
    else ++out.free_nodes;
  }
  return out;
}

}  // namespace tilewave
