#include "pointwise_fusion.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "conv_kernels.h"

namespace tilewave {

namespace {

// Index-remapping ops inductor writes as loads at other positions (their registry trait).
bool is_remap(const LowerInput& in, const Node& n) {
  return in.registry.has_trait(n.domain, n.op_type, op_trait::index_remap);
}

struct Group {
  std::vector<int> members;      // nodes, in topological order
  std::vector<int> bias_of;      // convs whose bias the group applies
  std::vector<TensorRef> raw;    // their raw outputs, which it reads
  bool has_reduction = false;
  std::set<std::string> produced;
  // Nodes not in the group reading what it produces, as (topological rank,
  // node): can_fuse looks only at those ranked before the joining node.
  std::set<std::pair<int, int>> outside_readers;
  int last_rank = -1;
};

class Fuser {
 public:
  Fuser(const LowerInput& in, const KernelEdges& edges) : in_(in), m_(in.model), edges_(edges) {}

  KernelGraph run() {
    KernelGraph out;
    std::vector<std::pair<double, Kernel>> placed;  // launch position, kernel
    for (int idx : in_.model.topo_order) {
      const Node& n = m_.nodes[idx];
      const double rank = in_.model.topo_rank[idx];
      const FusionRole role = role_of(in_, n);
      const bool fusible = role == FusionRole::elementwise || role == FusionRole::reduction || is_remap(in_, n);
      std::optional<Kernel> k = lower_node(in_, n);
      if (!k) {
        ++out.free_nodes;
        continue;
      }
      if (fusible && k->layer) {
        join(idx, role == FusionRole::reduction);
        continue;
      }
      edges_.derive(*k);
      if (role == FusionRole::gemm && k->layer && std::holds_alternative<ConvProblem>(k->layer->problem)) {
        for (auto& pad : channel_padding_kernels(in_, edges_, *k)) placed.emplace_back(rank - 0.5, std::move(pad));
        if (conv_has_bias(n)) open_bias_group(idx, *k);
      }
      placed.emplace_back(rank, std::move(*k));
    }
    for (const Group& g : groups_)
      if (!g.members.empty() || !g.bias_of.empty()) placed.emplace_back(g.last_rank + 0.25, kernel_of(g));
    std::stable_sort(placed.begin(), placed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [pos, k] : placed) out.kernels.push_back(std::move(k));
    return out;
  }

 private:
  // The conv kernel writes its raw output; the group applying the bias reads it.
  void open_bias_group(int conv, Kernel& k) {
    Group g;
    g.bias_of = {conv};
    g.last_rank = in_.model.topo_rank[conv];
    raw_output(k);
    if (!k.writes.empty()) g.raw = {k.writes[0]};
    group_of_[conv] = int(groups_.size());
    add_produced(g, int(groups_.size()), m_.nodes[conv].outputs[0]);
    groups_.push_back(g);
  }

  void add_produced(Group& g, int id, const std::string& t) {
    g.produced.insert(t);
    for (int r : edges_.readers(t)) {
      auto at = group_of_.find(r);
      if (at == group_of_.end() || at->second != id) g.outside_readers.insert({in_.model.topo_rank[r], r});
    }
  }

  // Whether node r joined group g as a member (a conv whose bias g applies is in g but no member).
  bool member_of(int r, int g) const {
    if (!joined_.count(r)) return false;
    auto at = group_of_.find(r);
    return at != group_of_.end() && at->second == g;
  }

  // The open group producing `tensor`, or -1.
  int group_producing(const std::string& tensor) const {
    const std::string src = edges_.source(tensor);
    auto p = m_.producer.find(src);
    if (p == m_.producer.end()) return -1;
    auto g = group_of_.find(p->second);
    return g == group_of_.end() ? -1 : g->second;
  }

  // Can `n` run inside one kernel with the nodes of `gs`? Every value they
  // produce must be needed by nobody that runs before `n`. Each group keeps
  // its outside readers by rank, so this costs the number of those ranked
  // before n, not the group's size nor all its readers (a Split of 8,000
  // parts, each read by its own node, was quadratic: issue 32).
  bool can_fuse(const std::vector<int>& gs, int n) const {
    const int rank_n = in_.model.topo_rank[n];
    for (int g : gs)
      for (const auto& [rank, r] : groups_[g].outside_readers) {
        if (rank >= rank_n) break;
        auto at = group_of_.find(r);
        const bool in_gs = at != group_of_.end() && std::find(gs.begin(), gs.end(), at->second) != gs.end() &&
                           member_of(r, at->second);
        if (!in_gs) return false;
      }
    return true;
  }

  void join(int n, bool reduction) {
    std::vector<int> candidates;
    for (const auto& t : m_.nodes[n].inputs) {
      if (t.empty() || in_.folded(t)) continue;
      const int g = group_producing(t);
      if (g >= 0 && !groups_[g].has_reduction && std::find(candidates.begin(), candidates.end(), g) == candidates.end())
        candidates.push_back(g);
    }
    std::vector<int> chosen;
    if (!candidates.empty() && can_fuse(candidates, n)) chosen = candidates;
    else
      for (int g : candidates)
        if (can_fuse({g}, n)) {
          chosen = {g};
          break;
        }
    int target;
    if (chosen.empty()) {
      target = int(groups_.size());
      groups_.push_back({});
    } else {
      target = chosen[0];
      for (size_t i = 1; i < chosen.size(); ++i) merge(target, chosen[i]);
    }
    Group& g = groups_[target];
    g.members.push_back(n);
    g.has_reduction = g.has_reduction || reduction;
    g.last_rank = std::max(g.last_rank, in_.model.topo_rank[n]);
    group_of_[n] = target;
    joined_.insert(n);
    g.outside_readers.erase({in_.model.topo_rank[n], n});
    for (const auto& out : m_.nodes[n].outputs)
      if (!out.empty()) add_produced(g, target, out);
  }

  void merge(int into, int from) {
    Group& a = groups_[into];
    Group& b = groups_[from];
    for (int n : b.members) group_of_[n] = into;
    for (int c : b.bias_of) group_of_[c] = into;
    a.bias_of.insert(a.bias_of.end(), b.bias_of.begin(), b.bias_of.end());
    a.raw.insert(a.raw.end(), b.raw.begin(), b.raw.end());
    a.members.insert(a.members.end(), b.members.begin(), b.members.end());
    a.produced.insert(b.produced.begin(), b.produced.end());
    // Readers of either part that are now members are no longer outside:
    // b's members among a's readers, a's members among b's. Costs b's size.
    for (int n : b.members) a.outside_readers.erase({in_.model.topo_rank[n], n});
    for (const auto& r : b.outside_readers)
      if (!member_of(r.second, into)) a.outside_readers.insert(r);
    a.has_reduction = a.has_reduction || b.has_reduction;
    a.last_rank = std::max(a.last_rank, b.last_rank);
    b = Group{};
  }

  Kernel kernel_of(const Group& g) const {
    Kernel k;
    std::set<int> members(g.members.begin(), g.members.end());
    std::set<std::string> read_names;
    int64_t elems_in = 0, elems_out = 0;
    const int64_t e = dtype_bytes(in_.dtype);
    auto read = [&](const TensorRef& r) {
      if (r.name.empty() || !read_names.insert(r.name).second) return;
      k.reads.push_back(r);
      elems_in += r.bytes / e;
    };
    for (const auto& r : g.raw) read(r);
    const std::vector<int>& bias_convs = g.bias_of;
    int64_t static_bytes = 0;
    for (int c : bias_convs) {
      const Node& conv = m_.nodes[c];
      static_bytes += std::max<int64_t>(0, m_.numel(conv.inputs[2])) * e;
      k.nodes.push_back(c);
      k.ops.add(RuntimeStep::bias);
      if (k.name.empty()) k.name = conv.name + "/bias";
    }
    std::set<std::string> produced;
    for (int c : bias_convs) produced.insert(m_.nodes[c].outputs[0]);
    for (int n : g.members)
      for (const auto& out : m_.nodes[n].outputs) produced.insert(out);
    for (int n : g.members) {
      const Node& node = m_.nodes[n];
      k.nodes.push_back(n);
      k.ops.add(node.op_type);
      if (k.name.empty()) k.name = node.name;
      for (const auto& t : node.inputs) {
        if (t.empty() || produced.count(edges_.source(t))) continue;
        if (in_.folded(t)) static_bytes += std::max<int64_t>(0, m_.numel(t)) * e;
        else read(edges_.ref(t));
      }
    }
    for (const auto& t : produced) {
      const auto rs = edges_.readers(t);
      const bool escapes = edges_.is_graph_output(t) ||
                           std::any_of(rs.begin(), rs.end(), [&](int r) { return !members.count(r); });
      if (!escapes) continue;
      const TensorRef w = edges_.ref(t);
      k.writes.push_back(w);
      elems_out += w.bytes / e;
    }
    MemoryProblem p;
    p.op = MemoryOp::fused;
    p.elems_in = std::max<int64_t>(elems_in, 1);
    p.elems_out = std::max<int64_t>(elems_out, 1);
    Layer l;
    l.problem = p;
    l.dtype = in_.dtype;
    l.extra_bytes = static_bytes;
    k.layer = l;
    return k;
  }

  const LowerInput& in_;
  const Model& m_;
  const KernelEdges& edges_;
  std::unordered_map<int, int> group_of_;            // node -> group
  std::unordered_set<int> joined_;                   // nodes that joined a group as members
  std::vector<Group> groups_;
};

}  // namespace

KernelGraph fuse_pointwise(const LowerInput& in, const KernelEdges& edges) { return Fuser(in, edges).run(); }

}  // namespace tilewave
