// Stage 3: the node graph (Boost.Graph): one vertex per ONNX node, checked and
// topologically sorted. The kernels are another graph (ir/kernel_graph.h).
#pragma once
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "tilewave/model.h"

namespace tilewave {

struct NodeGraph {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Graph graph;                 // vertex i is model.nodes[i]; edge producer -> consumer
  std::vector<int> topo_order; // node indices, producers first
  std::vector<int> topo_rank;  // node index -> position in topo_order
  std::vector<int> consumers_of(int node) const;
};

// Throws InputError naming the model file for a cycle, a dangling input (no
// node, initializer or graph input produces it) or a tensor produced twice.
NodeGraph build_node_graph(const Model& model);

}  // namespace tilewave
