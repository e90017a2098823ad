// Op registry and the two execution models.
#include <doctest/doctest.h>

#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/op_registry.h"

using namespace tilewave;

namespace {
Lowering lower(const std::string& path, Fusion f, int64_t batch = 2) {
  LoadOptions o;
  o.batch = batch;
  const Model m = load_onnx(path, o);
  return lower_model(m, build_layer_graph(m), f, DType::fp16);
}
std::vector<std::string> ops(const Lowering& l) {
  std::vector<std::string> out;
  for (const auto& k : l.kernels) out.push_back(k.ops);
  return out;
}
}  // namespace

TEST_CASE("--fusion none: one kernel per working node; Flatten launches nothing") {
  const Lowering l = lower(test::data("tiny_cnn.onnx"), Fusion::none);
  CHECK(ops(l) == std::vector<std::string>{"Conv", "Relu", "Conv", "Add", "Relu", "MaxPool", "GlobalAveragePool",
                                           "Gemm"});
  CHECK(l.free_nodes == 1);
}

TEST_CASE("--fusion none: an exporter's decomposition of one framework op is one kernel") {
  const Lowering l = lower(test::data("activations.onnx"), Fusion::none);
  // GELU and SiLU read x twice: one kernel each; Relu -> Sigmoid is a plain
  // chain; MatMul + bias is one GEMM; the NCHW<->NHWC permutes are views,
  // the (0,1,3,2) transpose is a real copy.
  CHECK(ops(l) == std::vector<std::string>{"Div+Erf+Add+Mul+Mul", "Relu", "Sigmoid", "Sigmoid+Mul", "MatMul+Add",
                                           "Transpose"});
  CHECK(l.free_nodes == 2);
  const auto& gelu = std::get<MemoryProblem>(l.kernels[0].layer->problem);
  CHECK(gelu.inputs == 1);
  CHECK(gelu.elems == 2 * 8 * 4 * 4);
  CHECK(l.kernels[4].layer->extra_bytes == 16 * 2);  // the fp16 bias, read by the epilogue
}

TEST_CASE("ConvNeXt-T lowers to the 137 kernels PyTorch launches for it") {
  // calibrate/data/h200/netbench.jsonl: 137 kernels at batch 1, 16 and 128.
  const Lowering l = lower(test::zoo("convnext_tiny.onnx"), Fusion::none, 16);
  CHECK(l.kernels.size() == 137);
  const auto names = ops(l);
  CHECK(std::count(names.begin(), names.end(), "Div+Erf+Add+Mul+Mul") == 18);
  CHECK(std::count(names.begin(), names.end(), "MatMul+Add") == 36);
  CHECK(std::count(names.begin(), names.end(), "Transpose") == 0);
}

TEST_CASE("--fusion trt: conv absorbs activation and the residual add") {
  const Lowering l = lower(test::data("tiny_cnn.onnx"), Fusion::trt);
  CHECK(ops(l) == std::vector<std::string>{"Conv+Relu", "Conv+Add+Relu", "MaxPool", "GlobalAveragePool", "Gemm"});
  // The fused residual read is charged to the second conv: 2x16x32x32 fp16 values.
  const Layer& second = *l.kernels[1].layer;
  CHECK(second.extra_bytes == 2 * 16 * 32 * 32 * 2);
}

TEST_CASE("trt fusion never absorbs an op whose other operand depends on the head (SE blocks)") {
  const Lowering l = lower(test::zoo("efficientnet_b0.onnx"), Fusion::trt, 1);
  for (const auto& k : l.kernels) {
    CAPTURE(k.ops);
    // The SE block's scale (Mul) reads a value computed from the conv output
    // through pooling; it cannot be part of that conv's epilogue.
    // Conv+Sigmoid+Mul (SiLU) is fine; a Mul without its Sigmoid would be the SE scale.
    if (k.ops.rfind("Conv", 0) == 0 && k.ops.find("Mul") != std::string::npos)
      CHECK(k.ops.find("Sigmoid+Mul") != std::string::npos);
  }
  const auto fused = ops(lower(test::zoo("efficientnet_b0.onnx"), Fusion::trt, 1));
  CHECK(std::find(fused.begin(), fused.end(), "Conv+Sigmoid+Mul") != fused.end());
  CHECK(l.kernels.size() < lower(test::zoo("efficientnet_b0.onnx"), Fusion::none, 1).kernels.size());
}

TEST_CASE("an unknown op is an unmodelled row, never dropped") {
  LoadOptions o;
  o.batch = 1;
  const GpuModel g = test::gpu("h200");
  AnalyzeOptions a;
  a.load = o;
  const Analysis r = analyze_file(test::data("unknown_op.onnx"), g, a);
  REQUIRE(!r.unmodelled.empty());
  CHECK(r.unmodelled[0].find("com.example.Frobnicate") != std::string::npos);
  bool row = false;
  for (const auto& k : r.kernels) row = row || (k.kernel.ops == "Frobnicate" && !k.cost);
  CHECK(row);
}

TEST_CASE("depthwise and batched MatMul lower to the right problems") {
  const Lowering dw = lower(test::data("depthwise.onnx"), Fusion::none, 1);
  REQUIRE(dw.kernels.size() == 1);
  const auto& c = std::get<ConvProblem>(dw.kernels[0].layer->problem);
  CHECK(c.groups == 32);
  CHECK(c.P() == 56);

  const Lowering mm = lower(test::data("matmul.onnx"), Fusion::none, 5);
  REQUIRE(mm.kernels.size() == 1);
  const auto& g = std::get<GemmProblem>(mm.kernels[0].layer->problem);
  CHECK(g.M == 64);
  CHECK(g.N == 256);
  CHECK(g.K == 128);
  CHECK(g.batch == 5);
}

TEST_CASE("the registry rejects a second rule for the same op") {
  OpRegistry r;
  register_conv_ops(r);
  CHECK_THROWS_AS(register_conv_ops(r), std::logic_error);
  CHECK(OpRegistry::builtin().find("", "Conv") != nullptr);
  CHECK(OpRegistry::builtin().find("", "Frobnicate") == nullptr);
}

TEST_CASE("every op of the bundled zoo has a rule") {
  for (const char* name : {"resnet50", "shufflenet_v2_x1_0", "densenet121", "inception_v3", "convnext_tiny",
                           "efficientnet_b0", "mobilenet_v2", "mobilenet_v3_large", "squeezenet1_1", "alexnet"}) {
    CAPTURE(name);
    const GpuModel g = test::gpu("h200");
    AnalyzeOptions a;
    a.load.batch = 2;
    const Analysis r = analyze_file(test::zoo(std::string(name) + ".onnx"), g, a);
    CHECK(r.unmodelled.empty());
    CHECK(r.total.time_us > 0);
    CHECK(r.total.utilization > 0);
    CHECK(r.total.utilization < 1);
  }
}

TEST_CASE("inside a network every kernel waits launch_gap_us for the one before it") {
  GpuModel g = test::gpu("h200");
  AnalyzeOptions a;
  a.load.batch = 2;
  g.params["launch_gap_us"] = 0;
  const Analysis none = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  g.params["launch_gap_us"] = 1.5;
  const Analysis gapped = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  CHECK(gapped.total.time_us == doctest::Approx(none.total.time_us + 1.5 * double(none.kernels.size())));
  const auto& k = *gapped.kernels[0].cost;
  CHECK(k.utilization + k.losses.tile + k.losses.wave + k.losses.efficiency + k.losses.memory + k.losses.fixed ==
        doctest::Approx(1.0));
}

TEST_CASE("inside a network, an input the previous kernel just wrote is read from L2") {
  GpuModel g = test::gpu("h200");
  g.params["l2_reuse_fraction"] = 0.5;  // a window of half the L2, whatever the fit chose
  AnalyzeOptions a;
  a.load.batch = 2;
  const Analysis with_l2 = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  // Conv -> Relu -> Conv: the Relu reads the 2x16x32x32 fp16 conv output,
  // tiny next to 60 MB of L2, and its own output is read back from L2 by the
  // next conv; the first conv reads the graph input from DRAM but leaves its
  // output in L2.
  const int64_t act = 2 * 16 * 32 * 32 * 2;
  REQUIRE(with_l2.kernels.size() > 2);
  CHECK(with_l2.kernels[1].cost->l2_hit_bytes == 2 * act);
  CHECK(with_l2.kernels[0].cost->l2_hit_bytes == act);
  // A window of half the activation: only the most recent half is still there.
  g.params["l2_reuse_fraction"] = 0.5 * double(act) / (g.l2_mb * 1e6);
  const Analysis half = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  CHECK(half.kernels[1].cost->l2_hit_bytes == act);  // half of its input, half of its output
  g.params["l2_reuse_fraction"] = 0;
  const Analysis without = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  for (const auto& k : without.kernels) CHECK(k.cost->l2_hit_bytes == 0);
  CHECK(without.total.time_us > with_l2.total.time_us);
}
