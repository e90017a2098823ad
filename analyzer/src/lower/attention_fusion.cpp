#include "attention_fusion.h"

#include <set>

namespace tilewave {

namespace {

// The only node reading `tensor`, the output of a single-output node; nullptr
// for none, several, or a graph output.
const Node* sole_reader(const Model& m, const std::string& tensor) {
  const Node* p = m.producer_of(tensor);
  if (!p || m.is_output(tensor)) return nullptr;
  const auto& readers = m.consumers_of(p->index);
  return readers.size() == 1 ? &m.nodes[size_t(readers[0])] : nullptr;
}

bool is_scalar_operand(const Model& m, const std::string& t) {
  const TensorInfo* info = m.tensor(t);
  return info && info->fully_known() && info->numel() == 1;
}

// Whether eager PyTorch's scaled_dot_product_attention runs its fused kernels
// for this call, from the shapes of its first product (Q, and K transposed):
// 5-D inputs and keys of one head broadcast over several query heads take the
// math path (docs/model.md "Attention"; measured by calibrate/measure/sdpa_paths.py).
bool sdpa_fuses(const Model& m, const Node& head) {
  const TensorInfo* q = m.tensor(head.inputs[0]);
  const TensorInfo* kt = m.tensor(head.inputs[1]);
  if (q->dims.size() != 4) return false;  // q is known: the chain's search required it
  return !(kt && kt->dims.size() == 4 && kt->dims[1] == 1 && q->dims[1] > 1);
}

}  // namespace

AttentionChains::AttentionChains(const Model& m, bool sdpa_only) {
  for (const auto& head : m.nodes) {
    if (head.op_type != "MatMul" || !head.domain.empty() || head.outputs.empty()) continue;
    const TensorInfo* scores = m.tensor(head.outputs[0]);
    const TensorInfo* q = m.tensor(head.inputs[0]);
    if (!scores || !scores->fully_known() || scores->dims.size() < 3 || !q || !q->fully_known()) continue;
    AttentionChain c;
    c.nodes = {head.index};
    const Node* next = sole_reader(m, head.outputs[0]);
    // Scaling and masking between the products: Mul/Div by a scalar, Add of a mask.
    while (next && (next->op_type == "Mul" || next->op_type == "Div" || next->op_type == "Add") && next->domain.empty()) {
      const std::string& other = next->inputs[0] == m.nodes[size_t(c.nodes.back())].outputs[0] ? next->inputs[1]
                                                                                                 : next->inputs[0];
      if (next->op_type != "Add" && !is_scalar_operand(m, other)) break;
      if (next->op_type == "Add" && !is_scalar_operand(m, other)) c.problem.masked = true;
      c.nodes.push_back(next->index);
      next = sole_reader(m, next->outputs[0]);
    }
    if (!next || next->op_type != "Softmax" || !next->domain.empty()) continue;
    c.nodes.push_back(next->index);
    const Node* pv = sole_reader(m, next->outputs[0]);
    // torch.onnx's guard for fully masked rows: Where(IsNaN(p), 0, p).
    if (!pv) {
      const auto& rs = m.consumers_of(next->index);
      const Node* isnan = nullptr;
      const Node* where = nullptr;
      for (int r : rs) {
        const Node& rn = m.nodes[size_t(r)];
        if (rn.op_type == "IsNaN") isnan = &rn;
        if (rn.op_type == "Where") where = &rn;
      }
      if (rs.size() != 2 || !isnan || !where || sole_reader(m, isnan->outputs[0]) != where) continue;
      c.nodes.push_back(isnan->index);
      c.nodes.push_back(where->index);
      pv = sole_reader(m, where->outputs[0]);
      if (pv && pv->inputs[0] != where->outputs[0]) continue;
    } else if (pv->inputs[0] != next->outputs[0]) {
      continue;
    }
    if (!pv || pv->op_type != "MatMul") continue;
    const TensorInfo* v = m.tensor(pv->inputs[1]);
    if (!v || !v->fully_known() || v->dims.size() < 2) continue;
    c.nodes.push_back(pv->index);
    // Scalar scaling of Q or K before the first product runs inside the kernel too.
    int prescaled = 0;
    for (const auto& operand : head.inputs) {
      const Node* p = m.producer_of(operand);
      if (!p || p->op_type != "Mul" || !p->domain.empty() || sole_reader(m, operand) != &head) continue;
      if (is_scalar_operand(m, p->inputs[0]) || is_scalar_operand(m, p->inputs[1])) {
        c.nodes.insert(c.nodes.begin() + 1, p->index);  // the P V product stays last: the kernel launches there
        ++prescaled;
      }
    }
    c.sdpa_export = prescaled == 2;
    if (sdpa_only && !(c.sdpa_export && sdpa_fuses(m, head))) continue;
    const auto& s = scores->dims;
    c.problem.q_len = s[s.size() - 2];
    c.problem.kv_len = s.back();
    c.problem.batch_heads = scores->numel() / (c.problem.q_len * c.problem.kv_len);
    c.problem.head_dim = q->dims.back();
    c.problem.v_head_dim = v->dims.back();
    bool taken = false;
    for (int n : c.nodes) taken = taken || member_.count(n);
    if (taken) continue;
    for (int n : c.nodes) member_[n] = chains_.size();
    chains_.push_back(std::move(c));
  }
}

const AttentionChain* AttentionChains::chain_of(int node) const {
  auto it = member_.find(node);
  return it == member_.end() ? nullptr : &chains_[it->second];
}

bool AttentionChains::is_head(int node) const {
  const AttentionChain* c = chain_of(node);
  return c && c->nodes.front() == node;
}

}  // namespace tilewave
