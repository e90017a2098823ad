#include "tilewave/op_registry.h"

#include <algorithm>

#include <fmt/format.h>
#include "tilewave_onnx.pb.h"

namespace tilewave {

std::string LowerContext::unknown_why(const std::string& tensor, const char* role) const {
  auto it = model.unknown_reason.find(tensor);
  if (it != model.unknown_reason.end()) return it->second;
  return fmt::format("shape of {} '{}' is not fully known", role, tensor);
}

const TensorInfo& LowerContext::input(size_t i) const {
  if (!has_input(i)) throw Unmodelled(fmt::format("input {} is missing", i));
  const TensorInfo* t = model.tensor(node.inputs[i]);
  if (!t || !t->fully_known()) throw Unmodelled(unknown_why(node.inputs[i], "input"));
  return *t;
}

const TensorInfo& LowerContext::output(size_t i) const {
  if (i >= node.outputs.size() || node.outputs[i].empty()) throw Unmodelled(fmt::format("output {} is missing", i));
  const TensorInfo* t = model.tensor(node.outputs[i]);
  if (!t || !t->fully_known()) throw Unmodelled(unknown_why(node.outputs[i], "output"));
  return *t;
}

bool LowerContext::input_is_static(size_t i) const {
  return has_input(i) && model.static_tensors.count(node.inputs[i]) > 0;
}

OpEntry OpRegistry::add(OpRule rule) {
  auto key = std::make_pair(rule.domain, rule.op_type);
  auto it = rules_.find(key);
  if (it != rules_.end())
    throw std::logic_error(fmt::format("op '{}' registered twice: at {} and at {}", rule.op_type,
                                       it->second.registered_at, rule.registered_at));
  return OpEntry(rules_.emplace(std::move(key), std::move(rule)).first->second);
}

bool OpRegistry::has_trait(const std::string& domain, const std::string& op_type, unsigned trait) const {
  const OpRule* r = find(domain == "ai.onnx" ? std::string() : domain, op_type);
  return r && r->has(trait);
}

int OpRegistry::special_functions(const std::string& domain, const std::string& op_type) const {
  const OpRule* r = find(domain == "ai.onnx" ? std::string() : domain, op_type);
  return r ? r->special_functions : 0;
}

namespace {

constexpr const char* kComputeWords[] = {"Conv", "MatMul", "Gemm", "Attention", "Einsum"};

bool names_compute(const std::string& op_type) {
  return std::any_of(std::begin(kComputeWords), std::end(kComputeWords),
                     [&](const char* w) { return op_type.find(w) != std::string::npos; });
}

std::string compute_in_graphs(const onnx::NodeProto& node, const OpRegistry& registry, int depth) {
  if (depth > 64) return "";
  auto in_graph = [&](const onnx::GraphProto& g) -> std::string {
    for (const auto& n : g.node()) {
      if (registry.is_compute(n.domain(), n.op_type())) return n.op_type();
      const std::string inner = compute_in_graphs(n, registry, depth + 1);
      if (!inner.empty()) return inner;
    }
    return "";
  };
  for (const auto& a : node.attribute()) {
    if (a.has_g()) {
      const std::string found = in_graph(a.g());
      if (!found.empty()) return found;
    }
    for (const auto& g : a.graphs()) {
      const std::string found = in_graph(g);
      if (!found.empty()) return found;
    }
  }
  return "";
}

}  // namespace

bool OpRegistry::is_compute(const std::string& domain, const std::string& op_type) const {
  const OpRule* r = find(domain == "ai.onnx" ? std::string() : domain, op_type);
  return r ? r->role == FusionRole::gemm : names_compute(op_type);
}

std::string OpRegistry::compute_in_subgraphs(const Node& node) const {
  return node.proto ? compute_in_graphs(*node.proto, *this, 0) : "";
}

const OpRule* OpRegistry::find(const std::string& domain, const std::string& op_type) const {
  auto it = rules_.find({domain, op_type});
  return it == rules_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::op_names() const {
  std::vector<std::string> names;
  for (const auto& [key, rule] : rules_) names.push_back(key.first.empty() ? key.second : key.first + "." + key.second);
  return names;
}

const OpRegistry& OpRegistry::builtin() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_conv_ops(r);
    register_gemm_ops(r);
    register_elementwise_ops(r);
    register_pool_reduce_ops(r);
    register_data_movement_ops(r);
    register_shape_ops(r);
    register_quant_ops(r);
    register_transformer_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace tilewave
