// The kernels a library convolution brings besides its own, as PyTorch runs
// it (docs/model.md "Runtimes"): cuDNN's channel padding of narrow inputs,
// and the kernels that apply a folded bias or an unfolded BatchNorm.
#pragma once
#include <vector>

#include "lower_node.h"

namespace tilewave {

// True for a Conv/ConvTranspose node with a bias input.
bool conv_has_bias(const Node& n);
// bias_is_own (lowering.h): whether that bias was the model's own.

// PyTorch's inference BatchNorm on channels-last input runs `count` small
// kernels over the channels (a copy, the inverse std) before its pass.
std::vector<Kernel> batchnorm_aux_kernels(const LowerInput& in, const Kernel& owner, int64_t channels, int count);

// Eager PyTorch applies a conv's bias after the convolution. The exporter
// folded a BatchNorm into that bias, and the model as users run it has the
// BatchNorm, so the bias costs the BatchNorm's kernels: `aux_kernels`
// channel-sized ones and one elementwise pass, which reads what the conv
// writes; the conv then writes "<y>#raw".
// A bias of the conv's own (bias_is_own) is the pass alone.
std::vector<Kernel> eager_bias_kernels(const LowerInput& in, Kernel& conv, int aux_kernels);
// Re-points a kernel's output at "<y>#raw"; returns the output as it was.
TensorRef raw_output(Kernel& producer);

// cuDNN pads an input of fewer channels than one vector (an RGB stem) and
// its filter to 4 channels first: two copy kernels, launched before `conv`,
// whose input edge is re-pointed at the padded copy. Layout transforms are
// the layout pass's (passes.h), not lowering's.
std::vector<Kernel> channel_padding_kernels(const LowerInput& in, const KernelEdges& edges, Kernel& conv);

}  // namespace tilewave
