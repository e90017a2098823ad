// Stage 6: passes over the typed kernel graph a runtime's lowering made
// (docs/model.md "Layout pass", "Precision pass"). Each reads the execution configuration and
// emits, as kernels of their own, the casts and layout transforms the
// runtime really launches; each tensor's bytes follow its own type.
#pragma once
#include "tilewave/lowering.h"

namespace tilewave {

// PyTorch's layout rules for NCHW activations (eager only; docs/model.md
// "Layout pass"). Does nothing for nhwc.
void layout_pass(const LowerInput& in, KernelGraph& graph);
// autocast over fp32 weights, and PyTorch's fp32 defaults (docs/model.md
// "Precision pass"). Does nothing for weights stored in the compute type.
void precision_pass(const LowerInput& in, KernelGraph& graph);

}  // namespace tilewave
