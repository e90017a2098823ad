// Attention however an exporter writes it: the MatMul -> scale -> mask ->
// Softmax -> MatMul chain that scaled_dot_product_attention becomes in ONNX
// is one fused flash-attention kernel, as PyTorch eager, inductor and
// TensorRT run it (docs/model.md "Attention"). --attention unfused skips
// this rule and costs the chain node by node.
#pragma once
#include <optional>
#include <unordered_map>
#include <vector>

#include "tilewave/node_graph.h"
#include "tilewave/lowering.h"

namespace tilewave {

struct AttentionChain {
  std::vector<int> nodes;  // head (Q K^T MatMul) first, the P V MatMul last
  AttentionProblem problem;
};

// Chains found in the model, by the index of each member node.
class AttentionChains {
 public:
  AttentionChains(const Model& model, const NodeGraph& graph);
  const AttentionChain* chain_of(int node) const;
  bool is_head(int node) const;

 private:
  std::vector<AttentionChain> chains_;
  std::unordered_map<int, size_t> member_;
};

}  // namespace tilewave
