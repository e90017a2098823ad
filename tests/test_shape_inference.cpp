// tilewave's own shape inference (stage 2): each op's shape function under
// the opset forms it reads, and the load-time evaluation of shape arithmetic.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx_builder.h"
#include "test_helpers.h"
#include "tilewave/error.h"
#include "tilewave/lowering.h"
#include "tilewave/op_registry.h"
#include "tilewave/pipeline.h"

using namespace tilewave;
using tilewave::test::dims_of;
using tilewave::test::OnnxBuilder;
using V = std::vector<int64_t>;

namespace {

// timm's TF-"same" padding as torch.onnx writes it: the pads are computed
// from the input's size at run time, then Pad, then a VALID strided conv.
OnnxBuilder tf_same_conv(int64_t size) {
  OnnxBuilder b(13);
  b.input("x", {-1, 8, size, size});
  b.ints("i2", {2}, true);
  b.floats("two_f", {2.0f}, true);
  b.ints("one", {1}, true);
  b.ints("two", {2}, true);
  b.ints("three", {3}, true);
  b.ints("zero", {0}, true);
  b.ints("ax0", {0});
  b.ints("z2", {0, 0});
  b.weight("w", {4, 8, 3, 3});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "i2"}, {"ih"});
  OnnxBuilder::attr(b.node("Cast", {"ih"}, {"ihf"}), "to", int64_t(tilewave::onnx::TensorProto::FLOAT));
  b.node("Div", {"ihf", "two_f"}, {"q"});
  b.node("Ceil", {"q"}, {"c"});
  OnnxBuilder::attr(b.node("Cast", {"c"}, {"ci"}), "to", int64_t(tilewave::onnx::TensorProto::INT64));
  b.node("Sub", {"ci", "one"}, {"t"});
  b.node("Mul", {"t", "two"}, {"t2"});
  b.node("Add", {"t2", "three"}, {"t3"});
  b.node("Sub", {"t3", "ih"}, {"pad"});
  b.node("Max", {"pad", "zero"}, {"padm"});
  b.node("Div", {"padm", "two"}, {"half"});
  b.node("Sub", {"padm", "half"}, {"rest"});
  b.node("Unsqueeze", {"half", "ax0"}, {"u1"});
  b.node("Unsqueeze", {"rest", "ax0"}, {"u2"});
  OnnxBuilder::attr(b.node("Concat", {"z2", "u1", "u1", "z2", "u2", "u2"}, {"pads"}), "axis", int64_t(0));
  b.node("Pad", {"x", "pads"}, {"xp"});
  auto& conv = b.node("Conv", {"xp", "w"}, {"y"});
  OnnxBuilder::attr(conv, "strides", V{2, 2});
  b.output("y");
  return b;
}

}  // namespace

TEST_CASE("TF-same padding computed from the input shape resolves for any batch and size") {
  for (int64_t size : {15, 16, 224}) {
    const auto b = tf_same_conv(size);
    for (int64_t batch : {1, 7}) {
      const Model m = b.load_batch(batch);
      const int64_t out = (size + 1) / 2;
      CHECK(dims_of(m, "xp")[2] == ((out - 1) * 2 + 3 > size ? (out - 1) * 2 + 3 : size));
      CHECK(dims_of(m, "y") == V{batch, 4, out, out});
      CHECK(m.static_tensors.count("pads"));
    }
  }
}

TEST_CASE("F.pad's reversed pad list (Reshape, negative-step Slice, Transpose) evaluates") {
  OnnxBuilder b(13);
  b.input("x", {-1, 3, 10, 10});
  b.ints("p", {1, 2, 3, 4});  // torch order: W begin, W end, H begin, H end
  b.ints("zeros_shape", {1});
  b.ints("four", {4});
  b.ints("m12", {-1, 2});
  b.ints("s", {-1});
  b.ints("e", {-9223372036854775807LL});  // INT64_MIN + 1, as torch writes it
  b.ints("a", {0});
  b.ints("st", {-1});
  b.ints("m1", {-1});
  auto& zeros = b.node("ConstantOfShape", {"four"}, {"z"});
  auto* value = zeros.add_attribute();
  value->set_name("value");
  value->set_type(tilewave::onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(tilewave::onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(0);
  OnnxBuilder::attr(b.node("Concat", {"p", "z"}, {"all"}), "axis", int64_t(0));
  b.node("Reshape", {"all", "m12"}, {"pairs"});
  b.node("Slice", {"pairs", "s", "e", "a", "st"}, {"rev"});
  OnnxBuilder::attr(b.node("Transpose", {"rev"}, {"tr"}), "perm", V{1, 0});
  b.node("Reshape", {"tr", "m1"}, {"pads"});
  b.node("Pad", {"x", "pads"}, {"y"});
  b.output("y");
  const Model m = b.load_batch(2);
  REQUIRE(m.values.count("pads"));
  CHECK(m.values.at("pads").ints == V{0, 0, 3, 1, 0, 0, 4, 2});
  CHECK(dims_of(m, "y") == V{2, 3, 17, 13});
}

TEST_CASE("flatten and reshape arithmetic on Shape outputs follows the batch") {
  OnnxBuilder b(13);
  b.input("x", {-1, 16, 7, 7});
  b.ints("i0", {0}, true);
  b.ints("ax0", {0});
  b.ints("m1", {-1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "i0"}, {"n"});
  b.node("Unsqueeze", {"n", "ax0"}, {"n1"});
  OnnxBuilder::attr(b.node("Concat", {"n1", "m1"}, {"target"}), "axis", int64_t(0));
  b.node("Reshape", {"x", "target"}, {"flat"});
  b.ints("z0", {0, 4, -1});
  b.node("Reshape", {"x", "z0"}, {"copy0"});  // 0 copies the batch
  b.node("ReduceProd", {"s"}, {"numel"});
  b.output("flat");
  for (int64_t batch : {1, 3}) {
    const Model m = b.load_batch(batch);
    CHECK(dims_of(m, "flat") == V{batch, 784});
    CHECK(dims_of(m, "copy0") == V{batch, 4, 196});
    REQUIRE(m.values.count("numel"));
    CHECK(m.values.at("numel").ints == V{batch * 784});
  }
}

TEST_CASE("opset-18 forms take axes, splits and scales as inputs; older forms as attributes") {
  SUBCASE("Reduce: axes attribute before 18, input from 18 (ReduceSum from 13)") {
    OnnxBuilder old(13), now(18);
    for (auto* b : {&old, &now}) {
      b->input("x", {2, 8, 5, 5});
      b->ints("axes", {2, 3});
    }
    OnnxBuilder::attr(old.node("ReduceMean", {"x"}, {"y"}), "axes", V{2, 3});
    old.node("ReduceSum", {"x", "axes"}, {"z"});
    now.node("ReduceMean", {"x", "axes"}, {"y"});
    OnnxBuilder::attr(now.node("ReduceSum", {"x", "axes"}, {"z"}), "keepdims", int64_t(0));
    CHECK(dims_of(old.load(), "y") == V{2, 8, 1, 1});
    CHECK(dims_of(old.load(), "z") == V{2, 8, 1, 1});
    CHECK(dims_of(now.load(), "y") == V{2, 8, 1, 1});
    CHECK(dims_of(now.load(), "z") == V{2, 8});
  }
  SUBCASE("Split: attribute (11), input (13), num_outputs with a short last part (18)") {
    OnnxBuilder s11(11), s13(13), s18(18);
    for (auto* b : {&s11, &s13, &s18}) b->input("x", {1, 10, 4});
    auto& a = s11.node("Split", {"x"}, {"a", "b"});
    OnnxBuilder::attr(a, "axis", int64_t(1));
    OnnxBuilder::attr(a, "split", V{3, 7});
    s13.ints("sizes", {3, 7});
    OnnxBuilder::attr(s13.node("Split", {"x", "sizes"}, {"a", "b"}), "axis", int64_t(1));
    auto& c = s18.node("Split", {"x"}, {"a", "b", "c"});
    OnnxBuilder::attr(c, "axis", int64_t(1));
    OnnxBuilder::attr(c, "num_outputs", int64_t(3));
    for (auto* b : {&s11, &s13}) {
      const Model m = b->load();
      CHECK(dims_of(m, "a") == V{1, 3, 4});
      CHECK(dims_of(m, "b") == V{1, 7, 4});
    }
    const Model m = s18.load();
    CHECK(dims_of(m, "a") == V{1, 4, 4});
    CHECK(dims_of(m, "c") == V{1, 2, 4});
  }
  SUBCASE("Resize: scales (13), sizes (13), axes (18); Upsample scales attribute (7) and input (9)") {
    OnnxBuilder r13(13), r18(18), u7(7), u9(9);
    for (auto* b : {&r13, &r18, &u7, &u9}) b->input("x", {-1, 4, 6, 6});
    r13.floats("scales", {1, 1, 2, 2});
    r13.ints("sizes", {1, 4, 9, 10});
    r13.node("Resize", {"x", "", "scales"}, {"y"});
    r13.node("Resize", {"x", "", "", "sizes"}, {"z"});
    r18.floats("scales", {3, 0.5});
    OnnxBuilder::attr(r18.node("Resize", {"x", "", "scales"}, {"y"}), "axes", V{2, 3});
    OnnxBuilder::attr_floats(u7.node("Upsample", {"x"}, {"y"}), "scales", {1, 1, 2, 2});
    u9.floats("scales", {1, 1, 2, 2});
    u9.node("Upsample", {"x", "scales"}, {"y"});
    CHECK(dims_of(r13.load_batch(3), "y") == V{3, 4, 12, 12});
    CHECK(dims_of(r13.load_batch(3), "z") == V{1, 4, 9, 10});
    CHECK(dims_of(r18.load_batch(3), "y") == V{3, 4, 18, 3});
    CHECK(dims_of(u7.load_batch(2), "y") == V{2, 4, 12, 12});
    CHECK(dims_of(u9.load_batch(2), "y") == V{2, 4, 12, 12});
  }
  SUBCASE("Slice: attributes (9), inputs with negative steps (13)") {
    OnnxBuilder s9(9), s13(13);
    for (auto* b : {&s9, &s13}) b->input("x", {2, 10, 8});
    auto& n = s9.node("Slice", {"x"}, {"y"});
    OnnxBuilder::attr(n, "starts", V{1});
    OnnxBuilder::attr(n, "ends", V{-1});
    OnnxBuilder::attr(n, "axes", V{1});
    s13.ints("st", {-1, 0});
    s13.ints("en", {-100, 8});
    s13.ints("ax", {1, 2});
    s13.ints("sp", {-3, 2});
    s13.node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"});
    CHECK(dims_of(s9.load(), "y") == V{2, 8, 8});
    CHECK(dims_of(s13.load(), "y") == V{2, 4, 4});
  }
  SUBCASE("Squeeze and Unsqueeze: axes attribute (11), input (13)") {
    OnnxBuilder a(11), b(13);
    for (auto* m : {&a, &b}) m->input("x", {3, 1, 5});
    OnnxBuilder::attr(a.node("Squeeze", {"x"}, {"s"}), "axes", V{1});
    OnnxBuilder::attr(a.node("Unsqueeze", {"s"}, {"u"}), "axes", V{0, -1});
    b.ints("ax", {1});
    b.ints("ax2", {0, -1});
    b.node("Squeeze", {"x", "ax"}, {"s"});
    b.node("Unsqueeze", {"s", "ax2"}, {"u"});
    for (auto* m : {&a, &b}) CHECK(dims_of(m->load(), "u") == V{1, 3, 5, 1});
  }
  SUBCASE("Pad: attribute (7), input (13), input with axes (18)") {
    OnnxBuilder p7(7), p13(13), p18(18);
    for (auto* m : {&p7, &p13, &p18}) m->input("x", {1, 2, 5, 5});
    OnnxBuilder::attr(p7.node("Pad", {"x"}, {"y"}), "pads", V{0, 0, 1, 2, 0, 0, 3, 4});
    p13.ints("pads", {0, 0, 1, 2, 0, 0, 3, 4});
    p13.node("Pad", {"x", "pads"}, {"y"});
    p18.ints("pads", {1, 2, 3, 4});
    p18.ints("axes", {2, 3});
    p18.node("Pad", {"x", "pads", "", "axes"}, {"y"});
    for (auto* m : {&p7, &p13, &p18}) CHECK(dims_of(m->load(), "y") == V{1, 2, 9, 11});
  }
}

TEST_CASE("integer values evaluate through Range, ConstantOfShape, Expand, Tile, Where, Mod and comparisons") {
  OnnxBuilder b(13);
  b.input("x", {-1, 6});
  b.ints("zero", {0}, true);
  b.ints("step", {2}, true);
  b.ints("i0", {0}, true);
  b.ints("three", {3}, true);
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "i0"}, {"n"});
  b.node("Range", {"zero", "n", "step"}, {"r"});  // 0, 2, 4 ... below n
  b.ints("rep", {2});
  b.node("Tile", {"r", "rep"}, {"t"});
  b.node("Mod", {"t", "three"}, {"m"});
  b.node("Equal", {"m", "zero"}, {"eq"});
  b.node("Where", {"eq", "t", "zero"}, {"w"});
  b.ints("shape2", {2, 1});
  b.node("Expand", {"n", "shape2"}, {"e"});
  b.node("ConstantOfShape", {"shape2"}, {"c"});
  const Model m = b.load_batch(5);
  CHECK(m.values.at("r").ints == V{0, 2, 4});
  CHECK(m.values.at("t").ints == V{0, 2, 4, 0, 2, 4});
  CHECK(m.values.at("m").ints == V{0, 2, 1, 0, 2, 1});
  CHECK(m.values.at("w").ints == V{0, 0, 0, 0, 0, 0});
  CHECK(m.values.at("e").ints == V{5, 5});
  CHECK(dims_of(m, "e") == V{2, 1});
  CHECK(dims_of(m, "c") == V{2, 1});
}

TEST_CASE("inconsistent nodes fail loading with the file, the node and the problem") {
  auto conv = [](int64_t in_channels, int64_t stride) {
    OnnxBuilder b(13);
    b.input("x", {1, in_channels, 8, 8});
    b.weight("w", {16, 4, 3, 3});
    OnnxBuilder::attr(b.node("Conv", {"x", "w"}, {"y"}), "strides", V{stride, stride});
    return b;
  };
  CHECK_NOTHROW(conv(4, 1).load());
  try {
    conv(3, 1).load();
    FAIL("a channel mismatch loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("test.onnx") != std::string::npos);
    CHECK(std::string(e.what()).find("node 'y' (Conv)") != std::string::npos);
    CHECK(std::string(e.what()).find("3 channels") != std::string::npos);
  }
  CHECK_THROWS_AS(conv(4, 0).load(), InputError);
  OnnxBuilder pool(13);
  pool.input("x", {1, 4, 8, 8});
  auto& p = pool.node("MaxPool", {"x"}, {"y"});
  OnnxBuilder::attr(p, "kernel_shape", V{2, 2});
  OnnxBuilder::attr(p, "strides", V{0, 2});
  CHECK_THROWS_AS(pool.load(), InputError);
}

TEST_CASE("shape arithmetic that overflows 64 bits leaves the value unknown instead of wrapping") {
  OnnxBuilder b(13);
  b.ints("big", {INT64_MAX, INT64_MIN, 7});
  b.ints("two", {2});
  b.ints("minus_one", {-1});
  b.node("Mul", {"big", "two"}, {"mul"});
  b.node("Add", {"big", "big"}, {"add"});
  b.node("Neg", {"big"}, {"neg"});
  b.node("Div", {"big", "minus_one"}, {"div"});
  b.node("Mod", {"big", "minus_one"}, {"mod"});
  b.floats("huge", {1e30f, -1e30f});
  OnnxBuilder::attr(b.node("Cast", {"huge"}, {"cast"}), "to", int64_t(7));  // INT64
  const Model m = b.load();
  for (const char* t : {"mul", "add", "neg", "div"}) {
    CAPTURE(t);
    CHECK(!m.values.count(t));
    CHECK(m.unknown_reason.at(t).find("overflows 64-bit integers") != std::string::npos);
  }
  CHECK(m.values.at("mod").ints == V{0, 0, 0});
  CHECK(m.values.at("cast").ints == V{INT64_MAX, INT64_MIN});  // saturated, as saturating_int64 documents
  CHECK(saturating_int64(std::nan("")) == 0);
}

TEST_CASE("a binary op needs two inputs, a variadic one at least one") {
  OnnxBuilder b(13);
  b.ints("a", {1, 2});
  b.node("Add", {"a"}, {"y"});
  CHECK_THROWS_WITH_AS(b.load(), doctest::Contains("1 inputs given; the op takes 2"), InputError);
  OnnxBuilder sum(13);
  sum.ints("a", {1, 2});
  sum.node("Sum", {"a"}, {"y"});
  CHECK(sum.load().values.at("y").ints == V{1, 2});
}

TEST_CASE("Where needs its three inputs; Clip with min above max gives max, as ONNX defines it") {
  // Found by fuzz_run_onnx (tests/fuzz/corpus/onnx/found_where_two_inputs):
  // Where's value rule read a third value that was not there.
  OnnxBuilder b(13);
  b.ints("c", {1, 0});
  b.ints("x", {5, 6});
  b.node("Where", {"c", "x"}, {"y"});
  CHECK_THROWS_WITH_AS(b.load(), doctest::Contains("2 inputs given; the op takes 3"), InputError);
  OnnxBuilder ok(13);
  ok.ints("c", {1, 0});
  ok.ints("x", {5, 6});
  ok.ints("z", {7, 8});
  ok.node("Where", {"c", "x", "z"}, {"y"});
  CHECK(ok.load().values.at("y").ints == V{5, 8});
  OnnxBuilder clip(13);
  clip.floats("v", {0.f, 10.f});
  clip.floats("lo", {5.f});
  clip.floats("hi", {2.f});
  clip.node("Clip", {"v", "lo", "hi"}, {"y"});
  CHECK(clip.load().values.at("y").reals == std::vector<double>{2, 2});
}

TEST_CASE("compute ops are checked before costing: zero-sized operands, kernel_shape, weight rank, pads") {
  auto conv = [](V x, V w, const char* attr = nullptr, V value = {}) {
    OnnxBuilder b(13);
    b.input("x", x);
    b.weight("w", w);
    auto& n = b.node("Conv", {"x", "w"}, {"y"});
    if (attr) OnnxBuilder::attr(n, attr, value);
    return b;
  };
  auto message = [](OnnxBuilder b) {
    try {
      b.load();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  CHECK(message(conv({1, 4, 8, 8}, {0, 4, 3, 3})).find("weight has a zero-sized dimension (dim 0)") != std::string::npos);
  CHECK(message(conv({0, 4, 8, 8}, {8, 4, 3, 3})).find("input has a zero-sized dimension") != std::string::npos);
  CHECK(message(conv({1, 4, 8, 8}, {8, 4, 3, 3}, "kernel_shape", V{5, 5})).find("kernel_shape 5x5 differs") !=
        std::string::npos);
  CHECK(message(conv({1, 4, 8, 8}, {8, 4, 3}, nullptr)).find("weight has rank 3") != std::string::npos);
  CHECK(message(conv({1, 4, 8, 8}, {8, 4, 3, 3}, "pads", V{-1, -1, -1, -1})).find("negative pads") !=
        std::string::npos);
  CHECK(message(conv({1, 4, 8, 8}, {8, 4, 3, 3}, "dilations", V{0, 1})).find("dilation 0") != std::string::npos);
  CHECK(message(conv({1, 4, 8, 8}, {8, 4, 3, 3}, "kernel_shape", V{3, 3})) == "loaded");
  OnnxBuilder gemm(13);
  gemm.input("a", {4, 0});
  gemm.weight("b", {0, 8});
  gemm.node("MatMul", {"a", "b"}, {"y"});
  CHECK(message(gemm).find("A has a zero-sized dimension (dim 1)") != std::string::npos);
}

TEST_CASE("an op without a shape function leaves its outputs unknown, and says which op") {
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  b.node("NoSuchOp", {"x"}, {"y"});
  b.node("Relu", {"y"}, {"z"});
  const Model m = b.load();
  CHECK(!m.tensor("z"));
  CHECK(m.unknown_reason.at("y").find("NoSuchOp") != std::string::npos);
  CHECK(m.unknown_reason.at("z").find("NoSuchOp") != std::string::npos);
}

TEST_CASE("pooling output sizes: ceil_mode, SAME_UPPER, dilations") {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 112, 112});
  auto& a = b.node("MaxPool", {"x"}, {"ceil"});
  OnnxBuilder::attr(a, "kernel_shape", V{3, 3});
  OnnxBuilder::attr(a, "strides", V{2, 2});
  OnnxBuilder::attr(a, "ceil_mode", int64_t(1));
  auto& s = b.node("AveragePool", {"x"}, {"same"});
  OnnxBuilder::attr(s, "kernel_shape", V{3, 3});
  OnnxBuilder::attr(s, "strides", V{2, 2});
  OnnxBuilder::attr(s, "auto_pad", std::string("SAME_UPPER"));
  auto& d = b.node("MaxPool", {"x"}, {"dil"});
  OnnxBuilder::attr(d, "kernel_shape", V{3, 3});
  OnnxBuilder::attr(d, "dilations", V{2, 2});
  const Model m = b.load();
  CHECK(dims_of(m, "ceil") == V{1, 3, 56, 56});
  CHECK(dims_of(m, "same") == V{1, 3, 56, 56});
  CHECK(dims_of(m, "dil") == V{1, 3, 108, 108});
}

// ONNX's own inference (onnx 1.12, opsets up to 17) as a cross-check: on
// every bundled model, each tensor ONNX infers fully must have tilewave's shape.
TEST_CASE("tilewave's shapes agree with ONNX's own inference on every bundled model") {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* dir : {"", "runtime", "heldout_variants"}) {
    const fs::path d = fs::path(TILEWAVE_ONNX_MODELS) / dir;
    if (!fs::is_directory(d)) continue;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".onnx") files.push_back(e.path().string());
  }
  REQUIRE(files.size() >= 20);
  int compared = 0;
  for (const auto& f : files) {
    CAPTURE(f);
    LoadOptions o;
    o.batch = 3;
    const Model ours = load_onnx(f, o);
    ::onnx::ModelProto theirs;  // ONNX's own classes, from the same bytes: overrides applied, recorded shapes dropped
    REQUIRE(theirs.ParseFromString(ours.proto->SerializeAsString()));
    ::onnx::ShapeInferenceOptions si(false, 0, true);
    ::onnx::shape_inference::InferShapes(theirs, ::onnx::OpSchemaRegistry::Instance(), si);
    for (const auto& v : theirs.graph().value_info()) {
      const auto& shape = v.type().tensor_type().shape();
      V dims;
      bool full = v.type().tensor_type().has_shape();
      for (const auto& d : shape.dim()) {
        if (!d.has_dim_value()) full = false;
        dims.push_back(d.dim_value());
      }
      if (!full) continue;
      CAPTURE(v.name());
      CHECK(dims_of(ours, v.name()) == dims);
      ++compared;
    }
  }
  CHECK(compared > 5000);
}

TEST_CASE("new ops: opset-23 Attention, Einsum, GroupNormalization, QLinearConv, LSTM lower to the right problems") {
  OnnxBuilder b(23);
  b.import("com.microsoft", 1);
  b.input("q", {-1, 8, 197, 64});
  b.input("k", {-1, 8, 197, 64});
  b.input("v", {-1, 8, 197, 64});
  b.node("Attention", {"q", "k", "v"}, {"att"});
  OnnxBuilder::attr(b.node("Einsum", {"q", "k"}, {"scores"}), "equation", std::string("bhqd,bhkd->bhqk"));
  b.input("x", {-1, 32, 14, 14});
  b.weight("gs", {32});
  b.weight("gb", {32});
  OnnxBuilder::attr(b.node("GroupNormalization", {"x", "gs", "gb"}, {"gn"}), "num_groups", int64_t(8));
  b.input("xq", {-1, 32, 14, 14}, tilewave::onnx::TensorProto::UINT8);
  b.weight("wq", {64, 32, 3, 3}, tilewave::onnx::TensorProto::INT8);
  for (const char* s : {"xs", "ws", "ys"}) b.floats(s, {0.1f}, true);
  b.ints("xz", {0}, true);
  b.ints("wz", {0}, true);
  b.ints("yz", {0}, true);
  b.node("QLinearConv", {"xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"}, {"yq"});
  b.input("seq", {-1, 10, 16});  // batch first (layout 1), so --batch sets it
  b.weight("lw", {1, 128, 16});
  b.weight("lr", {1, 128, 32});
  auto& lstm_node = b.node("LSTM", {"seq", "lw", "lr"}, {"ly", "lh"});
  OnnxBuilder::attr(lstm_node, "hidden_size", int64_t(32));
  OnnxBuilder::attr(lstm_node, "layout", int64_t(1));
  const Model m = b.load_batch(2);
  CHECK(dims_of(m, "att") == V{2, 8, 197, 64});
  CHECK(dims_of(m, "scores") == V{2, 8, 197, 197});
  CHECK(dims_of(m, "gn") == V{2, 32, 14, 14});
  CHECK(dims_of(m, "yq") == V{2, 64, 12, 12});
  CHECK(dims_of(m, "ly") == V{2, 10, 1, 32});
  CHECK(dims_of(m, "lh") == V{2, 1, 32});
  const KernelGraph low = lower_model(m, cuda_graph_harness(default_runtime(), DType::fp16));
  std::map<std::string, Layer> by_name;
  for (const auto& k : low.kernels)
    if (k.layer) by_name[k.name] = *k.layer;
  const auto& att = std::get<AttentionProblem>(by_name.at("att").problem);
  CHECK(att.batch_heads == 16);
  CHECK(att.q_len == 197);
  CHECK(att.kv_len == 197);
  CHECK(useful_flops(by_name.at("att")) == 2 * 16 * 197 * 197 * 128);
  const auto& ein = std::get<GemmProblem>(by_name.at("scores").problem);
  CHECK((ein.batch == 16 && ein.M == 197 && ein.N == 197 && ein.K == 64));
  CHECK(by_name.at("yq").dtype == DType::int8);
  const auto& lstm = std::get<GemmProblem>(by_name.at("ly").problem);
  CHECK((lstm.M == 20 && lstm.N == 128 && lstm.K == 48));
}

namespace {

// One node on [2,6,8,8] float inputs (plus any initializers `setup` adds),
// inferred by tilewave and by ONNX 1.12 (opset 17): every output ONNX infers
// fully must match.
void cross_check(const std::string& op, int inputs, const std::function<void(OnnxBuilder&, tilewave::onnx::NodeProto&)>& setup,
                 int outputs = 1, int64_t opset = 17) {
  CAPTURE(op);
  OnnxBuilder b(opset);
  std::vector<std::string> ins, outs;
  for (int i = 0; i < inputs; ++i) {
    ins.push_back("x" + std::to_string(i));
    b.input(ins.back(), {2, 6, 8, 8});
  }
  for (int o = 0; o < outputs; ++o) outs.push_back("y" + std::to_string(o));
  auto& n = b.node(op, ins, outs);
  if (setup) setup(b, n);
  for (const auto& o : outs) b.output(o);
  const Model ours = b.load();
  ::onnx::ModelProto theirs;
  REQUIRE(theirs.ParseFromString(b.proto().SerializeAsString()));
  ::onnx::ShapeInferenceOptions si(false, 0, true);
  ::onnx::shape_inference::InferShapes(theirs, ::onnx::OpSchemaRegistry::Instance(), si);
  int compared = 0;
  for (const auto& v : theirs.graph().output()) {
    if (!v.type().tensor_type().has_shape()) continue;
    V dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    CAPTURE(v.name());
    // Where ONNX leaves a dim unknown (data-dependent sizes), only the rank is compared.
    auto mine = dims_of(ours, v.name());
    if (std::find(dims.begin(), dims.end(), -1) != dims.end()) CHECK(mine.size() == dims.size());
    else CHECK(mine == dims);
    ++compared;
  }
  CHECK(compared > 0);
}

}  // namespace

TEST_CASE("single-op graphs: tilewave's shape functions agree with ONNX's own inference") {
  using B = OnnxBuilder;
  for (const char* op : {"Abs", "Celu", "Elu", "Exp", "Floor", "Log", "Reciprocal", "Round", "Selu", "Sign",
                         "Softplus", "Softsign", "ThresholdedRelu", "Hardmax", "LogSoftmax", "LRN",
                         "MeanVarianceNormalization", "LpNormalization", "IsInf", "Identity", "Size", "Shape"})
    cross_check(op, 1, op == std::string("LRN") ? [](B&, tilewave::onnx::NodeProto& n) { B::attr(n, "size", int64_t(3)); }
                                                 : std::function<void(B&, tilewave::onnx::NodeProto&)>());
  for (const char* op : {"Mean", "Min", "Sum", "Less", "LessOrEqual", "Greater", "PRelu"}) cross_check(op, 2, nullptr);
  cross_check("Shrink", 1, [](B&, tilewave::onnx::NodeProto& n) {
    B::attr(n, "lambd", 1.5f);
    B::attr(n, "bias", 0.25f);
  });
  for (const char* op : {"ArgMax", "ArgMin"})
    cross_check(op, 1, [](B&, tilewave::onnx::NodeProto& n) { B::attr(n, "axis", int64_t(1)); });
  for (const char* op : {"ReduceL1", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMin", "ReduceSumSquare"})
    cross_check(op, 1, [](B&, tilewave::onnx::NodeProto& n) {
      B::attr(n, "axes", V{2, 3});
      B::attr(n, "keepdims", int64_t(0));
    });
  cross_check("GlobalMaxPool", 1, nullptr);
  cross_check("GlobalLpPool", 1, nullptr);
  cross_check("LpPool", 1, [](B&, tilewave::onnx::NodeProto& n) { B::attr(n, "kernel_shape", V{3, 3}); });
  cross_check("DepthToSpace", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("d", {2, 8, 4, 4});
    n.add_input("d");
    B::attr(n, "blocksize", int64_t(2));
  });
  cross_check("SpaceToDepth", 1, [](B&, tilewave::onnx::NodeProto& n) { B::attr(n, "blocksize", int64_t(2)); });
  cross_check("ConvTranspose", 1, [](B& b, tilewave::onnx::NodeProto& n) {
    b.weight("w", {6, 4, 3, 3});
    n.add_input("w");
    B::attr(n, "strides", V{2, 2});
    B::attr(n, "output_padding", V{1, 1});
  });
  cross_check("Dropout", 1, nullptr, 2);
  cross_check("TopK", 1, [](B& b, tilewave::onnx::NodeProto& n) {
    b.ints("k", {3});
    n.add_input("k");
  }, 2);
  cross_check("Trilu", 1, nullptr);
  cross_check("EyeLike", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("sq", {5, 5});
    n.add_input("sq");
  });
  cross_check("OneHot", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("idx", {2, 3}, tilewave::onnx::TensorProto::INT64);
    b.ints("depth", {10}, true);
    b.floats("vals", {0, 1});
    n.add_input("idx");
    n.add_input("depth");
    n.add_input("vals");
  });
  {
    // Compress keeps a data-dependent count; ONNX 1.12 infers nothing for it.
    OnnxBuilder b(17);
    b.input("x", {2, 6, 8, 8});
    b.input("cond", {6}, tilewave::onnx::TensorProto::BOOL);
    B::attr(b.node("Compress", {"x", "cond"}, {"y"}), "axis", int64_t(1));
    CHECK(dims_of(b.load(), "y") == V{2, -1, 8, 8});
  }
  cross_check("ReverseSequence", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("seqs", {4, 2, 3});
    b.input("lens", {2}, tilewave::onnx::TensorProto::INT64);
    n.add_input("seqs");
    n.add_input("lens");
  });
  cross_check("GRU", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("s", {7, 2, 16});
    b.weight("w", {2, 96, 16});
    b.weight("r", {2, 96, 32});
    n.add_input("s");
    n.add_input("w");
    n.add_input("r");
    n.add_output("yh");
    B::attr(n, "hidden_size", int64_t(32));
    B::attr(n, "direction", std::string("bidirectional"));
  });
  cross_check("RNN", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("s", {7, 2, 16});
    b.weight("w", {1, 32, 16});
    b.weight("r", {1, 32, 32});
    n.add_input("s");
    n.add_input("w");
    n.add_input("r");
    B::attr(n, "hidden_size", int64_t(32));
  });
  cross_check("MatMulInteger", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("a", {4, 16}, tilewave::onnx::TensorProto::UINT8);
    b.weight("bw", {16, 8}, tilewave::onnx::TensorProto::UINT8);
    n.add_input("a");
    n.add_input("bw");
  });
  cross_check("ConvInteger", 0, [](B& b, tilewave::onnx::NodeProto& n) {
    b.input("a", {1, 4, 8, 8}, tilewave::onnx::TensorProto::UINT8);
    b.weight("cw", {8, 4, 3, 3}, tilewave::onnx::TensorProto::UINT8);
    n.add_input("a");
    n.add_input("cw");
  });
}

TEST_CASE("Shrink: its input's shape, known values shrunk, one elementwise kernel; wrong forms refused") {
  OnnxBuilder b(9);  // Shrink's first opset
  b.input("x", {-1, 6, 8, 8});
  auto& shrink = b.node("Shrink", {"x"}, {"y"});
  OnnxBuilder::attr(shrink, "lambd", 1.5f);
  OnnxBuilder::attr(shrink, "bias", 0.25f);
  b.node("Relu", {"y"}, {"r"});
  b.output("r");
  // Known values: above lambd less bias, below -lambd plus bias, 0 between.
  b.floats("c", {-2.f, -1.5f, 0.f, 1.f, 2.f});
  auto& folded = b.node("Shrink", {"c"}, {"k"});
  OnnxBuilder::attr(folded, "lambd", 1.5f);
  OnnxBuilder::attr(folded, "bias", 0.25f);
  b.floats("d", {-0.75f, 0.25f, 0.5f, 0.75f});
  b.node("Shrink", {"d"}, {"kd"});  // defaults: lambd 0.5, bias 0
  b.output("k");
  b.output("kd");
  const Model m = b.load_batch(2);
  CHECK(dims_of(m, "y") == V{2, 6, 8, 8});
  CHECK(m.values.at("k").reals == std::vector<double>{-1.75, 0, 0, 0, 1.75});
  CHECK(m.values.at("kd").reals == std::vector<double>{-0.75, 0, 0, 0.75});
  // Eager: its own memory-bound kernel, 2*6*8*8 = 768 elements read once and
  // written once (fp16: 2 * 768 * 2 = 3072 bytes). The two over constants are
  // weight-only subgraphs: PyTorch runs them on every forward, an engine
  // launches nothing for them (docs/model.md "Weight-only subgraphs").
  auto kernels = [&](const char* runtime) {
    return lower_model(m, cuda_graph_harness(*find_runtime(runtime), DType::fp16)).kernels;
  };
  const auto eager = kernels("eager");
  REQUIRE(eager.size() == 4);
  REQUIRE(kernels("tensorrt").size() == 1);
  CHECK(eager[0].ops.text() == "Shrink");
  const auto& e = std::get<MemoryProblem>(eager[0].layer->problem);
  CHECK((e.op == MemoryOp::eltwise && e.elems == 768 && e.inputs == 1));
  CHECK(eager[0].layer->extra_bytes == 0);
  CHECK(min_bytes(*eager[0].layer) == 3072);
  // Inductor: Shrink and the Relu after it are one generated kernel.
  const auto inductor = kernels("inductor");
  REQUIRE(inductor.size() == 3);
  CHECK(inductor[0].ops.text() == "Shrink+Relu");
  // Keeps channels (advise pads through it); not an activation advise moves with its conv.
  CHECK(OpRegistry::builtin().has_trait("", "Shrink", op_trait::carries_channels));
  CHECK_FALSE(OpRegistry::builtin().has_trait("", "Shrink", op_trait::activation));
  // One input, FLOAT attributes: anything else is one error naming the node.
  OnnxBuilder two(9);
  two.input("x", {1, 4});
  two.input("z", {1, 4});
  two.node("Shrink", {"x", "z"}, {"y"});
  CHECK_THROWS_WITH_AS(two.load(), doctest::Contains("2 inputs given; the op takes 1"), InputError);
  OnnxBuilder int_lambd(9);
  int_lambd.input("x", {1, 4});
  OnnxBuilder::attr(int_lambd.node("Shrink", {"x"}, {"y"}), "lambd", int64_t(1));
  CHECK_THROWS_WITH_AS(int_lambd.load(), doctest::Contains("attribute 'lambd' is INT; ONNX defines it as FLOAT"),
                       InputError);
  OnnxBuilder floats_bias(9);
  floats_bias.input("x", {1, 4});
  OnnxBuilder::attr_floats(floats_bias.node("Shrink", {"x"}, {"y"}), "bias", {1.f, 2.f});
  CHECK_THROWS_WITH_AS(floats_bias.load(), doctest::Contains("attribute 'bias' is FLOATS; ONNX defines it as FLOAT"),
                       InputError);
}

TEST_CASE("ONNX Runtime's com.microsoft forms and the remaining new ops infer and lower") {
  OnnxBuilder b(23);
  b.import("com.microsoft", 1);
  const std::string ms = "com.microsoft";
  b.input("h", {-1, 128, 256});
  b.weight("g", {256});
  b.node("RMSNormalization", {"h", "g"}, {"rms"});
  b.node("SimplifiedLayerNormalization", {"h", "g"}, {"sln"}, ms);
  b.node("SkipSimplifiedLayerNormalization", {"h", "rms", "g"}, {"ssln"}, ms);
  for (const char* op : {"FastGelu", "Gelu", "QuickGelu"}) b.node(op, {"h"}, {std::string("act_") + op}, ms);
  b.node("BiasAdd", {"h", "h", "h"}, {"act_BiasAdd"}, ms);  // X, bias, skip
  b.node("Mish", {"h"}, {"mish"});
  b.weight("wt", {512, 256});
  auto& fm = b.node("FusedMatMul", {"h", "wt"}, {"fm"}, ms);
  OnnxBuilder::attr(fm, "transB", int64_t(1));
  auto& mha = b.node("MultiHeadAttention", {"h", "h", "fm"}, {"mha"}, ms);
  OnnxBuilder::attr(mha, "num_heads", int64_t(4));
  b.input("img", {-1, 16, 10, 10});
  b.weight("cw", {32, 16, 3, 3});
  b.node("FusedConv", {"img", "cw"}, {"fc"}, ms);
  b.input("qa", {-1, 64}, tilewave::onnx::TensorProto::UINT8);
  b.weight("qb", {64, 32}, tilewave::onnx::TensorProto::UINT8);
  for (const char* s : {"sa", "sb", "sy"}) b.floats(s, {0.1f}, true);
  for (const char* s : {"za", "zb", "zy"}) b.ints(s, {0}, true);
  b.node("QLinearMatMul", {"qa", "sa", "za", "qb", "sb", "zb", "sy", "zy"}, {"qmm"});
  b.node("QLinearMul", {"qa", "sa", "za", "qa", "sa", "za", "sy", "zy"}, {"qmul"}, ms);
  for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"})
    b.node(op, {"qa", "sa", "za", "sy", "zy"}, {std::string("q_") + op}, ms);
  b.node("DynamicQuantizeLinear", {"h"}, {"dq", "dq_scale", "dq_zp"});
  b.input("bits", {-1}, tilewave::onnx::TensorProto::INT64);
  b.node("Or", {"bits", "bits"}, {"or"});
  b.node("Xor", {"bits", "bits"}, {"xor"});
  auto& shift = b.node("BitShift", {"bits", "bits"}, {"shift"});
  OnnxBuilder::attr(shift, "direction", std::string("LEFT"));
  b.node("NonZero", {"bits"}, {"nz"});
  auto& l1 = b.node("ReduceL1", {"h"}, {"l1"});
  OnnxBuilder::attr(l1, "keepdims", int64_t(0));
  const Model m = b.load_batch(2);
  for (const char* t : {"rms", "sln", "ssln", "act_FastGelu", "act_Gelu", "act_QuickGelu", "act_BiasAdd", "mish", "dq"})
    CHECK(dims_of(m, t) == V{2, 128, 256});
  CHECK(dims_of(m, "fm") == V{2, 128, 512});
  CHECK(dims_of(m, "mha") == V{2, 128, 512});
  CHECK(dims_of(m, "fc") == V{2, 32, 8, 8});
  CHECK(dims_of(m, "qmm") == V{2, 32});
  CHECK(dims_of(m, "qmul") == V{2, 64});
  CHECK(dims_of(m, "q_QLinearSoftmax") == V{2, 64});
  CHECK(dims_of(m, "dq_scale") == V{});
  CHECK(dims_of(m, "or") == V{2});
  CHECK(dims_of(m, "xor") == V{2});
  CHECK(dims_of(m, "shift") == V{2});
  CHECK(dims_of(m, "nz") == V{1, -1});
  CHECK(dims_of(m, "l1") == V{});
  const KernelGraph low = lower_model(m, cuda_graph_harness(default_runtime(), DType::fp16));
  std::map<std::string, Layer> by_name;
  for (const auto& k : low.kernels)
    if (k.layer) by_name[k.name] = *k.layer;
  const auto& att = std::get<AttentionProblem>(by_name.at("mha").problem);
  CHECK((att.batch_heads == 8 && att.q_len == 128 && att.kv_len == 128 && att.head_dim == 64 && att.v_head_dim == 128));
  const auto& mm = std::get<GemmProblem>(by_name.at("fm").problem);
  CHECK((mm.M == 256 && mm.N == 512 && mm.K == 256));
  CHECK(std::holds_alternative<ConvProblem>(by_name.at("fc").problem));
  CHECK(by_name.at("qmm").dtype == DType::int8);
  CHECK(std::get<GemmProblem>(by_name.at("qmm").problem).K == 64);
}

TEST_CASE("attention written as MatMul-scale-Softmax-MatMul is one flash-attention kernel unless unfused") {
  // Hand-written attention (the scores scaled): inductor fuses it, eager runs it op by op.
  OnnxBuilder b(17);
  b.input("q", {-1, 4, 64, 32});
  b.input("kt", {-1, 4, 32, 80});
  b.input("v", {-1, 4, 80, 16});
  b.floats("scale", {0.125f}, true);
  b.node("MatMul", {"q", "kt"}, {"s"});
  b.node("Mul", {"s", "scale"}, {"ss"});
  OnnxBuilder::attr(b.node("Softmax", {"ss"}, {"p"}), "axis", int64_t(-1));
  b.node("MatMul", {"p", "v"}, {"o"});
  b.node("Relu", {"o"}, {"y"});
  b.output("y");
  const Model m = b.load_batch(3);
  ExecutionConfig exec = cuda_graph_harness(*find_runtime("inductor"), DType::fp16);
  const KernelGraph fused = lower_model(m, exec);
  exec.fuse_attention = false;
  const KernelGraph unfused = lower_model(m, cuda_graph_harness(default_runtime(), DType::fp16));
  REQUIRE(fused.kernels.size() == 2);  // attention, Relu
  const auto& a = std::get<AttentionProblem>(fused.kernels[0].layer->problem);
  CHECK((a.batch_heads == 12 && a.q_len == 64 && a.kv_len == 80 && a.head_dim == 32 && a.v_head_dim == 16));
  CHECK(fused.kernels[0].nodes.size() == 4);
  CHECK(useful_flops(*fused.kernels[0].layer) == 2 * 12 * 64 * 80 * (32 + 16));
  CHECK(unfused.kernels.size() == 5);  // eager: MatMul, Mul, Softmax, MatMul, Relu
  ExecutionConfig off = cuda_graph_harness(*find_runtime("inductor"), DType::fp16);
  off.fuse_attention = false;
  CHECK(lower_model(m, off).kernels.size() > 2);  // --attention unfused
}

// torch.onnx's scaled_dot_product_attention: Q and K each scaled by the root of the scale, then
// MatMul, Softmax, MatMul.
static Model sdpa_export(std::vector<int64_t> q, std::vector<int64_t> kt, std::vector<int64_t> v) {
  OnnxBuilder b(17);
  b.input("q", q);
  b.input("kt", kt);
  b.input("v", v);
  b.floats("root", {0.3535f}, true);
  b.node("Mul", {"q", "root"}, {"qs"});
  b.node("Mul", {"kt", "root"}, {"ks"});
  b.node("MatMul", {"qs", "ks"}, {"s"});
  OnnxBuilder::attr(b.node("Softmax", {"s"}, {"p"}), "axis", int64_t(-1));
  b.node("MatMul", {"p", "v"}, {"o"});
  b.output("o");
  return b.load_batch(3);
}

TEST_CASE("scaled_dot_product_attention's export, Q and K each scaled by the root of the scale, is fused under eager too") {
  const Model m = sdpa_export({-1, 4, 64, 32}, {-1, 4, 32, 80}, {-1, 4, 80, 16});
  ExecutionConfig exec = cuda_graph_harness(default_runtime(), DType::fp16);
  const KernelGraph eager = lower_model(m, exec);
  REQUIRE(eager.kernels.size() == 1);
  CHECK(eager.kernels[0].ops.is(RuntimeStep::attention));
  CHECK(eager.kernels[0].nodes.size() == 5);  // both scalings run inside the kernel
  exec.fuse_attention = false;
  CHECK(lower_model(m, exec).kernels.size() == 5);
}

TEST_CASE("eager: a ViT's qkv permute and unbind feed scaled_dot_product_attention as views, and its output's head swap is free") {
  OnnxBuilder b(17);
  b.input("qkv", {-1, 50, 3, 4, 16});
  b.ints("parts", {1, 1, 1});
  b.ints("axis0", {0});
  b.floats("root", {0.5f}, true);
  OnnxBuilder::attr(b.node("Transpose", {"qkv"}, {"t"}), "perm", std::vector<int64_t>{2, 0, 3, 1, 4});
  OnnxBuilder::attr(b.node("Split", {"t", "parts"}, {"s0", "s1", "s2"}), "axis", int64_t(0));
  b.node("Squeeze", {"s0", "axis0"}, {"q"});
  b.node("Squeeze", {"s1", "axis0"}, {"k"});
  b.node("Squeeze", {"s2", "axis0"}, {"v"});
  OnnxBuilder::attr(b.node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
  b.node("Mul", {"q", "root"}, {"qs"});
  b.node("Mul", {"kt", "root"}, {"ks"});
  b.node("MatMul", {"qs", "ks"}, {"sc"});
  OnnxBuilder::attr(b.node("Softmax", {"sc"}, {"p"}), "axis", int64_t(-1));
  b.node("MatMul", {"p", "v"}, {"o"});
  OnnxBuilder::attr(b.node("Transpose", {"o"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  b.output("y");
  const Model m = b.load_batch(2);
  const KernelGraph eager = lower_model(m, cuda_graph_harness(default_runtime(), DType::fp16));
  REQUIRE(eager.kernels.size() == 1);
  CHECK(eager.kernels[0].ops.is(RuntimeStep::attention));
  // Other runtimes keep their own rules: torch.compile's lowering is not eager's views.
  CHECK(lower_model(m, cuda_graph_harness(*find_runtime("inductor"), DType::fp16)).kernels.size() > 1);
}

TEST_CASE("an attention chain with a mask added to its scores is a masked attention problem; a scalar add is not") {
  for (bool mask : {true, false}) {
    CAPTURE(mask);
    OnnxBuilder b(17);
    b.input("q", {-1, 4, 64, 32});
    b.input("kt", {-1, 4, 32, 80});
    b.input("v", {-1, 4, 80, 80});
    b.input("bias", {1, 4, 64, 80});
    b.floats("root", {0.3535f}, true);
    b.floats("shift", {0.5f}, true);
    b.node("Mul", {"q", "root"}, {"qs"});
    b.node("Mul", {"kt", "root"}, {"ks"});
    b.node("MatMul", {"qs", "ks"}, {"s"});
    b.node("Add", {"s", mask ? "bias" : "shift"}, {"sb"});
    OnnxBuilder::attr(b.node("Softmax", {"sb"}, {"p"}), "axis", int64_t(-1));
    b.node("MatMul", {"p", "v"}, {"o"});
    b.node("Add", {"o", "bias"}, {"y"});  // keeps the bias an input either way
    b.output("y");
    const KernelGraph g = lower_model(b.load_batch(2), cuda_graph_harness(default_runtime(), DType::fp16));
    REQUIRE(g.kernels.size() == 2);  // attention, then the add
    CHECK(std::get<AttentionProblem>(g.kernels[0].layer->problem).masked == mask);
  }
}

TEST_CASE("eager runs scaled_dot_product_attention's math path for 5-D inputs and one key head over several") {
  // calibrate/data/h200/sdpa_paths: the fused kernel takes 4-D inputs whose keys have the queries' heads.
  const auto kernels = [](std::vector<int64_t> q, std::vector<int64_t> kt, std::vector<int64_t> v) {
    const Model m = sdpa_export(q, kt, v);
    return std::pair{lower_model(m, cuda_graph_harness(default_runtime(), DType::fp16)).kernels.size(),
                     lower_model(m, cuda_graph_harness(*find_runtime("inductor"), DType::fp16)).kernels.size()};
  };
  CHECK(kernels({-1, 4, 64, 32}, {-1, 4, 32, 80}, {-1, 4, 80, 16}) == std::pair<size_t, size_t>{1, 1});
  CHECK(kernels({-1, 4, 64, 32}, {-1, 1, 32, 80}, {-1, 1, 80, 16}).first == 5);     // one key head, broadcast
  CHECK(kernels({-1, 4, 64, 32}, {-1, 1, 32, 80}, {-1, 1, 80, 16}).second == 1);    // inductor still fuses it
  CHECK(kernels({-1, 1, 64, 32}, {-1, 1, 32, 80}, {-1, 1, 80, 16}).first == 1);     // one head each: fused
  CHECK(kernels({-1, 3, 4, 64, 32}, {-1, 3, 4, 32, 80}, {-1, 3, 4, 80, 16}).first == 5);  // 5-D
}

TEST_CASE("QDQ graphs: the conv is int8; TensorRT folds Q/DQ, eager runs them as elementwise kernels") {
  OnnxBuilder b(13);
  b.input("x", {-1, 16, 14, 14});
  b.floats("s", {0.05f}, true);
  b.ints("z", {0}, true);
  b.node("QuantizeLinear", {"x", "s"}, {"xq"});
  b.node("DequantizeLinear", {"xq", "s"}, {"xd"});
  b.weight("w", {32, 16, 3, 3});
  b.node("Conv", {"xd", "w"}, {"y"});
  b.node("Relu", {"y"}, {"r"});
  b.node("QuantizeLinear", {"r", "s"}, {"rq"});
  b.output("rq");
  const Model m = b.load_batch(4);
  auto kernels = [&](const char* runtime) {
    return lower_model(m, cuda_graph_harness(*find_runtime(runtime), DType::fp16)).kernels;
  };
  const auto trt = kernels("tensorrt");
  REQUIRE(trt.size() == 1);  // the int8 conv with its ReLU epilogue
  CHECK(trt[0].layer->dtype == DType::int8);
  const auto eager = kernels("eager");
  int quant = 0;
  for (const auto& k : eager) quant += k.ops.is("QuantizeLinear") || k.ops.is("DequantizeLinear");
  CHECK(quant == 3);
}

TEST_CASE("a future opset loads with a note that says which forms are read") {
  OnnxBuilder b(25);
  b.input("x", {1, 4});
  b.node("Relu", {"x"}, {"y"});
  const Model m = b.load();
  CHECK(dims_of(m, "y") == V{1, 4});
  REQUIRE(m.notes.size() == 1);
  CHECK(m.notes[0].find("opset 25, newer than the 23") != std::string::npos);
}

TEST_CASE("a node output that reuses an initializer's name drops the initializer's value (CI fuzz finding)") {
  // The stale two-element value of "s" once met the node's five-element shape
  // in Gather, which read past the value's end.
  OnnxBuilder b(13);
  b.input("x", {5}, tilewave::onnx::TensorProto::INT64);
  b.ints("s", {7, 7});
  b.ints("i4", {4}, true);
  b.node("Neg", {"x"}, {"s"});
  b.node("Gather", {"s", "i4"}, {"g"});
  b.output("g");
  const Model m = b.load();
  CHECK(dims_of(m, "s") == V{5});
  CHECK(dims_of(m, "g") == V{});
  CHECK_FALSE(m.values.count("s"));
  CHECK_FALSE(m.values.count("g"));
}
