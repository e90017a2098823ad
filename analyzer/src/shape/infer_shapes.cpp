// Stage 2: shapes and load-time values of every tensor, from each op's shape
// function in the registry (docs/model.md "Pipeline").
#include "tilewave/shape_inference.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_map>

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

}  // namespace

void infer_shapes(Model& model, const OpRegistry& registry) {
  for (const auto& t : model.proto->graph().initializer())
    if (auto v = tensor_value(t)) model.values[t.name()] = std::move(*v);
  ShapeInferenceState state;
  for (int idx : topological_order(model)) {
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
}

}  // namespace tilewave
