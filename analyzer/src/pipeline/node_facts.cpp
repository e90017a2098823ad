#include "node_facts.h"

#include <algorithm>
#include <unordered_map>

#include "tilewave_onnx.pb.h"

namespace tilewave {

namespace {

using TP = onnx::TensorProto;

int element_bytes(int32_t t) {
  switch (t) {
    case TP::DOUBLE: case TP::INT64: case TP::UINT64: return 8;
    case TP::FLOAT: case TP::INT32: case TP::UINT32: return 4;
    case TP::FLOAT16: case TP::BFLOAT16: case TP::INT16: case TP::UINT16: return 2;
    default: return 1;
  }
}

int64_t checked_sum(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

// A tensor's bytes as the configuration holds it (docs/model.md "Node
// facts"): a real weight as it is stored (fp32 under autocast), a real
// activation at the activation precision, any other type at its own size.
int64_t stored_bytes(const Model& model, const ExecutionConfig& exec, const std::string& name, bool as_weight) {
  const TensorInfo* t = model.tensor(name);
  const int64_t n = model.numel(name);
  if (!t || n < 0) return 0;
  const int weight = exec.amp ? 4 : dtype_bytes(exec.dtype);
  const int per = t->is_real() ? (as_weight ? weight : dtype_bytes(exec.activation_dtype()))
                                        : element_bytes(t->elem_type);
  return saturating_mul(n, per);
}

}  // namespace

MemoryFacts network_weights(const Model& model, const ExecutionConfig& exec) {
  MemoryFacts m;
  std::unordered_map<std::string, bool> counted;
  for (const Node& n : model.nodes)
    for (const auto& in : n.inputs)
      if (!in.empty() && model.initializers.count(in) && !counted[in]) {  // a weight read by several nodes is stored once
        counted[in] = true;
        m.params = checked_sum(m.params, std::max<int64_t>(model.numel(in), 0));
        m.weight_bytes = checked_sum(m.weight_bytes, stored_bytes(model, exec, in, true));
      }
  return m;
}

void fill_node_facts(const Model& model, const ExecutionConfig& exec, Analysis& a) {
  auto bytes_of = [&](const std::string& name, bool as_weight) {
    return stored_bytes(model, exec, name, as_weight);
  };
  auto is_activation = [&](const std::string& name) {
    return !name.empty() && !model.static_tensors.count(name) && !model.initializers.count(name);
  };

  double busy = 0;
  for (const auto& k : a.kernels)
    if (k.cost) busy += k.cost->time_us;
  for (size_t i = 0; i < model.nodes.size() && i < a.nodes_fate.size(); ++i) {
    const Node& n = model.nodes[i];
    NodeFate& f = a.nodes_fate[i];
    for (const auto& in : n.inputs) {
      if (in.empty()) continue;
      if (model.initializers.count(in)) {
        f.params = checked_sum(f.params, std::max<int64_t>(model.numel(in), 0));
        f.weight_bytes = checked_sum(f.weight_bytes, bytes_of(in, true));
      } else if (is_activation(in)) {
        f.activation_read_bytes = checked_sum(f.activation_read_bytes, bytes_of(in, false));
      }
    }
    for (const auto& out : n.outputs)
      if (is_activation(out)) f.activation_write_bytes = checked_sum(f.activation_write_bytes, bytes_of(out, false));
    // Over the kernels it heads: utilization and losses weighted by time,
    // the bound and main loss the longest kernel's (what annotate shows).
    double useful_us = 0;
    for (int k : f.kernels) {
      const KernelResult& r = a.kernels[size_t(k)];
      if (!r.cost || r.kernel.nodes.empty() || r.kernel.nodes[0] != int(i)) continue;
      const KernelCost& c = *r.cost;
      f.time_us += c.time_us;
      useful_us += c.utilization * c.time_us;
      f.losses.tile += c.losses.tile * c.time_us;
      f.losses.wave += c.losses.wave * c.time_us;
      f.losses.efficiency += c.losses.efficiency * c.time_us;
      f.losses.memory += c.losses.memory * c.time_us;
      f.losses.fixed += c.losses.fixed * c.time_us;
      if (f.longest_kernel < 0 || c.time_us > a.kernels[size_t(f.longest_kernel)].cost->time_us) f.longest_kernel = k;
    }
    if (f.time_us > 0) {
      f.utilization = useful_us / f.time_us;
      for (double* l : {&f.losses.tile, &f.losses.wave, &f.losses.efficiency, &f.losses.memory, &f.losses.fixed})
        *l /= f.time_us;
    }
    f.gpu_busy_share = busy > 0 ? f.time_us / busy : 0;
    f.step_share = a.total.time_us > 0 ? f.time_us / a.total.time_us : 0;
  }

  // Peak activations: each tensor lives from its producer's step to its last
  // reader's (graph inputs from the start, graph outputs to the end).
  const size_t steps = model.topo_order.size();
  std::unordered_map<std::string, std::pair<size_t, size_t>> live;  // tensor -> [first, last] step
  for (const auto& in : model.inputs)
    if (is_activation(in)) live[in] = {0, 0};
  for (size_t s = 0; s < steps; ++s) {
    const Node& n = model.nodes[size_t(model.topo_order[s])];
    for (const auto& in : n.inputs)
      if (is_activation(in)) {
        auto it = live.find(in);
        if (it != live.end()) it->second.second = std::max(it->second.second, s);
      }
    for (const auto& out : n.outputs)
      if (is_activation(out)) live.emplace(out, std::make_pair(s, s));
  }
  for (const auto& out : model.outputs) {
    auto it = live.find(out);
    if (it != live.end()) it->second.second = steps ? steps - 1 : 0;
  }
  // 128-bit sums: a million tensors of up to 2^53 bytes each stay exact.
  // Index steps + 1 too: with no node (steps 0) a graph input's range is [0, 0].
  std::vector<__int128> delta(steps + 2, 0);
  for (const auto& [name, range] : live) {
    const int64_t b = bytes_of(name, false);
    delta[range.first] += b;
    delta[range.second + 1] -= b;
  }
  __int128 alive = 0, peak = 0;
  for (size_t s = 0; s < steps; ++s) {
    alive += delta[s];
    if (alive > peak) {
      peak = alive;
      a.memory.peak_at = model.nodes[size_t(model.topo_order[s])].name;
    }
  }
  a.memory.peak_activation_bytes = peak > INT64_MAX ? INT64_MAX : int64_t(peak);
}

}  // namespace tilewave
