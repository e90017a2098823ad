// Writes a network as an ONNX graph in the form torch.onnx exports it in
// eval mode: BatchNorm folded into each conv's bias, activations as their own
// nodes, weights present as shapes only (as the bundled, weight-stripped
// models). Internal to space/: search-space blocks (write_blocks.cpp) and
// layer lists (layer_list.cpp) are both written with it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tilewave/search_space.h"
#include "tilewave_onnx.pb.h"

namespace tilewave::space {

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
  // Bias::own: a conv with its own bias (squeeze-excitation). The parameter
  // count is the trained network's, as torchvision counts it: a BatchNorm has
  // a scale and a shift per channel. `pad` < 0: (k - 1) / 2 x dilation.
  enum class Bias { batch_norm, own, none };
  std::string conv(const std::string& x, const Shape4& in, int64_t out, int64_t k, int64_t stride, int64_t groups,
                   Shape4* out_shape, Bias bias = Bias::batch_norm, int64_t pad = -1, int64_t dilation = 1) {
    std::vector<std::string> inputs = {x, weight({out, in.c / groups, k, k})};
    if (bias != Bias::none) inputs.push_back(weight({out}));
    if (bias == Bias::batch_norm) params_ += out;
    if (pad < 0) pad = (k - 1) / 2 * dilation;
    auto* n = node("Conv", std::move(inputs));
    ints(n, "kernel_shape", {k, k});
    ints(n, "strides", {stride, stride});
    ints(n, "pads", {pad, pad, pad, pad});
    ints(n, "dilations", {dilation, dilation});
    attr_int(n, "group", groups);
    const int64_t span = dilation * (k - 1) + 1;
    *out_shape = {in.n, out, out_dim(in.h, pad, span, stride), out_dim(in.w, pad, span, stride)};
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
    if (a == "tanh") return node("Tanh", {x})->output(0);
    if (a == "hardswish") return node("HardSwish", {x})->output(0);
    if (a == "gelu") {  // one node from opset 20 on, as PyTorch's one kernel
      proto_->mutable_opset_import(0)->set_version(20);
      return node("Gelu", {x})->output(0);
    }
    return node("Mul", {x, node("Sigmoid", {x})->output(0)})->output(0);  // SiLU
  }
  std::string add(const std::string& a, const std::string& b) { return node("Add", {a, b})->output(0); }
  // Squeeze-excitation: pool, two 1x1 convs (ReLU, sigmoid), scale.
  void squeeze_excite(int64_t squeeze) {
    const Shape4 in = shape_;
    Shape4 s1, s2;
    const std::string pooled = node("GlobalAveragePool", {x_})->output(0);
    const std::string a = activate(conv(pooled, {in.n, in.c, 1, 1}, squeeze, 1, 1, 1, &s1, Bias::own), "relu");
    const std::string scale = activate(conv(a, s1, in.c, 1, 1, 1, &s2, Bias::own), "sigmoid");
    x_ = node("Mul", {scale, x_})->output(0);
  }
  // MaxPool or AveragePool of the chain's tensor; `pad` < 0: (k - 1) / 2.
  void pool(const char* op, int64_t k, int64_t stride, int64_t pad = -1) {
    if (pad < 0) pad = (k - 1) / 2;
    auto* n = node(op, {x_});
    ints(n, "kernel_shape", {k, k});
    ints(n, "strides", {stride, stride});
    ints(n, "pads", {pad, pad, pad, pad});
    shape_ = {shape_.n, shape_.c, out_dim(shape_.h, pad, k, stride), out_dim(shape_.w, pad, k, stride)};
    x_ = n->output(0);
  }
  void classifier(int64_t classes) {
    x_ = node("GlobalAveragePool", {x_})->output(0);
    shape_.h = shape_.w = 1;
    linear(classes, true);
  }
  // Flatten (to N x C*H*W) and a fully connected layer, as torch.onnx writes nn.Linear.
  void linear(int64_t out, bool bias) {
    auto* flat = node("Flatten", {x_});
    attr_int(flat, "axis", 1);
    std::vector<std::string> inputs = {flat->output(0), weight({out, shape_.c * shape_.h * shape_.w})};
    if (bias) inputs.push_back(weight({out}));
    auto* gemm = node("Gemm", std::move(inputs));
    attr_int(gemm, "transB", 1);
    x_ = gemm->output(0);
    shape_ = {shape_.n, out, 1, 1};
  }
  // An inference BatchNorm of its own (not folded into a conv): as a model
  // that keeps it runs. Its running statistics are buffers, not parameters.
  std::string batch_norm(const std::string& x, int64_t channels) {
    std::vector<std::string> inputs = {x};
    for (int i = 0; i < 4; ++i) inputs.push_back(weight({channels}));
    params_ -= 2 * channels;
    return node("BatchNormalization", std::move(inputs))->output(0);
  }
  // A node of `op` on `inputs`, with one output; attributes via ints / attr_int.
  onnx::NodeProto* node(const char* op, std::vector<std::string> inputs) {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(fmt::format("/{}_{}", op, graph_->node_size()));
    for (auto& i : inputs) n->add_input(std::move(i));
    n->add_output(fmt::format("/{}_{}_output_0", op, graph_->node_size()));
    return n;
  }

  WrittenModel finish() {
    auto* out = graph_->add_output();
    out->set_name(x_);
    return {proto_, "input", x_, shape_, params_};
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
 private:
  // A window's output size; 0 when the window does not fit even once.
  static int64_t out_dim(int64_t in, int64_t pad, int64_t span, int64_t stride) {
    const int64_t room = in + 2 * pad - span;
    return room < 0 ? 0 : room / stride + 1;
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

}  // namespace tilewave::space
