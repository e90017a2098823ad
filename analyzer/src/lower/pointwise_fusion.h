// torch.compile (inductor, default mode) lowering: convolutions and matmuls
// stay library kernels; pointwise ops, reductions and index-remapping ops
// between them become generated kernels, one per fused group, each reading
// its inputs once and writing only what leaves the group
// (docs/model.md "Runtimes").
#pragma once
#include "lower_node.h"

namespace tilewave {

KernelGraph fuse_pointwise(const LowerInput& in, const KernelEdges& edges);

}  // namespace tilewave
