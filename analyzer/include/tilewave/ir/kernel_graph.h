// Stage 5: the typed kernel graph (docs/model.md "Pipeline"): the kernels a runtime
// launches, in launch order, with the run-time tensors each reads and
// writes. Lowering produces it, the passes rewrite it, the cost and
// schedule stages read it. Needs no ONNX and no op registry.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tilewave/dtype.h"
#include "tilewave/exec_config.h"
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
  Layout layout = Layout::nhwc;      // of a 4-D activation, as the libraries see it
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
  // op: the class follows the problem (host_call_of); inner, cast: as named.
  HostCall host_call = HostCall::op;
};

// The host call class of a kernel: inner and cast as set, otherwise from its
// problem (conv, GEMM or attention, BatchNorm pass, any other op).
HostCall host_call_of(const Kernel& k);

// A kernel a runtime or a pass adds for `owner`'s node (a cast, a layout
// transform): named "<owner>/<what>", launched as `call`.
Kernel derived_kernel(const Kernel& owner, const std::string& suffix, const std::string& ops, Layer layer,
                      HostCall call);

struct Lowering {
  std::vector<Kernel> kernels;  // in launch order
  int free_nodes = 0;           // nodes that launch nothing (shape ops, folded constants)
};

}  // namespace tilewave
