// Stage 4: ONNX nodes -> the GPU kernels a runtime launches. A runtime is a
// profile object passed in (docs/model.md "Runtimes"), never a global switch;
// so is the op registry.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tilewave/exec_config.h"
#include "tilewave/ir/kernel_graph.h"
#include "tilewave/layer_graph.h"
#include "tilewave/model.h"
#include "tilewave/op_registry.h"

namespace tilewave {

class AttentionChains;

// What every lowering step reads.
struct LowerInput {
  const Model& model;
  const LayerGraph& graph;
  const OpRegistry& registry;
  DType dtype;                  // of the activations and the compute kernels
  const ExecutionConfig& exec;  // layout, amp: read by the passes
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
  virtual KernelGraph lower(const LowerInput& in) const = 0;
  // How it runs when the configuration does not say: PyTorch's runtimes as timm's harness runs them.
  virtual RuntimeDefaults defaults() const { return {}; }
};

// The built-in runtimes, the default (eager) first.
const std::vector<const RuntimeProfile*>& builtin_runtimes();
// nullptr for an unknown name.
const RuntimeProfile* find_runtime(const std::string& name);
// The same, or InputError naming `where` (an option, a keyword) and the runtimes.
const RuntimeProfile& runtime_named(const std::string& name, const std::string& where);
const RuntimeProfile& default_runtime();

// The runtime's own lowering of the model (exec.runtime_profile()), before
// any pass; pipeline.h's lower_model adds the passes. exec.fuse_attention:
// the MatMul-Softmax-MatMul chains exporters write for
// scaled_dot_product_attention become one flash-attention kernel
// (docs/model.md "Attention"); false costs them node by node.
KernelGraph lower_for_runtime(const Model& model, const LayerGraph& graph, const ExecutionConfig& exec,
                              const OpRegistry& registry);

// Whether a conv's bias was the model's own rather than a BatchNorm the
// exporter folded in (the precision pass casts only an own bias).
// torch.onnx keeps a parameter's name ("layer.0.bias") and names a folded
// one after the node ("onnx::Conv_497"); a conv over a 1x1 map
// (squeeze-excitation, classifier heads) never follows a BatchNorm.
bool bias_is_own(const Node& conv, const ConvProblem& p);

}  // namespace tilewave
