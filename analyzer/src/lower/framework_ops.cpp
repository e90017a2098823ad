// docs/model.md "Framework ops" says which node groups are one kernel and why.
#include "framework_ops.h"

#include <algorithm>
#include <set>

#include "lower_node.h"

namespace tilewave {

namespace {

class Finder {
 public:
  explicit Finder(const LowerInput& in) : in_(in), model_(in.model), graph_(in.graph) {}

  std::vector<FrameworkOp> run() {
    std::vector<FrameworkOp> out;
    std::vector<bool> used(model_.nodes.size(), false);
    for (const auto& x : model_.inputs)
      if (auto op = activation_of(x)) {
        for (int i : op->nodes) used[i] = true;
        out.push_back(std::move(*op));
      }
    for (int idx : graph_.topo_order) {
      const Node& n = model_.nodes[idx];
      if (n.outputs.size() != 1) continue;
      // n's output may root an activation even when n itself joined a group.
      for (auto op : {activation_of(n.outputs[0]), used[idx] ? std::nullopt : linear_bias_at(n)}) {
        if (!op || std::any_of(op->nodes.begin(), op->nodes.end(), [&](int i) { return used[i]; })) continue;
        for (int i : op->nodes) used[i] = true;
        out.push_back(std::move(*op));
      }
    }
    return out;
  }

 private:
  // An activation written as elementwise nodes of one tensor x (GELU,
  // SiLU, Mish, decomposed HardSwish): the elementwise nodes, reading only x,
  // static operands and each other, that lead to the last node reading x,
  // plus a trailing scale by a constant (GELU's 0.5, HardSwish's 1/6). x must
  // be read twice and only the last node's value may leave the group. A plain
  // chain of activations reads x once and stays one kernel per node.
  std::optional<FrameworkOp> activation_of(const std::string& x) const {
    if (in_.folded(x)) return std::nullopt;
    const int64_t size = model_.numel(x);
    if (size <= 0) return std::nullopt;
    // x must be read at least twice (below): a plain chain stops here, which
    // keeps the grouping linear in the graph's size.
    // The model's readers hold a node once per input slot that reads x, so
    // their count is the count of reads (counting through each reader's
    // inputs was quadratic in a Sum of 10,000 graph inputs).
    if (model_.readers_of(x).size() < 2) return std::nullopt;
    // Every elementwise node reachable from x through such nodes. A node left
    // out now may join once another of its inputs is inside: it is looked at
    // again whenever one of its inputs joins.
    std::set<std::string> inside = {x};
    std::set<int> reach;
    std::vector<std::string> todo = {x};
    while (!todo.empty()) {
      const std::string t = todo.back();
      todo.pop_back();
      for (const TensorRead& r : model_.readers_of(t))
        if (!reach.count(r.node) && joins(model_.nodes[r.node], inside, size)) {
          reach.insert(r.node);
          inside.insert(model_.nodes[r.node].outputs[0]);
          todo.push_back(model_.nodes[r.node].outputs[0]);
        }
    }
    int last = -1, reads_of_x = 0;
    for (int i : reach) {
      const auto& in = model_.nodes[i].inputs;
      const int n = static_cast<int>(std::count(in.begin(), in.end(), x));
      reads_of_x += n;
      if (n && (last < 0 || graph_.topo_rank[i] > graph_.topo_rank[last])) last = i;
    }
    if (reads_of_x < 2) return std::nullopt;
    std::set<int> group = ancestors_within(last, reach, x);
    for (int tail = last;;) {  // a trailing constant scale
      const auto& readers = model_.readers_of(model_.nodes[tail].outputs[0]);
      if (readers.size() != 1 || !reach.count(readers[0].node)) break;
      const Node& c = model_.nodes[readers[0].node];
      const bool scales = c.inputs.size() == 2 && (in_.folded(c.inputs[0]) || in_.folded(c.inputs[1]));
      if (!scales || (c.op_type != "Mul" && c.op_type != "Div")) break;
      group.insert(c.index);
      tail = c.index;
    }
    std::vector<int> members(group.begin(), group.end());
    int escaping = 0;
    for (int i : members) {
      const std::string& out = model_.nodes[i].outputs[0];
      const auto& readers = model_.readers_of(out);
      escaping += (model_.is_output(out) ||
                   std::any_of(readers.begin(), readers.end(), [&](const TensorRead& r) { return !group.count(r.node); }))
                      ? 1
                      : 0;
    }
    if (members.size() < 2 || escaping != 1) return std::nullopt;
    std::sort(members.begin(), members.end(),
              [&](int a, int b) { return graph_.topo_rank[a] < graph_.topo_rank[b]; });
    return FrameworkOp{FrameworkOp::Kind::activation, members};
  }

  // `node` and the nodes of `within` it depends on, back to x.
  std::set<int> ancestors_within(int node, const std::set<int>& within, const std::string& x) const {
    std::set<int> out = {node};
    std::vector<int> todo = {node};
    while (!todo.empty()) {
      const Node& n = model_.nodes[todo.back()];
      todo.pop_back();
      for (const auto& in : n.inputs) {
        if (in.empty() || in == x) continue;
        for (int p : within)
          if (model_.nodes[p].outputs[0] == in && out.insert(p).second) todo.push_back(p);
      }
    }
    return out;
  }

  bool joins(const Node& c, const std::set<std::string>& inside, int64_t size) const {
    if (role_of(in_, c) != FusionRole::elementwise || c.outputs.size() != 1 || model_.numel(c.outputs[0]) != size) return false;
    return std::all_of(c.inputs.begin(), c.inputs.end(), [&](const std::string& in) {
      return in.empty() || inside.count(in) || in_.folded(in);
    });
  }

  // MatMul by a constant weight followed by the Add of a constant bias
  // vector: nn.Linear on a >2-D input, one GEMM with a bias epilogue.
  std::optional<FrameworkOp> linear_bias_at(const Node& mm) const {
    if (mm.op_type != "MatMul" || mm.inputs.size() != 2 || !model_.static_tensors.count(mm.inputs[1]))
      return std::nullopt;
    const auto& readers = model_.readers_of(mm.outputs[0]);
    if (readers.size() != 1 || model_.is_output(mm.outputs[0])) return std::nullopt;
    const Node& add = model_.nodes[readers[0].node];
    if (add.op_type != "Add" || add.inputs.size() != 2) return std::nullopt;
    const std::string& bias = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
    const TensorInfo* w = model_.tensor(mm.inputs[1]);
    if (!model_.static_tensors.count(bias) || !w || w->dims.empty() || model_.numel(bias) != w->dims.back())
      return std::nullopt;
    return FrameworkOp{FrameworkOp::Kind::linear_bias, {mm.index, add.index}};
  }

  const LowerInput& in_;
  const Model& model_;
  const NodeGraph& graph_;
};

// One framework op's nodes as one kernel: an activation reads its input and
// writes its output once; a Linear is its GEMM plus a bias epilogue.
std::optional<Kernel> lower_framework_op(const LowerInput& in, const FrameworkOp& op) {
  const Model& model = in.model;
  const DType dtype = in.dtype;
  std::optional<Kernel> k = lower_node(in, model.nodes[op.nodes[0]]);
  if (!k || !k->layer) return k;
  for (size_t i = 1; i < op.nodes.size(); ++i) {
    const Node& n = model.nodes[op.nodes[i]];
    k->nodes.push_back(n.index);
    k->ops.add(n.op_type);
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

std::vector<FrameworkOp> find_framework_ops(const LowerInput& in) { return Finder(in).run(); }

KernelGraph lower_framework_ops(const LowerInput& in) {
  const std::vector<FrameworkOp> framework_ops = find_framework_ops(in);
  std::unordered_map<int, const FrameworkOp*> group_of;
  for (const auto& op : framework_ops)
    for (int i : op.nodes) group_of[i] = &op;
  KernelGraph out;
  for (int idx : in.graph.topo_order) {
    auto g = group_of.find(idx);
    if (g != group_of.end() && g->second->nodes[0] != idx) continue;  // lowered with its head
    auto k = g != group_of.end() ? lower_framework_op(in, *g->second) : lower_node(in, in.model.nodes[idx]);
    if (k) out.kernels.push_back(std::move(*k));
    else ++out.free_nodes;
  }
  return out;
}

}  // namespace tilewave
