// Stage 5: the typed kernel graph (docs/model.md "Pipeline"): the kernels a runtime
// launches, in launch order, with the run-time tensors each reads and
// writes. Lowering produces it, the passes rewrite it, the cost and
// schedule stages read it. Needs no ONNX and no op registry.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "tilewave/dtype.h"
#include "tilewave/exec_axes.h"
#include "tilewave/layer.h"

namespace tilewave {

// What the host runs to issue a kernel (docs/model.md "Schedule"): a
// framework op of its own, whose class (from the kernel's problem: a conv,
// a GEMM, a BatchNorm, any other op) sets its host cost; an autocast cast;
// or a launch inside the op of the kernel before it (cuDNN's padding and
// transforms, BatchNorm's statistics kernels, a conv's own bias).
enum class HostCall { inner, op, conv, gemm, norm, cast };
constexpr int kHostCallCount = 6;
const char* host_call_name(HostCall c);

// A run-time tensor a kernel reads or writes; kernels a runtime adds (a
// padded copy, a conv's raw output before its bias) name theirs "<tensor>#<what>".
struct TensorRef {
  std::string name;
  int64_t bytes = 0;                 // from its own element type
  DType dtype = DType::fp16;         // element type in memory
  // Of a 4-D activation, as the libraries see it: lowering gives every tensor
  // the configuration's (ExecutionConfig::activation_layout); only the
  // layout pass's transforms write another.
  Layout layout = Layout::nhwc;
};

// A step a runtime runs beside the model's own ops (docs/model.md
// "Pipeline", the typed kernel graph): a conv's own bias pass, cuDNN's
// padded copies, BatchNorm's statistics, a layout transform, an autocast
// cast, or the MatMul-Softmax-MatMul chain as one flash-attention kernel.
enum class RuntimeStep { bias, pad, bn_prep, layout_transform, cast, attention, norm_params, norm_apply };
const char* runtime_step_name(RuntimeStep s);  // "bias", ..., "Attention(MatMul+Softmax+MatMul)"
// What the step's kernel does, in a few words, for the views' legends
// (docs/model.md "Runtime steps" says it in full).
const char* runtime_step_meaning(RuntimeStep s);

// What a kernel computes, in order: each part the ONNX op type of a node it
// runs or a runtime step. Spelled "Conv+Add+Relu" in every output.
class KernelOps {
 public:
  using Part = std::variant<std::string, RuntimeStep>;
  KernelOps() = default;
  KernelOps(RuntimeStep step) { add(step); }
  explicit KernelOps(std::string op_type) { add(std::move(op_type)); }
  void add(std::string op_type) { parts_.emplace_back(std::move(op_type)); }
  void add(RuntimeStep step) { parts_.emplace_back(step); }
  const std::vector<Part>& parts() const { return parts_; }
  bool empty() const { return parts_.empty(); }
  // The kernel is this runtime step and nothing else.
  bool is(RuntimeStep step) const;
  // The kernel is one runtime step, whichever, and nothing else.
  bool is_runtime_step() const;
  // The kernel is one node of this op type and nothing else.
  bool is(const std::string& op_type) const;
  bool contains(const std::string& op_type) const;
  std::string head() const;  // the first part's spelling: "Conv"
  std::string text() const;  // "Conv+Add+Relu"

 private:
  std::vector<Part> parts_;
};

struct Kernel {
  std::string name;           // name of the first node (plus a suffix for a node's extra kernels)
  KernelOps ops;
  std::vector<int> nodes;     // model node indices, head first
  std::optional<Layer> layer; // absent: unmodelled
  std::string unmodelled_reason;
  bool compute = false;       // tensor-core work (conv, GEMM, attention): never silently left out
  // Activations read and written (weights and constants excluded), the edges
  // of the kernel graph the network terms walk (docs/model.md "Inside a network").
  std::vector<TensorRef> reads, writes;
  // op: the class follows the problem (host_call_of); inner, cast: as named.
  HostCall host_call = HostCall::op;
  // View ops (a reshape, permute or slice of an activation) the host runs
  // before launching this kernel: dispatch without a kernel (docs/model.md "Schedule").
  int host_views = 0;
};

// The host call class of a kernel: inner and cast as set, otherwise from its
// problem (conv, GEMM or attention, BatchNorm pass, any other op).
HostCall host_call_of(const Kernel& k);

// A kernel a runtime or a pass adds for `owner`'s node (a cast, a layout
// transform): named "<owner>/<what>", launched as `call`.
Kernel derived_kernel(const Kernel& owner, const std::string& suffix, RuntimeStep step, Layer layer,
                      HostCall call);

struct KernelGraph {
  std::vector<Kernel> kernels;  // in launch order
  int free_nodes = 0;           // nodes that launch nothing (shape ops, folded constants)
};

// The one reader/producer index of a kernel graph: which kernel wrote each
// tensor a kernel reads, and who reads what a kernel writes. Built once by
// whoever walks the edges (the L2 term, the search's block context, checks).
class KernelIndex {
 public:
  explicit KernelIndex(const KernelGraph& graph);
  // The kernel that last wrote the `slot`-th tensor `kernel` reads before it
  // in launch order; -1 for a tensor no kernel writes (the network's input).
  // A tensor written only by a later kernel names that kernel: launch_order_error says so.
  int producer(size_t kernel, size_t slot) const { return producers_[kernel][slot]; }
  // The kernels that read what `kernel` writes, ascending, each once.
  const std::vector<int>& consumers(size_t kernel) const { return consumers_[kernel]; }
  // The size of a tensor as its first writer (else its first reader) gives it; 0 if no kernel names it.
  int64_t tensor_bytes(const std::string& tensor) const;

 private:
  std::vector<std::vector<int>> producers_;
  std::vector<std::vector<int>> consumers_;
  std::unordered_map<std::string, int64_t> bytes_;
};

// The kernels in an order that runs every producer before its readers:
// Kahn's algorithm, ties broken by launch order, so a graph whose launch
// order is valid comes back unchanged. std::logic_error on a cycle.
std::vector<int> topological_order(const KernelGraph& graph, const KernelIndex& index);

// The first kernel that reads a tensor only a later kernel writes, as a
// sentence; nullopt when launch order respects every edge. Lowering and the
// passes must keep it so: lower_model checks it.
std::optional<std::string> launch_order_error(const KernelGraph& graph, const KernelIndex& index);

}  // namespace tilewave
