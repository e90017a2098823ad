// A candidate's blocks as an ONNX graph in the form torch.onnx exports a
// network in eval mode: BatchNorm folded into each conv's bias, activations
// as their own nodes, weights present as shapes only (as the bundled,
// weight-stripped models). The blocks mirror torchvision's: MobileNetV2's
// InvertedResidual (with MnasNet's squeeze-excitation), RegNet's
// ResBottleneckBlock, ResNet's Bottleneck and BasicBlock (docs/nas.md).
#include <cmath>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/search_space.h"
#include "tilewave_onnx.pb.h"

namespace tilewave::space {

namespace {

class NetWriter {
 public:
  NetWriter(const std::string& activation, const Shape4& input) : activation_(activation), shape_(input) {
    proto_ = std::make_shared<onnx::ModelProto>();
    proto_->set_ir_version(8);
    proto_->set_producer_name("tilewave nas");
    auto* op = proto_->add_opset_import();
    op->set_domain("");
    op->set_version(17);
    graph_ = proto_->mutable_graph();
    graph_->set_name("candidate");
    auto* in = graph_->add_input();
    in->set_name("input");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {input.n, input.c, input.h, input.w}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    x_ = "input";
  }

  const Shape4& shape() const { return shape_; }
  const std::string& x() const { return x_; }
  void set(const std::string& x, const Shape4& s) { x_ = x, shape_ = s; }
  int64_t params() const { return params_; }

  // Conv with BatchNorm folded in (a bias), as torch.onnx writes Conv2d+BN;
  // `batch_norm` false: a conv with its own bias (squeeze-excitation). The
  // parameter count is the trained network's, as torchvision counts it: a
  // BatchNorm has a scale and a shift per channel.
  std::string conv(const std::string& x, const Shape4& in, int64_t out, int64_t k, int64_t stride, int64_t groups,
                   Shape4* out_shape, bool batch_norm = true) {
    const std::string w = weight({out, in.c / groups, k, k}), b = weight({out});
    if (batch_norm) params_ += out;
    const int64_t pad = (k - 1) / 2;
    auto* n = node("Conv", {x, w, b});
    ints(n, "kernel_shape", {k, k});
    ints(n, "strides", {stride, stride});
    ints(n, "pads", {pad, pad, pad, pad});
    ints(n, "dilations", {1, 1});
    attr_int(n, "group", groups);
    *out_shape = {in.n, out, (in.h + 2 * pad - k) / stride + 1, (in.w + 2 * pad - k) / stride + 1};
    return n->output(0);
  }
  // The chain's current tensor through a conv (and the activation, if `act`).
  void conv_act(int64_t out, int64_t k, int64_t stride, int64_t groups, bool act) {
    Shape4 s;
    std::string y = conv(x_, shape_, out, k, stride, groups, &s);
    set(act ? activate(y) : y, s);
  }
  std::string activate(const std::string& x, const std::string& which = "") {
    const std::string a = which.empty() ? activation_ : which;
    if (a == "relu") return node("Relu", {x})->output(0);
    if (a == "sigmoid") return node("Sigmoid", {x})->output(0);
    if (a == "relu6") return node("Clip", {x, scalar(0.f), scalar(6.f)})->output(0);
    return node("Mul", {x, node("Sigmoid", {x})->output(0)})->output(0);  // SiLU
  }
  std::string add(const std::string& a, const std::string& b) { return node("Add", {a, b})->output(0); }
  // Squeeze-excitation: pool, two 1x1 convs (ReLU, sigmoid), scale.
  void squeeze_excite(int64_t squeeze) {
    const Shape4 in = shape_;
    Shape4 s1, s2;
    const std::string pooled = node("GlobalAveragePool", {x_})->output(0);
    const std::string a = activate(conv(pooled, {in.n, in.c, 1, 1}, squeeze, 1, 1, 1, &s1, false), "relu");
    const std::string scale = activate(conv(a, s1, in.c, 1, 1, 1, &s2, false), "sigmoid");
    x_ = node("Mul", {scale, x_})->output(0);
  }
  void max_pool(int64_t k, int64_t stride) {
    const int64_t pad = (k - 1) / 2;
    auto* n = node("MaxPool", {x_});
    ints(n, "kernel_shape", {k, k});
    ints(n, "strides", {stride, stride});
    ints(n, "pads", {pad, pad, pad, pad});
    shape_ = {shape_.n, shape_.c, (shape_.h + 2 * pad - k) / stride + 1, (shape_.w + 2 * pad - k) / stride + 1};
    x_ = n->output(0);
  }
  void classifier(int64_t classes) {
    const std::string pooled = node("GlobalAveragePool", {x_})->output(0);
    auto* flat = node("Flatten", {pooled});
    attr_int(flat, "axis", 1);
    const std::string w = weight({classes, shape_.c}), b = weight({classes});
    auto* gemm = node("Gemm", {flat->output(0), w, b});
    attr_int(gemm, "transB", 1);
    x_ = gemm->output(0);
    shape_ = {shape_.n, classes, 1, 1};
  }

  WrittenModel finish() {
    auto* out = graph_->add_output();
    out->set_name(x_);
    return {proto_, "input", x_, shape_, params_};
  }

 private:
  onnx::NodeProto* node(const char* op, std::vector<std::string> inputs) {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(fmt::format("/{}_{}", op, graph_->node_size()));
    for (auto& i : inputs) n->add_input(std::move(i));
    n->add_output(fmt::format("/{}_{}_output_0", op, graph_->node_size()));
    return n;
  }
  static void ints(onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr_int(onnx::NodeProto* n, const char* name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  // A weight of this shape, its data absent (external, not shipped).
  std::string weight(std::initializer_list<int64_t> dims) {
    auto* t = graph_->add_initializer();
    t->set_name(fmt::format("w{}", graph_->initializer_size()));
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("weights.bin");
    params_ += n;
    return t->name();
  }
  std::string scalar(float v) {
    auto* t = graph_->add_initializer();
    t->set_name(fmt::format("c{}", graph_->initializer_size()));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
    return t->name();
  }

  std::shared_ptr<onnx::ModelProto> proto_;
  onnx::GraphProto* graph_ = nullptr;
  std::string activation_;
  Shape4 shape_;
  std::string x_;
  int64_t params_ = 0;
};

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
      w.max_pool(3, 2);
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
