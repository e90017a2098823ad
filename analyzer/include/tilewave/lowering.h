// Stage 3: ONNX nodes -> the GPU kernels a runtime launches. A runtime is a
// profile object passed in (docs/model.md "Runtimes"), never a global switch;
// so is the op registry.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tilewave/layer.h"
#include "tilewave/layer_graph.h"
#include "tilewave/model.h"
#include "tilewave/op_registry.h"

namespace tilewave {

// A run-time tensor a kernel reads or writes; kernels a runtime adds (a
// padded copy, a conv's raw output before its bias) name theirs "<tensor>#<what>".
struct TensorRef {
  std::string name;
  int64_t bytes = 0;
};

struct Kernel {
  std::string name;           // name of the first node (plus a suffix for a node's extra kernels)
  std::string ops;            // "Conv+Add+Relu"
  std::vector<int> nodes;     // model node indices, head first
  std::optional<Layer> layer; // absent: unmodelled
  std::string unmodelled_reason;
  bool compute = false;       // tensor-core work (conv, GEMM, attention): never silently left out
  // Activations read and written (weights and constants excluded), the edges
  // of the kernel graph the network terms walk (docs/model.md "Inside a network").
  std::vector<TensorRef> reads, writes;
};

struct Lowering {
  std::vector<Kernel> kernels;  // in launch order
  int free_nodes = 0;           // nodes that launch nothing (shape ops, folded constants)
};

class AttentionChains;

// What every lowering step reads.
struct LowerInput {
  const Model& model;
  const LayerGraph& graph;
  const OpRegistry& registry;
  DType dtype;
  // Exporters' attention chains to lower as one fused kernel; null: unfused.
  const AttentionChains* attention = nullptr;
  // Each node lowered on its own, by node index, filled on first use: the
  // rules ask for the same node more than once (lower_node.cpp).
  std::vector<std::optional<std::optional<Kernel>>>* node_kernels = nullptr;
};

// How one runtime turns a model into kernels. Each profile composes small
// rules from src/lower/ (framework-op grouping, bias kernels, channel
// padding, pointwise fusion, epilogue fusion).
class RuntimeProfile {
 public:
  virtual ~RuntimeProfile() = default;
  virtual const char* name() const = 0;     // eager | inductor | tensorrt
  virtual const char* summary() const = 0;  // one line: what it stands for
  virtual Lowering lower(const LowerInput& in) const = 0;
};

// The built-in runtimes, the default (eager) first.
const std::vector<const RuntimeProfile*>& builtin_runtimes();
// nullptr for an unknown name.
const RuntimeProfile* find_runtime(const std::string& name);
// The same, or InputError naming `where` (an option, a keyword) and the runtimes.
const RuntimeProfile& runtime_named(const std::string& name, const std::string& where);
const RuntimeProfile& default_runtime();

// fuse_attention: the MatMul-Softmax-MatMul chains exporters write for
// scaled_dot_product_attention become one flash-attention kernel
// (docs/model.md "Attention"); false costs them node by node.
Lowering lower_model(const Model& model, const LayerGraph& graph, const RuntimeProfile& runtime, DType dtype,
                     const OpRegistry& registry = OpRegistry::builtin(), bool fuse_attention = true);

}  // namespace tilewave
