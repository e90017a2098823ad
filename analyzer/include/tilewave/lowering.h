// Stage 3: ONNX nodes -> GPU kernels under an execution model (fusion).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tilewave/layer.h"
#include "tilewave/layer_graph.h"
#include "tilewave/model.h"

namespace tilewave {

enum class Fusion {
  none,  // one kernel per working node (ONNX Runtime CUDA EP, PyTorch eager)
  trt,   // TensorRT-like epilogue and elementwise-chain fusion
};
std::optional<Fusion> parse_fusion(const std::string& s);
const char* fusion_name(Fusion f);

struct Kernel {
  std::string name;           // name of the first node
  std::string ops;            // "Conv+Add+Relu"
  std::vector<int> nodes;     // model node indices, head first
  std::optional<Layer> layer; // absent: unmodelled
  std::string unmodelled_reason;
};

struct Lowering {
  std::vector<Kernel> kernels;  // in topological order
  int free_nodes = 0;           // nodes that launch nothing (shape ops, folded constants)
};

Lowering lower_model(const Model& model, const LayerGraph& graph, Fusion fusion, DType dtype);

}  // namespace tilewave
