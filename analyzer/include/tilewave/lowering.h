// Stage 4: ONNX nodes -> the GPU kernels a runtime launches. A runtime is a
// profile object passed in (docs/model.md "Runtimes"), never a global switch;
// so is the op registry.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tilewave/exec_config.h"
#include "tilewave/ir/kernel_graph.h"
#include "tilewave/model.h"
#include "tilewave/op_registry.h"

namespace tilewave {

class AttentionChains;

// What every lowering step reads.
struct LowerInput {
  const Model& model;  // with its node graph (Model::consumers, topo_order)
  const OpRegistry& registry;
  DType dtype;                  // of the activations and the compute kernels
  const ExecutionConfig& exec;  // layout, amp: read by the passes
  // Exporters' attention chains to lower as one fused kernel; null: unfused.
  const AttentionChains* attention = nullptr;
  // Each node lowered on its own, by node index, filled on first use: the
  // rules ask for the same node more than once (lower_node.cpp).
  std::vector<std::optional<std::optional<Kernel>>>* node_kernels = nullptr;
  // Known before run time and computed by no kernel of this runtime: every
  // static tensor, less those computed from weights where the runtime does
  // not fold them (docs/model.md "Weight-only subgraphs").
  bool folded(const std::string& tensor) const;
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
  // What --runtime's help says of it: "PyTorch eager" (a historical one: the clause after its name).
  virtual const char* help() const = 0;
  // Kept only to reprint old figures: accepted by --runtime, left out where one chooses (nas, `tilewave ops`).
  virtual bool historical() const { return false; }
  // What it launches for an op of this fusion role (`tilewave ops`, docs/ops.md).
  virtual const char* role_kernels(FusionRole) const { return "own kernel"; }
  // PyTorch's layout rules apply: NCHW activations run cuDNN's NCHW kernels
  // and layout transforms (the layout pass; advise tries the other layout).
  virtual bool follows_layout() const { return false; }
  // It builds int8 engines (advise tries int8).
  virtual bool builds_int8() const { return false; }
  // It computes weight-only subgraphs once, when it is built; a framework
  // runs them on every forward (docs/model.md "Weight-only subgraphs").
  virtual bool folds_weight_subgraphs() const { return false; }
  // It runs attention written by hand (Q Kᵀ, softmax, P V as separate ops) as
  // one fused kernel too; PyTorch eager fuses only scaled_dot_product_attention
  // (docs/model.md "Attention").
  virtual bool fuses_written_attention() const { return true; }
  // PyTorch's precision rules apply: cuDNN convolutions in TF32 in fp32, and
  // autocast's casts and fp32-list ops under AMP (docs/model.md "Precision pass").
  virtual bool applies_autocast() const { return false; }
  // Autocast's casts are kernels of their own, placed tensor by tensor as the
  // types flow (eager); a compiler casts inside its generated kernels instead.
  virtual bool casts_per_tensor() const { return false; }
  // An op that needs contiguous memory (a matmul, a Linear, a softmax) copies
  // a permuted view of a map first, and a Linear on such a view adds its bias
  // in a kernel of its own (docs/model.md "Framework ops": permuted inputs).
  virtual bool copies_permuted_views() const { return false; }
  // A Resize runs one of PyTorch's upsample kernels: linear over an NCHW map
  // and cubic over any gives each thread one output position looping over
  // every (image, channel) plane; nearest, and linear over channels-last
  // memory, give each thread output values at an index cost of their own
  // (docs/model.md "Memory-bound kernels").
  virtual bool aten_resample_kernels() const { return false; }
};

// The built-in runtimes, the default (eager) first: the one list of them
// (docs/model.md "Runtimes", its paragraph on adding one).
const std::vector<const RuntimeProfile*>& builtin_runtimes();
// Their names, in that order; without the historical ones unless asked.
std::vector<std::string> runtime_names(bool historical = true);
// nullptr for an unknown name.
const RuntimeProfile* find_runtime(const std::string& name);
// The same, or InputError naming `where` (an option, a keyword) and the runtimes.
const RuntimeProfile& runtime_named(const std::string& name, const std::string& where);
const RuntimeProfile& default_runtime();

// The runtime's own lowering of the model (exec.runtime_profile()), before
// any pass; pipeline.h's lower_model adds the passes. exec.fuse_attention:
// the MatMul-Softmax-MatMul chains exporters write for
// scaled_dot_product_attention become one flash-attention kernel (under a
// runtime that fuses hand-written attention, every such chain; docs/model.md
// "Attention"); false costs them node by node.
KernelGraph lower_for_runtime(const Model& model, const ExecutionConfig& exec, const OpRegistry& registry);

// Whether a conv's bias was the model's own rather than a BatchNorm the
// exporter folded in (the precision pass casts only an own bias).
// torch.onnx keeps a parameter's name ("layer.0.bias") and names a folded
// one after the node ("onnx::Conv_497"); a conv over a 1x1 map
// (squeeze-excitation, classifier heads) never follows a BatchNorm.
bool bias_is_own(const Node& conv, const ConvProblem& p);
// A GroupNorm's kernel as lowering gives it: the moments of each (image,
// group) row; eager follows it with its scale-and-shift and apply kernels.
bool is_group_norm(const Kernel& k);

}  // namespace tilewave
