// Shared by the lowering rules: one node lowered on its own.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tilewave/lowering.h"

namespace tilewave {

// True when the runtime folds every output of n (LowerInput::folded).
bool produces_only_folded(const LowerInput& in, const Node& n);
// The node's fusion role; opaque for an op without a rule.
FusionRole role_of(const LowerInput& in, const Node& n);
// One node as one kernel, or nullopt for a node with no GPU work.
std::optional<Kernel> lower_node(const LowerInput& in, const Node& n);
// A node that launches nothing and relabels one run-time tensor (Reshape,
// Flatten, a layout-only Transpose): a view, which the framework still
// dispatches as an op of its own.
bool is_view_node(const LowerInput& in, const Node& n);

}  // namespace tilewave

namespace tilewave {

// The run-time tensors of kernels made of model nodes: what a kernel reads
// from and writes for other kernels. Outputs of nodes that launch nothing
// (Reshape, Flatten, folded constants) are views of their input.
class KernelEdges {
 public:
  explicit KernelEdges(const LowerInput& in);
  // Fills k.reads/k.writes from its nodes: inputs no member produces,
  // outputs read outside the kernel or leaving the graph.
  void derive(Kernel& k) const;
  // The tensor a view resolves to ("" for a constant).
  std::string source(const std::string& tensor) const;
  TensorRef ref(const std::string& tensor) const;  // source and its size
  // Nodes reading `tensor` or a view of it.
  std::vector<int> readers(const std::string& tensor) const;
  bool is_graph_output(const std::string& tensor) const;

 private:
  const LowerInput& in_;
  std::unordered_map<std::string, std::string> view_of_;  // view -> viewed tensor
  std::unordered_map<std::string, std::vector<std::string>> views_;  // tensor -> its views
};

}  // namespace tilewave
