// Per-node facts and the network's memory (docs/model.md "Node facts"), for
// the result: parameters, weight bytes, activation bytes, peak activations.
#pragma once
#include "tilewave/analysis.h"

namespace tilewave {

// The network's weights: each initializer a node reads, once, as the
// configuration stores it (params and weight_bytes of MemoryFacts). The one
// weight-byte rule: the memory note and the node facts both use it.
MemoryFacts network_weights(const Model& model, const ExecutionConfig& exec);
// Fills each NodeFate's facts (its kernels already listed) and a.memory's
// peak activations.
void fill_node_facts(const Model& model, const ExecutionConfig& exec, Analysis& a);

}  // namespace tilewave
