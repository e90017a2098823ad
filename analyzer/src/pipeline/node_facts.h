// Per-node facts and the network's memory (docs/model.md "Node facts"), for
// the result: parameters, weight bytes, activation bytes, peak activations.
#pragma once
#include "tilewave/analysis.h"
#include "tilewave/node_graph.h"

namespace tilewave {

// Fills each NodeFate's facts (its kernels already listed) and a.memory.
void fill_node_facts(const Model& model, const NodeGraph& graph, const ExecutionConfig& exec, Analysis& a);

}  // namespace tilewave
