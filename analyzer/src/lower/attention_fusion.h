// Attention however an exporter writes it: the MatMul -> scale -> mask ->
// Softmax -> MatMul chain that scaled_dot_product_attention becomes in ONNX
// is one fused flash-attention kernel, as PyTorch eager, inductor and
// TensorRT run it (docs/model.md "Attention"). --attention unfused skips
// this rule and costs the chain node by node.
#pragma once
#include <optional>
#include <unordered_map>
#include <vector>

#include "tilewave/lowering.h"

namespace tilewave {

struct AttentionChain {
  std::vector<int> nodes;  // head (Q K^T MatMul) first, the P V MatMul last
  AttentionProblem problem;
  // torch.onnx's scaled_dot_product_attention: Q and K each scaled by a
  // scalar (√scale) before the product. Hand-written attention scales one
  // of them, or the scores.
  bool sdpa_export = false;
};

// Chains found in the model, by the index of each member node; with
// sdpa_only, only those written for scaled_dot_product_attention.
class AttentionChains {
 public:
  AttentionChains(const Model& model, bool sdpa_only = false);
  const AttentionChain* chain_of(int node) const;
  bool is_head(int node) const;

 private:
  std::vector<AttentionChain> chains_;
  std::unordered_map<int, size_t> member_;
};

}  // namespace tilewave
