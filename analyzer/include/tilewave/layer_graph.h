// Stage 3: the operator graph (Boost.Graph), checked and topologically sorted.
#pragma once
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "tilewave/model.h"

namespace tilewave {

struct LayerGraph {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Graph graph;                 // vertex i is model.nodes[i]; edge producer -> consumer
  std::vector<int> topo_order; // node indices, producers first
  std::vector<int> topo_rank;  // node index -> position in topo_order
  std::vector<int> consumers_of(int node) const;
};

// Throws InputError naming the model file for a cycle, a dangling input (no
// node, initializer or graph input produces it) or a tensor produced twice.
LayerGraph build_layer_graph(const Model& model);

}  // namespace tilewave
