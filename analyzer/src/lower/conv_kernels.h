// The kernels a library convolution brings besides its own, as PyTorch runs
// it (docs/model.md "Runtimes"): cuDNN's channel padding of narrow inputs,
// and the kernels that apply a folded bias or an unfolded BatchNorm.
#pragma once
#include <vector>

#include "lower_node.h"

namespace tilewave {

// True for a Conv/ConvTranspose node with a bias input.
bool conv_has_bias(const Node& n);
// Whether a conv's bias was the model's own rather than a BatchNorm the
// exporter folded in. torch.onnx keeps a parameter's name ("layer.0.bias")
// and names a folded one after the node ("onnx::Conv_497"); a conv over a
// 1x1 map (squeeze-excitation, classifier heads) never follows a BatchNorm.
bool bias_is_own(const Node& conv, const ConvProblem& p);

// cuDNN pads an input of fewer channels than one vector (an RGB stem) and
// its filter to 4 channels first: two copy kernels. Empty for other convs.
// `conv`'s edges (derived) are re-pointed at the padded copy.
std::vector<Kernel> channel_padding_kernels(const LowerInput& in, const KernelEdges& edges, Kernel& conv);

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

// cuDNN runs a grouped conv without a native NHWC kernel between layout
// transforms: the input and the filter to NCHW before, the output back after.
struct GroupedTransforms {
  std::vector<Kernel> before;
  std::optional<Kernel> after;
};
GroupedTransforms grouped_transform_kernels(const LowerInput& in, Kernel& conv);

}  // namespace tilewave
