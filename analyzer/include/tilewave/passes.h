// Stage 6: passes over the typed kernel graph a runtime's lowering made
// (docs/model.md "Layout pass", "Precision pass"). Each reads the execution configuration and
// emits, as kernels of their own, the casts and layout transforms the
// runtime really launches; each tensor's bytes follow its own type.
#pragma once
#include <functional>

#include "tilewave/lowering.h"

namespace tilewave {

// The layout the library kernel of a convolution runs in when its input
// arrives in `given` (docs/model.md "Layout pass"): the one rule every
// layout transform follows. `align`: the channels of one vector, below
// which a grouped conv has no fallback (grouped_fallback).
Layout conv_kernel_layout(const ConvProblem& p, DType dtype, int align, Layout given);

// Wraps every convolution whose kernel needs another layout than its
// activations have (ExecutionConfig::activation_layout) between transforms:
// input and filter before, output back after. Under eager channels_last it
// follows each tensor's memory format instead, adding the copies PyTorch
// makes around a GroupNorm and before a convolution (docs/model.md "Layout
// pass"). Every layout transform of a kernel graph comes from here.
//
// `layer_us`, where given, is the time of a layer run alone (the cost stage's,
// handed in by the pipeline, which composes the stages): with it a pointwise
// convolution given NCHW in half precision takes the faster of its two paths,
// a GEMM per image on NCHW or transforms around the NHWC kernel, as cuDNN's
// benchmark mode picks (docs/model.md "Pointwise convolutions on NCHW").
// Without it the convolution stays on NCHW.
using LayerTime = std::function<double(const Layer&)>;
void layout_pass(const LowerInput& in, KernelGraph& graph, const LayerTime& layer_us = {});
// autocast over fp32 weights, and PyTorch's fp32 defaults (docs/model.md
// "Precision pass"). Does nothing for weights stored in the compute type.
void precision_pass(const LowerInput& in, KernelGraph& graph);

}  // namespace tilewave
