// Groups of ONNX nodes that an exporter wrote for one framework op, which
// runtimes launch as one kernel (docs/model.md "Framework ops").
#pragma once
#include <vector>

#include "tilewave/lowering.h"

namespace tilewave {

struct FrameworkOp {
  enum class Kind { activation, linear_bias, group_norm } kind;
  std::vector<int> nodes;  // in topological order; nodes[0] is the head
};

// Non-overlapping groups, each of two nodes or more.
std::vector<FrameworkOp> find_framework_ops(const LowerInput& in);
// One kernel per framework op, every other working node one kernel of its own.
KernelGraph lower_framework_ops(const LowerInput& in);

// The kernels PyTorch eager launches for it, `k` with its edges derived:
// the moments, the per-channel scale and shift, and their application to
// every element (docs/model.md "Framework ops").
std::vector<Kernel> group_norm_kernels(const LowerInput& in, Kernel k);

}  // namespace tilewave
