#include "window_shape.h"

#include <fmt/format.h>

namespace tilewave::window {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int64_t kMaxWindowAttr = int64_t(1) << 31;

}  // namespace

std::vector<int64_t> output_dims(const ShapeContext& ctx, const std::vector<int64_t>& x,
                                 const std::vector<int64_t>& kernel, bool transposed, bool ceil_mode) {
  const size_t n = x.size() - 2;
  if (kernel.size() != n) ctx.fail(fmt::format("kernel has {} spatial dims, input {}", kernel.size(), n));
  auto per_dim = [&](const char* name, int64_t fallback, size_t count) {
    std::vector<int64_t> v = attr_ints(ctx.node, name);
    if (v.empty()) v.assign(count, fallback);
    if (v.size() != count) ctx.fail(fmt::format("'{}' has {} values; {} expected", name, v.size(), count));
    // Bounded so that no product below can overflow 64 bits.
    for (int64_t x : v)
      if (x > kMaxWindowAttr) ctx.fail(fmt::format("'{}' has a value of {}, beyond 2^31", name, x));
    return v;
  };
  const auto strides = per_dim("strides", 1, n);
  const auto dilations = per_dim("dilations", 1, n);
  auto pads = per_dim("pads", 0, 2 * n);
  const std::string auto_pad = attr_string(ctx.node, "auto_pad", "NOTSET");
  for (size_t k = 0; k < n; ++k) {
    if (strides[k] <= 0) ctx.fail(fmt::format("stride {} in dim {}", strides[k], k));
    if (dilations[k] <= 0) ctx.fail(fmt::format("dilation {} in dim {}", dilations[k], k));
    if (kernel[k] <= 0 || kernel[k] > kMaxWindowAttr) ctx.fail(fmt::format("kernel size {} in dim {}", kernel[k], k));
    if (pads[k] < 0 || pads[k + n] < 0) ctx.fail("negative pads");
  }
  std::vector<int64_t> out(n, -1);
  if (transposed) {
    const auto output_shape = attr_ints(ctx.node, "output_shape");
    if (!output_shape.empty() && output_shape.size() < n)
      ctx.fail(fmt::format("'output_shape' has {} values for {} spatial dims", output_shape.size(), n));
    const auto output_padding = per_dim("output_padding", 0, n);
    for (size_t k = 0; k < n; ++k) {
      const int64_t in = x[k + 2];
      if (!output_shape.empty()) {
        out[k] = output_shape[output_shape.size() - n + k];
        continue;
      }
      if (in < 0) continue;
      // In 128 bits: a stride of 2^31 times a dim of 2^50 passes int64.
      const __int128 full = __int128(strides[k]) * (in - 1) + output_padding[k] + __int128(kernel[k] - 1) * dilations[k] + 1;
      const __int128 wide = (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") ? __int128(in) * strides[k]
                                                                                   : full - pads[k] - pads[k + n];
      if (wide > kMaxTensorElems) ctx.fail(fmt::format("output dim {} would pass 2^50", k));
      out[k] = int64_t(wide);
      if (out[k] <= 0) ctx.fail(fmt::format("output dim {} would be {}", k, out[k]));
    }
    return out;
  }
  for (size_t k = 0; k < n; ++k) {
    const int64_t in = x[k + 2];
    if (in < 0) continue;
    const int64_t span = (kernel[k] - 1) * dilations[k] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[k] = ceil_div(in, strides[k]);
    } else if (auto_pad == "VALID") {
      out[k] = in >= span ? (in - span) / strides[k] + 1 : 0;
    } else {
      const int64_t padded = in + pads[k] + pads[k + n];
      if (padded < span) ctx.fail(fmt::format("window of {} does not fit the padded input of {} (dim {})", span, padded, k));
      out[k] = ceil_mode ? ceil_div(padded - span, strides[k]) + 1 : (padded - span) / strides[k] + 1;
      // ceil_mode: the last window must start inside the input or left padding.
      if (ceil_mode && (out[k] - 1) * strides[k] >= in + pads[k]) --out[k];
    }
    if (out[k] <= 0) ctx.fail(fmt::format("output dim {} would be {}", k, out[k]));
  }
  return out;
}

}  // namespace tilewave::window
