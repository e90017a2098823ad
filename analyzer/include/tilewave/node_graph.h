// Stage 3: the node graph: one vertex per ONNX node, checked (with Boost.Graph,
// inside node_graph.cpp) and topologically sorted. The kernels are another
// graph (ir/kernel_graph.h). Plain adjacency lists here, not the Boost graph:
// nearly every source includes this header, and Boost.Graph's headers cost
// each of them seconds of compile (docs/performance.md "Build and test times").
#pragma once
#include <vector>

#include "tilewave/model.h"

namespace tilewave {

struct NodeGraph {
  // Node index -> the nodes reading its outputs, once per input read, in
  // node order (an edge producer -> consumer per read).
  std::vector<std::vector<int>> consumers;
  std::vector<int> topo_order; // node indices, producers first
  std::vector<int> topo_rank;  // node index -> position in topo_order
  const std::vector<int>& consumers_of(int node) const { return consumers[node]; }
};

// Throws InputError naming the model file for a cycle, a dangling input (no
// node, initializer or graph input produces it) or a tensor produced twice.
NodeGraph build_node_graph(const Model& model);

}  // namespace tilewave
