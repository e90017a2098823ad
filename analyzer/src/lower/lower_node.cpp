#include "lower_node.h"

#include "tilewave/error.h"

#include "attention_fusion.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include "tilewave_onnx.pb.h"

namespace tilewave {

bool LowerInput::folded(const std::string& tensor) const {
  return model.static_tensors.count(tensor) &&
         (exec.runtime_profile().folds_weight_subgraphs() || !model.weight_computed.count(tensor));
}

bool produces_only_folded(const LowerInput& in, const Node& n) {
  for (const auto& out : n.outputs)
    if (!out.empty() && !in.folded(out)) return false;
  return !n.outputs.empty();
}

FusionRole role_of(const LowerInput& in, const Node& n) {
  const OpRule* r = in.registry.find(n.domain, n.op_type);
  return r ? r->role : FusionRole::opaque;
}

std::optional<Kernel> lower_node_uncached(const LowerInput& in, const Node& n);

std::optional<Kernel> lower_node(const LowerInput& in, const Node& n) {
  if (!in.node_kernels) return lower_node_uncached(in, n);
  auto& slot = (*in.node_kernels)[size_t(n.index)];
  if (!slot) slot = lower_node_uncached(in, n);
  return *slot;
}

namespace {
// Whether every reader of `tensor`, through permutes, splits and squeezes,
// is a node of a fused attention chain (or reads only its shape). `budget`
// bounds the readers visited: a hostile graph fans out without end.
bool only_feeds_fused_attention(const LowerInput& in, const std::string& tensor, int depth, int& budget) {
  const auto& readers = in.model.readers_of(tensor);
  if (readers.empty() || depth > 8 || in.model.is_output(tensor)) return false;
  for (const TensorRead& r : readers) {
    if (--budget < 0) return false;
    if (in.attention->chain_of(r.node)) continue;
    const Node& next = in.model.nodes[size_t(r.node)];
    if (next.domain.empty() && (next.op_type == "Shape" || next.op_type == "Size")) continue;  // reads no values
    static const std::set<std::string> passes = {"Transpose", "Split", "Squeeze", "Unsqueeze"};
    if (!next.domain.empty() || !passes.count(next.op_type)) return false;
    for (const auto& out : next.outputs)
      if (!out.empty() && !only_feeds_fused_attention(in, out, depth + 1, budget)) return false;
  }
  return true;
}
}  // namespace

std::optional<Kernel> lower_node_uncached(const LowerInput& in, const Node& n) {
  if (produces_only_folded(in, n)) return std::nullopt;  // folded at load or build time
  // Eager's permute and unbind are views, and scaled_dot_product_attention
  // takes q, k and v strided as they leave them: a ViT's qkv split launches
  // nothing (docs/model.md "Framework ops").
  if (in.attention && in.exec.runtime_profile().copies_permuted_views() && n.domain.empty() &&
      (n.op_type == "Transpose" || n.op_type == "Split") && !n.outputs.empty()) {
    bool feeds = true;
    int budget = 256;
    for (const auto& out : n.outputs) feeds = feeds && (out.empty() || only_feeds_fused_attention(in, out, 0, budget));
    if (feeds) return std::nullopt;
    // Its output is laid out [batch, tokens, heads, d]: moving the heads back
    // past the tokens makes it contiguous.
    const Node* p = n.inputs.empty() ? nullptr : in.model.producer_of(n.inputs[0]);
    const AttentionChain* c = p ? in.attention->chain_of(p->index) : nullptr;
    if (n.op_type == "Transpose" && c && c->nodes.back() == p->index &&
        attr_ints(n, "perm") == std::vector<int64_t>{0, 2, 1, 3})
      return std::nullopt;
  }
  if (const AttentionChain* c = in.attention ? in.attention->chain_of(n.index) : nullptr) {
    // Launched where its P V product stands, after every operand (V may be
    // produced after the head); named after its head.
    if (c->nodes.back() != n.index) return std::nullopt;
    Kernel k;
    k.name = in.model.nodes[size_t(c->nodes.front())].name;
    k.ops = RuntimeStep::attention;
    k.nodes = c->nodes;
    k.compute = true;
    Layer l;
    l.problem = c->problem;
    l.dtype = in.dtype;
    k.layer = l;
    return k;
  }
  Kernel k;
  k.name = n.name;
  k.ops = KernelOps(n.op_type);
  k.nodes = {n.index};
  const OpRule* rule = in.registry.find(n.domain, n.op_type);
  // An op tilewave does not know is taken as compute when its name says so
  // (QOrderedMatMul, DeformConv …), so that leaving it out is an error.
  k.compute = in.registry.is_compute(n.domain, n.op_type);
  if (!rule) {
    k.unmodelled_reason = fmt::format("no cost rule for op '{}{}' (opset {})",
                                      n.domain.empty() ? "" : n.domain + ".", n.op_type, in.model.opset(n.domain));
    const std::string inner = in.registry.compute_in_subgraphs(n);
    if (!inner.empty()) {
      k.compute = true;
      k.unmodelled_reason += fmt::format("; its subgraph holds {}, compute tilewave does not model inside control flow",
                                         inner);
    }
    return k;
  }
  try {
    k.layer = rule->lower(LowerContext{in.model, n, in.dtype, in.exec.activation_layout(),
                                       in.exec.runtime_profile().copies_permuted_views(), &in.registry,
                                       in.exec.runtime_profile().aten_resample_kernels()});
  } catch (const Unmodelled& e) {
    k.unmodelled_reason = e.what();
    return k;
  }
  if (k.layer && !layer_within_limits(*k.layer))
    throw InputError(in.model.path, fmt::format("node '{}' ({}): its FLOPs or bytes exceed 2^60, the most tilewave "
                                                "counts for one kernel; use a smaller --batch or input",
                                                n.name, n.op_type));
  if (!k.layer) return std::nullopt;
  return k;
}

namespace {
// The one run-time tensor a node reads ("" for none, "?" for several).
std::string viewed_input(const LowerInput& in, const Node& n) {
  std::string viewed;
  for (const auto& t : n.inputs)
    if (!t.empty() && !in.folded(t)) viewed = viewed.empty() ? t : "?";
  return viewed;
}
}  // namespace

bool is_view_node(const LowerInput& in, const Node& n) {
  if (produces_only_folded(in, n) || (role_of(in, n) != FusionRole::none && lower_node(in, n))) return false;
  if (in.attention && in.attention->chain_of(n.index)) return false;  // inside a fused attention kernel
  const std::string viewed = viewed_input(in, n);
  return !viewed.empty() && viewed != "?";
}

}  // namespace tilewave

namespace tilewave {

KernelEdges::KernelEdges(const LowerInput& in) : in_(in) {
  const Model& m = in.model;
  for (int idx : in.model.topo_order) {
    const Node& n = m.nodes[idx];
    // A node that launches nothing (shape ops, layout-only permutes) relabels its input.
    if (!is_view_node(in, n)) continue;
    const std::string viewed = viewed_input(in, n);
    for (const auto& out : n.outputs)
      if (!out.empty()) {
        view_of_[out] = viewed;
        views_[viewed].push_back(out);
      }
  }
}

std::string KernelEdges::source(const std::string& tensor) const {
  if (in_.folded(tensor)) return "";
  std::string t = tensor;
  for (auto it = view_of_.find(t); it != view_of_.end(); it = view_of_.find(t)) t = it->second;
  return t;
}

TensorRef KernelEdges::ref(const std::string& tensor) const {
  const std::string s = source(tensor);
  const int64_t n = in_.model.numel(tensor);
  // Activations are stored in the configuration's activation type (fp32 for
  // tf32 and PyTorch's fp32); the ref says which, beside the bytes it makes.
  const DType stored = in_.exec.activation_dtype();
  return {s, n > 0 ? n * dtype_bytes(stored) : 0, stored, in_.exec.activation_layout()};
}

std::vector<int> KernelEdges::readers(const std::string& tensor) const {
  std::vector<int> out;
  std::vector<std::string> todo = {tensor};
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    for (const TensorRead& r : in_.model.readers_of(t)) out.push_back(r.node);
    if (auto it = views_.find(t); it != views_.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
  }
  return out;
}

bool KernelEdges::is_graph_output(const std::string& tensor) const {
  if (in_.model.is_output(tensor)) return true;
  auto it = views_.find(tensor);
  if (it == views_.end()) return false;
  for (const auto& v : it->second)
    if (is_graph_output(v)) return true;
  return false;
}

void KernelEdges::derive(Kernel& k) const {
  const Model& m = in_.model;
  std::unordered_map<std::string, bool> produced;
  for (int i : k.nodes)
    for (const auto& out : m.nodes[i].outputs)
      if (!out.empty()) produced[out] = true;
  // Sets, not scans: a node may have 10,000 inputs (kMaxNodeInputs) and the
  // work must stay linear in them.
  const std::unordered_set<int> members(k.nodes.begin(), k.nodes.end());
  auto member = [&](int node) { return members.count(node) > 0; };
  std::unordered_set<std::string> seen;
  for (int i : k.nodes)
    for (const auto& t : m.nodes[i].inputs) {
      if (t.empty() || produced.count(t)) continue;
      const TensorRef r = ref(t);
      if (r.name.empty() || !seen.insert(r.name).second) continue;
      k.reads.push_back(r);
    }
  for (int i : k.nodes)
    for (const auto& out : m.nodes[i].outputs) {
      if (out.empty() || in_.folded(out)) continue;
      const auto rs = readers(out);
      const bool escapes = k.nodes.size() == 1 || is_graph_output(out) ||
                           std::any_of(rs.begin(), rs.end(), [&](int r) { return !member(r); });
      if (escapes) k.writes.push_back(ref(out));
    }
}

}  // namespace tilewave
