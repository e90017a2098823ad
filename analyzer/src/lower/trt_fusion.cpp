// docs/model.md "Runtimes", tensorrt: epilogue and elementwise-chain fusion.
#include "trt_fusion.h"

#include <unordered_map>

#include "lower_node.h"

namespace tilewave {

namespace {

// TensorRT-style fusion (docs/model.md "Runtimes"): a GEMM-like head or an
// elementwise node absorbs the elementwise consumers that follow it, while
// each absorbed node is the only consumer of the value it extends and every
// other operand is ready before the head starts.
class TrtFuser {
 public:
  TrtFuser(const LowerInput& in) : in_(in), model_(in.model), dtype_(in.dtype) {}

  KernelGraph run() {
    KernelGraph out;
    std::vector<bool> taken(model_.nodes.size(), false);
    for (int idx : model_.topo_order) {
      if (taken[idx]) continue;
      const Node& head = model_.nodes[idx];
      // Explicit quantization: TensorRT folds QuantizeLinear/DequantizeLinear
      // into the int8 kernels around them (docs/model.md "Quantized graphs and other op families").
      if (in_.registry.has_trait(head.domain, head.op_type, op_trait::quantize_boundary)) {
        ++out.free_nodes;
        continue;
      }
      std::optional<Kernel> k = lower_node(in_, head);
      if (!k) {
        ++out.free_nodes;
        continue;
      }
      const FusionRole role = role_of(in_, head);
      if (k->layer && (role == FusionRole::gemm || role == FusionRole::elementwise)) absorb(*k, idx, role, taken);
      out.kernels.push_back(std::move(*k));
    }
    return out;
  }

 private:
  void absorb(Kernel& k, int head, FusionRole head_role, std::vector<bool>& taken) {
    int tail = k.nodes.back();  // a fused attention kernel ends at its P V product
    bool residual_used = false;
    std::vector<std::string> chain_inputs = model_.nodes[head].inputs;
    for (;;) {
      const Node& t = model_.nodes[tail];
      if (t.outputs.size() != 1) return;
      auto consumers = model_.consumers_of(tail);
      if (model_.is_output(t.outputs[0])) return;
      if (consumers.size() == 2 && absorb_gate(k, tail, consumers, taken)) {
        tail = k.nodes.back();
        continue;
      }
      if (consumers.size() != 1) return;
      const Node& next = model_.nodes[consumers[0]];
      if (role_of(in_, next) != FusionRole::elementwise || produces_only_folded(in_, next)) return;
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
        auto* m = std::get_if<MemoryProblem>(&k.layer->problem);
        if (!m || full != m->elems) return;  // a chain keeps one output size
        m->inputs += full_size_operands;
        k.layer->extra_bytes += extra - full_size_operands * full * dtype_bytes(dtype_);
      }
      taken[next.index] = true;
      k.nodes.push_back(next.index);
      k.ops.add(next.op_type);
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
      const auto gate_users = model_.consumers_of(gate.index);
      if (gate_users.size() != 1 || gate_users[0] != mul.index || gate.outputs.size() != 1) continue;
      const bool reads_both = (mul.inputs[0] == x && mul.inputs[1] == gate.outputs[0]) ||
                              (mul.inputs[1] == x && mul.inputs[0] == gate.outputs[0]);
      if (!reads_both) continue;
      for (const Node* n : {&gate, &mul}) {
        taken[n->index] = true;
        k.nodes.push_back(n->index);
        k.ops.add(n->op_type);
      }
      return true;
    }
    return false;
  }

  bool ready_before(const std::string& tensor, int head) const {
    if (in_.folded(tensor)) return true;
    auto it = model_.producer.find(tensor);
    if (it == model_.producer.end()) return true;  // a graph input
    return model_.topo_rank[it->second] < model_.topo_rank[head];
  }

  const LowerInput& in_;
  const Model& model_;
  DType dtype_;
};

}  // namespace

KernelGraph fuse_trt(const LowerInput& in) { return TrtFuser(in).run(); }

}  // namespace tilewave
