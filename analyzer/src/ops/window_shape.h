// Output sizes of sliding-window ops (Conv, ConvTranspose, pooling): the
// attributes pads/strides/dilations/auto_pad/ceil_mode/output_padding as
// ONNX defines them, for any number of spatial dims.
#pragma once
#include <vector>

#include "tilewave/shape_context.h"

namespace tilewave::window {

std::vector<int64_t> output_dims(const ShapeContext& ctx, const std::vector<int64_t>& x,
                                 const std::vector<int64_t>& kernel, bool transposed, bool ceil_mode = false);

}  // namespace tilewave::window
