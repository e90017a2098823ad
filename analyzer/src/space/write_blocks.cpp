// A candidate's blocks as an ONNX graph (net_writer.h). The blocks mirror
// torchvision's: MobileNetV2's InvertedResidual (with MnasNet's
// squeeze-excitation), RegNet's ResBottleneckBlock, ResNet's Bottleneck and
// BasicBlock (docs/nas.md).
#include <cmath>

#include "tilewave/error.h"
#include "tilewave/search_space.h"
#include "net_writer.h"

namespace tilewave::space {

namespace {

void write_block(NetWriter& w, const Block& b) {
  using K = Block::Kind;
  const Shape4 in = w.shape();
  const std::string block_in = w.x();
  const auto& p = b.params;
  switch (b.kind) {
    case K::stem:  // 3x3 stride-2 conv
      w.conv_act(p[0], 3, 2, 1, true);
      break;
    case K::resnet_stem:  // 7x7 stride-2 conv, 3x3 stride-2 max pool
      w.conv_act(p[0], 7, 2, 1, true);
      w.pool("MaxPool", 3, 2);
      break;
    case K::mbconv: {  // out, expansion x100, kernel, stride, se
      const int64_t hidden = int64_t(std::nearbyint(double(in.c) * double(p[1]) / 100.0));
      if (hidden != in.c) w.conv_act(hidden, 1, 1, 1, true);
      w.conv_act(hidden, p[2], p[3], hidden, true);
      if (p[4]) w.squeeze_excite(std::max<int64_t>(1, in.c / 4));
      w.conv_act(p[0], 1, 1, 1, false);
      if (p[3] == 1 && in.c == p[0]) w.set(w.add(block_in, w.x()), w.shape());
      break;
    }
    case K::xblock: {  // out, stride, group width, bottleneck x100, se
      const int64_t w_b = int64_t(std::nearbyint(double(p[0]) * double(p[3]) / 100.0));
      std::string shortcut = block_in;
      if (in.c != p[0] || p[1] != 1) {
        Shape4 s;
        shortcut = w.conv(block_in, in, p[0], 1, p[1], 1, &s);
      }
      w.conv_act(w_b, 1, 1, 1, true);
      w.conv_act(w_b, 3, p[1], std::max<int64_t>(1, w_b / p[2]), true);
      if (p[4]) w.squeeze_excite(std::max<int64_t>(1, int64_t(std::nearbyint(0.25 * double(in.c)))));
      w.conv_act(p[0], 1, 1, 1, false);
      w.set(w.activate(w.add(shortcut, w.x())), w.shape());
      break;
    }
    case K::bottleneck:
    case K::basic: {  // width, stride; a bottleneck's output is 4 x width
      const bool bottleneck = b.kind == K::bottleneck;
      const int64_t out = bottleneck ? 4 * p[0] : p[0];
      std::string shortcut = block_in;
      if (in.c != out || p[1] != 1) {
        Shape4 s;
        shortcut = w.conv(block_in, in, out, 1, p[1], 1, &s);
      }
      if (bottleneck) {
        w.conv_act(p[0], 1, 1, 1, true);
        w.conv_act(p[0], 3, p[1], 1, true);
        w.conv_act(out, 1, 1, 1, false);
      } else {
        w.conv_act(p[0], 3, p[1], 1, true);
        w.conv_act(out, 3, 1, 1, false);
      }
      w.set(w.activate(w.add(shortcut, w.x())), w.shape());
      break;
    }
    case K::head:  // head width (0: none), classes
      if (p[0] > 0) w.conv_act(p[0], 1, 1, 1, true);
      w.classifier(p[1]);
      break;
  }
}

}  // namespace

WrittenModel write_blocks(const SearchSpace& s, const std::vector<Block>& blocks, const Shape4& input) {
  NetWriter w(s.activation, input);
  for (const auto& b : blocks) {
    if (w.shape().h < 1 || w.shape().w < 1)
      throw InputError(s.source_file, "a candidate's feature map shrinks below 1x1: too many stride-2 stages "
                                      "for the input size");
    write_block(w, b);
  }
  return w.finish();
}

}  // namespace tilewave::space
