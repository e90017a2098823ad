// Stage 2: shapes and load-time values of every tensor, from each op's shape
// function in the registry (docs/model.md "Pipeline").
#include "tilewave/shape_inference.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include "tilewave_onnx.pb.h"

#include "tilewave/tensor_values.h"
#include "tilewave/error.h"
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

void mark_unknown(Model& m, const Node& n, const std::string& why) {
  for (const auto& out : n.outputs) {
    if (out.empty()) continue;
    m.tensors.erase(out);
    m.unknown_reason.emplace(out, why);
  }
}

// Static tensors in file order; correct for topologically sorted files, and
// a file that is not sorted only loses some folding (never correctness of
// the graph checks, which the layer graph does). Every value shape inference
// evaluated is static too. A node whose subgraphs hold compute (an If or
// Loop over a Conv) is never folded, whatever its inputs: folding an If on a
// constant condition dropped the Conv of its branch without a word (issue
// 32); unfolded, it is compute tilewave leaves out, an error.
void mark_static(Model& model, const OpRegistry& registry) {
  for (const auto& name : model.initializers) model.static_tensors.insert(name);
  for (const auto& [name, value] : model.values) model.static_tensors.insert(name);
  for (const auto& n : model.nodes) {
    bool all_static = n.op_type == "Shape" || n.op_type == "Size";
    if (!all_static) {
      all_static = true;
      for (const auto& in : n.inputs)
        if (!in.empty() && !model.static_tensors.count(in)) all_static = false;
    }
    if (all_static && !registry.compute_in_subgraphs(n).empty()) all_static = false;
    if (all_static)
      for (const auto& out : n.outputs) model.static_tensors.insert(out);
  }
}

// docs/model.md "Weight-only subgraphs": a framework computes these on every
// forward. A weight is a float initializer or constant of more than one
// element (a scalar is a Python number there); a node reading one, or a
// tensor computed from one, computes its float outputs from weights, except
// where it only moves elements (index_remap: expand, permute, slice are
// views in PyTorch). Only those whose value reaches a run-time node count:
// walked back from the run-time nodes, skipping the inputs an op does not
// use for what is read.
void mark_weight_computed(Model& model, const OpRegistry& registry, const std::vector<int>& order) {
  auto real = [&](const std::string& t) {
    const TensorInfo* info = model.tensor(t);
    return info && info->is_real();
  };
  std::unordered_set<std::string> from_weights;
  for (const auto& name : model.initializers)
    if (real(name) && model.numel(name) > 1) from_weights.insert(name);
  std::vector<bool> derived(model.nodes.size(), false), computes(model.nodes.size(), false);
  for (int idx : order) {
    const Node& n = model.nodes[size_t(idx)];
    const bool all_static = std::all_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& t) {
      return t.empty() || model.static_tensors.count(t);
    });
    if (!all_static || n.op_type == "Shape" || n.op_type == "Size") continue;
    if (n.inputs.empty()) {  // Constant
      for (const auto& out : n.outputs)
        if (real(out) && model.numel(out) > 1) from_weights.insert(out);
      continue;
    }
    if (std::none_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& t) { return from_weights.count(t); }))
      continue;
    const OpRule* rule = registry.find(n.domain, n.op_type);
    derived[size_t(idx)] = true;
    computes[size_t(idx)] = !(rule && rule->has(op_trait::index_remap));
    for (const auto& out : n.outputs)
      if (!out.empty() && real(out)) from_weights.insert(out);
  }
  // Tensors some run-time node (or the graph's output) needs.
  std::unordered_set<std::string> needed(model.outputs.begin(), model.outputs.end());
  auto inputs_used = [&](const Node& n, const std::vector<bool>& outputs_read) {
    std::vector<std::string> used;
    const OpRule* rule = registry.find(n.domain, n.op_type);
    const bool stats_unused = rule && rule->has(op_trait::running_stats_inputs) &&
                              attr_int(n, "training_mode", 0) != 0 &&
                              !(outputs_read.size() > 1 && outputs_read[1]) && !(outputs_read.size() > 2 && outputs_read[2]);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!(stats_unused && (i == 3 || i == 4))) used.push_back(n.inputs[i]);
    return used;
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = model.nodes[size_t(*it)];
    const bool run_time = std::any_of(n.outputs.begin(), n.outputs.end(), [&](const std::string& t) {
      return !t.empty() && !model.static_tensors.count(t);
    });
    std::vector<bool> outputs_read;
    for (const auto& out : n.outputs) outputs_read.push_back(!out.empty() && needed.count(out));
    if (!run_time && !(derived[size_t(*it)] && std::count(outputs_read.begin(), outputs_read.end(), true)))
      continue;
    for (const auto& in : inputs_used(n, outputs_read))
      if (!in.empty()) needed.insert(in);
  }
  for (size_t i = 0; i < model.nodes.size(); ++i)
    if (computes[i])
      for (const auto& out : model.nodes[i].outputs)
        if (!out.empty() && needed.count(out) && real(out)) model.weight_computed.insert(out);
}

}  // namespace

void infer_shapes(Model& model, const OpRegistry& registry) {
  for (const auto& t : model.proto->graph().initializer())
    if (auto v = tensor_value(t)) model.values[t.name()] = std::move(*v);
  ShapeInferenceState state;
  const std::vector<int>& order = model.topo_order;
  for (int idx : order) {
    const Node& n = model.nodes[idx];
    const OpRule* rule = registry.find(n.domain, n.op_type);
    if (!rule || !rule->shape) {
      mark_unknown(model, n,
                   fmt::format("op {}{} has no shape function in tilewave (`tilewave ops` lists the supported ops)",
                               n.domain.empty() ? "" : n.domain + ".", n.op_type));
      continue;
    }
    ShapeContext ctx(model, n, &state);
    check_signature(ctx, rule->signature);
    try {
      rule->shape(ctx);
    } catch (const ShapeUnknown& e) {
      // The first unknown shape's reason travels downstream unchanged, so one
      // cause reads as one cause however many nodes it reaches.
      mark_unknown(model, n,
                   e.upstream ? e.what() : fmt::format("shape of '{}' ({}) is unknown: {}", n.name, n.op_type, e.what()));
      continue;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const std::string& out = n.outputs[i];
      if (out.empty()) continue;
      if (ctx.outputs[i]) {
        model.tensors[out] = std::move(*ctx.outputs[i]);
        model.unknown_reason.erase(out);
      } else {
        model.tensors.erase(out);
        model.unknown_reason.emplace(out, fmt::format("{} infers no shape for its output {}", n.op_type, i));
      }
      // A value left from an initializer of the same name would disagree
      // with this node's shape: the node's own value, or none, replaces it.
      if (ctx.values[i]) {
        ctx.values[i]->dims = model.tensors.count(out) ? model.tensors[out].dims : std::vector<int64_t>{};
        model.values[out] = std::move(*ctx.values[i]);
      } else {
        model.values.erase(out);
      }
    }
  }
  mark_static(model, registry);
  mark_weight_computed(model, registry, order);
}

}  // namespace tilewave
