// docs/model.md "Framework ops" says which node groups are one kernel and why.
#include "framework_ops.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

#include "lower_node.h"

namespace tilewave {

namespace {

class Finder {
 public:
  explicit Finder(const LowerInput& in) : in_(in), model_(in.model) {}

  std::vector<FrameworkOp> run() {
    std::vector<FrameworkOp> out;
    std::vector<bool> used(model_.nodes.size(), false);
    for (const auto& x : model_.inputs)
      if (auto op = activation_of(x)) {
        for (int i : op->nodes) used[i] = true;
        out.push_back(std::move(*op));
      }
    for (int idx : model_.topo_order) {
      const Node& n = model_.nodes[idx];
      if (n.outputs.size() != 1) continue;
      // n's output may root an activation even when n itself joined a group.
      for (auto op : {activation_of(n.outputs[0]), used[idx] ? std::nullopt : linear_bias_at(n),
                      used[idx] ? std::nullopt : group_norm_at(n)}) {
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
      if (n && (last < 0 || model_.topo_rank[i] > model_.topo_rank[last])) last = i;
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
              [&](int a, int b) { return model_.topo_rank[a] < model_.topo_rank[b]; });
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
    // PyTorch's linear fuses the bias only for a contiguous input; a copied
    // permuted view goes through matmul and an add of its own (docs/model.md
    // "Framework ops": permuted inputs).
    if (const Node* t = model_.producer_of(mm.inputs[0]);
        t && t->op_type == "Transpose" && in_.exec.runtime_profile().copies_permuted_views() && lower_node(in_, *t))
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

  // torch.onnx's GroupNorm: Reshape to [N, G, D], InstanceNormalization
  // with constant scale and bias, Reshape back to [N, C, ...], then a Mul and
  // an Add by constants (the affine weight and bias, when present). PyTorch
  // runs it as one native_group_norm.
  std::optional<FrameworkOp> group_norm_at(const Node& norm) const {
    if (norm.op_type != "InstanceNormalization" || norm.inputs.size() != 3 || norm.outputs.size() != 1 ||
        !model_.static_tensors.count(norm.inputs[1]) || !model_.static_tensors.count(norm.inputs[2]))
      return std::nullopt;
    const TensorInfo* rows = model_.tensor(norm.inputs[0]);
    if (!rows || rows->dims.size() != 3 || rows->dims[1] <= 0) return std::nullopt;
    const Node* back = sole_reader(norm.outputs[0], "Reshape");
    if (!back || back->outputs.size() != 1) return std::nullopt;
    const TensorInfo* y = model_.tensor(back->outputs[0]);
    if (!y || y->dims.size() < 3 || y->dims[0] != rows->dims[0] || y->dims[1] <= 0 || y->dims[1] % rows->dims[1] ||
        model_.numel(back->outputs[0]) != model_.numel(norm.inputs[0]))
      return std::nullopt;
    FrameworkOp op{FrameworkOp::Kind::group_norm, {norm.index, back->index}};
    std::string tail = back->outputs[0];
    for (const char* affine : {"Mul", "Add"}) {
      const Node* a = sole_reader(tail, affine);
      if (!a || a->inputs.size() != 2 || a->outputs.size() != 1) break;
      const std::string& other = a->inputs[0] == tail ? a->inputs[1] : a->inputs[0];
      // A per-channel constant: as many values as channels, broadcast over the rest.
      if (!model_.static_tensors.count(other) || model_.numel(other) != y->dims[1] ||
          model_.numel(a->outputs[0]) != model_.numel(tail))
        break;
      op.nodes.push_back(a->index);
      tail = a->outputs[0];
    }
    return op;
  }

  // The one node reading `tensor`, when it is of `op_type` and `tensor` does not leave the graph.
  const Node* sole_reader(const std::string& tensor, const char* op_type) const {
    const auto& readers = model_.readers_of(tensor);
    if (readers.size() != 1 || model_.is_output(tensor)) return nullptr;
    const Node& r = model_.nodes[readers[0].node];
    return r.op_type == op_type ? &r : nullptr;
  }

  const LowerInput& in_;
  const Model& model_;
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
    if (auto* m = std::get_if<MemoryProblem>(&k->layer->problem)) {
      m->inputs = 1;
      m->special_functions = 0;  // one kernel evaluates every member's
      for (int i : op.nodes)
        m->special_functions += in.registry.special_functions(model.nodes[i].domain, model.nodes[i].op_type);
    }
  } else if (op.kind == FrameworkOp::Kind::group_norm) {
    if (auto* m = std::get_if<MemoryProblem>(&k->layer->problem); m && m->op == MemoryOp::row_norm)
      m->row_moments = true;
  } else {
    const Node& add = model.nodes[op.nodes[1]];
    for (const auto& in : add.inputs)
      if (model.static_tensors.count(in)) k->layer->extra_bytes += model.numel(in) * dtype_bytes(dtype);
  }
  return k;
}


// A kernel PyTorch's GroupNorm adds after the moments, reading `reads`.
Kernel group_norm_step(const Kernel& moments, const char* suffix, RuntimeStep step, int64_t elems,
                       int64_t extra_bytes, std::vector<TensorRef> reads, TensorRef write) {
  Kernel k = derived_kernel(moments, suffix, step, elementwise_layer(elems, moments.layer->dtype, extra_bytes),
                            HostCall::inner);
  k.reads = std::move(reads);
  k.writes = {std::move(write)};
  return k;
}

}  // namespace

bool is_group_norm(const Kernel& k) {
  const auto* m = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr;
  return m && m->op == MemoryOp::row_norm && m->row_moments;
}

std::vector<Kernel> group_norm_kernels(const LowerInput& in, Kernel k) {
  const Model& model = in.model;
  const auto& rows = std::get<MemoryProblem>(k.layer->problem);
  // The group's nodes by their ops (group_norm_at): the Reshape back to
  // [N, C, ...] gives images and channels; each Mul or Add is an affine
  // parameter of one value per channel.
  const Node* back = nullptr;
  int64_t affine = 0;
  for (int i : k.nodes) {
    const Node& n = model.nodes[size_t(i)];
    if (n.op_type == "Reshape") back = &n;
    affine += n.op_type == "Mul" || n.op_type == "Add";
  }
  if (!back) throw std::logic_error("group_norm_kernels: no Reshape in the GroupNorm's nodes");
  const auto& out_dims = model.tensor(back->outputs[0])->dims;
  const int64_t images = out_dims[0], channels = out_dims[1];
  const int64_t elems = rows.outer * rows.inner;
  const int64_t elem_bytes = dtype_bytes(k.layer->dtype);
  const TensorRef x = k.reads.empty() ? TensorRef{} : k.reads[0];
  const TensorRef y = k.writes.empty() ? TensorRef{} : k.writes[0];
  const TensorRef moments{x.name + "#moments", 2 * rows.outer * elem_bytes, k.layer->dtype, x.layout};
  const TensorRef scale_shift{y.name + "#scale_shift", 2 * images * channels * elem_bytes, k.layer->dtype, y.layout};
  Kernel params = group_norm_step(k, "/scale_shift", RuntimeStep::norm_params, images * channels,
                                  2 * rows.outer * elem_bytes + affine * channels * elem_bytes, {moments}, scale_shift);
  Kernel apply = group_norm_step(k, "/apply", RuntimeStep::norm_apply, elems, 2 * images * channels * elem_bytes,
                                 {x, scale_shift}, y);
  k.writes = {moments};
  // The moments kernel runs the normalization's nodes; the affine Mul and Add
  // are applied by `apply`, whose label is its step.
  KernelOps moments_ops;
  for (int i : k.nodes) {
    const std::string& op = model.nodes[size_t(i)].op_type;
    if (op != "Mul" && op != "Add") moments_ops.add(op);
  }
  k.ops = std::move(moments_ops);
  std::vector<Kernel> out;
  out.push_back(std::move(k));
  out.push_back(std::move(params));
  out.push_back(std::move(apply));
  return out;
}

std::vector<FrameworkOp> find_framework_ops(const LowerInput& in) { return Finder(in).run(); }

KernelGraph lower_framework_ops(const LowerInput& in) {
  const std::vector<FrameworkOp> framework_ops = find_framework_ops(in);
  std::unordered_map<int, const FrameworkOp*> group_of;
  for (const auto& op : framework_ops)
    for (int i : op.nodes) group_of[i] = &op;
  KernelGraph out;
  int views = 0;  // issued by the host before the next kernel
  for (int idx : in.model.topo_order) {
    auto g = group_of.find(idx);
    if (g != group_of.end() && g->second->nodes[0] != idx) continue;  // lowered with its head
    auto k = g != group_of.end() ? lower_framework_op(in, *g->second) : lower_node(in, in.model.nodes[idx]);
    if (k) {
      k->host_views = std::exchange(views, 0);
      out.kernels.push_back(std::move(*k));
    } else {
      ++out.free_nodes;
      views += g == group_of.end() && is_view_node(in, in.model.nodes[idx]);
    }
  }
  // Views after the last kernel still take the host's time; counted with that kernel.
  if (!out.kernels.empty()) out.kernels.back().host_views += views;
  return out;
}

}  // namespace tilewave
