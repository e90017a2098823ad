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
// channel-sized ones and one elementwise pass, which reads what `producer`
// (the conv, or its last transform) writes; `producer` then writes "<y>#raw".
// A bias of the conv's own (bias_is_own) is the pass alone.
std::vector<Kernel> eager_bias_kernels(const LowerInput& in, Kernel& producer, const Kernel& conv, int aux_kernels);
// Re-points a kernel's output at "<y>#raw"; returns the output as it was.
TensorRef raw_output(Kernel& producer);

// A library convolution with the kernels cuDNN adds around it, in launch
// order: channel padding of a narrow input, and for a grouped conv without a
// native NHWC kernel the layout transforms (input and filter to NCHW before,
// the output back after). `conv`'s edges (derived) are re-pointed at them.
struct LibraryConv {
  std::vector<Kernel> before;
  std::optional<Kernel> after;
  // The kernel that writes the conv's result: a bias pass reads what it writes.
  Kernel& result(Kernel& conv) { return after ? *after : conv; }
};
LibraryConv library_conv_kernels(const LowerInput& in, const KernelEdges& edges, Kernel& conv);

}  // namespace tilewave
