// Op registry and the runtime profiles (docs/model.md "Runtimes").
#include <doctest/doctest.h>

#include <filesystem>
#include <map>

#include "onnx_builder.h"
#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/op_registry.h"
#include "tilewave/passes.h"
#include "tilewave/pipeline.h"

using namespace tilewave;

namespace {
KernelGraph lower(const std::string& path, const std::string& runtime, int64_t batch = 2) {
  LoadOptions o;
  o.batch = batch;
  const Model m = load_onnx(path, o);
  const RuntimeProfile* r = find_runtime(runtime);
  REQUIRE(r != nullptr);
  return lower_model(m, cuda_graph_harness(*r, DType::fp16));
}
int count(const std::vector<std::string>& v, const std::string& x) { return int(std::count(v.begin(), v.end(), x)); }
std::vector<std::string> ops(const KernelGraph& l) {
  std::vector<std::string> out;
  for (const auto& k : l.kernels) out.push_back(k.ops.text());
  return out;
}
// A built model as eager PyTorch runs it in fp16, under autocast or not.
KernelGraph eager_lowering(const Model& m, bool amp, Layout layout = Layout::nhwc) {
  ExecutionConfig e = cuda_graph_harness(*find_runtime("eager"), DType::fp16);
  e.amp = amp;
  e.layout = layout;
  return lower_model(m, e);
}
}  // namespace

TEST_CASE("eager: a conv's bias is PyTorch's BatchNorm kernels; an RGB stem without a first-layer kernel is not padded; Flatten is free") {
  const KernelGraph l = lower(test::data("tiny_cnn.onnx"), "eager");
  CHECK(ops(l) == std::vector<std::string>{"Conv", "bn_prep", "bn_prep", "bias", "Relu", "Conv", "Add",
                                           "Relu", "MaxPool", "GlobalAveragePool", "Gemm"});
  CHECK(l.free_nodes == 1);
  // The bias pass reads the conv's raw output and writes the value the Relu reads.
  const Kernel& conv = l.kernels[0];
  const Kernel& bias = l.kernels[3];
  REQUIRE(conv.writes.size() == 1);
  REQUIRE(bias.reads.size() == 1);
  CHECK(bias.reads[0].name == conv.writes[0].name);
  CHECK(bias.writes[0].name == l.kernels[4].reads[0].name);
  CHECK(conv.reads[0].name.find("#pad") == std::string::npos);  // the image itself, unpadded
  CHECK(std::get<MemoryProblem>(bias.layer->problem).elems == 2 * 16 * 32 * 32);
  CHECK(std::get<MemoryProblem>(bias.layer->problem).outer == 2 * 16);  // (image, channel) planes
}

TEST_CASE("an RGB stem in half precision: padded into a first-layer kernel from channels_last, transformed into it from NCHW, else neither") {
  // docs/model.md "Narrow-channel convolutions".
  auto stem = [](int64_t k, int64_t r, Layout layout, DType dtype = DType::fp16) {
    test::OnnxBuilder b(13);
    b.input("x", {2, 3, 64, 64});
    b.weight("w", {k, 3, r, r});
    auto& n = b.node("Conv", {"x", "w"}, {"y"});
    test::OnnxBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
    test::OnnxBuilder::attr(n, "pads", std::vector<int64_t>{r / 2, r / 2, r / 2, r / 2});
    b.output("y");
    ExecutionConfig e = cuda_graph_harness(*find_runtime("eager"), dtype);
    e.layout = layout;
    const KernelGraph l = lower_model(b.load_batch(2), e);
    // The kernels' steps, then "nchw" where the conv kernel reads NCHW memory.
    std::vector<std::string> names;
    for (const Kernel& k : l.kernels) names.push_back(k.ops.text());
    for (const Kernel& k : l.kernels)
      if (auto* p = k.layer ? std::get_if<ConvProblem>(&k.layer->problem) : nullptr; p && p->nchw) names.push_back("nchw");
    return names;
  };
  using V = std::vector<std::string>;
  CHECK(stem(64, 7, Layout::nhwc) == V{"pad", "pad", "Conv"});
  CHECK(stem(64, 3, Layout::nhwc) == V{"pad", "pad", "Conv"});
  CHECK(stem(32, 3, Layout::nhwc) == V{"Conv"});
  CHECK(stem(64, 7, Layout::nchw) == V{"layout_transform", "layout_transform", "Conv", "layout_transform"});
  CHECK(stem(64, 3, Layout::nchw) == V{"Conv", "nchw"});
  CHECK(stem(32, 3, Layout::nchw) == V{"Conv", "nchw"});
  // fp32 keeps its padding (no first-layer kernel evidence there).
  CHECK(stem(32, 3, Layout::nhwc, DType::fp32) == V{"pad", "pad", "Conv"});
  // Fewer filters than a vector too (an ECA gate's convolution): a direct kernel where it is, unpadded.
  CHECK(stem(1, 3, Layout::nchw) == V{"Conv", "nchw"});
  CHECK(stem(1, 3, Layout::nhwc) == V{"Conv"});
}

TEST_CASE("eager: an unfolded BatchNormalization node also runs its two channel kernels first") {
  const auto names = ops(lower(test::zoo("densenet121.onnx"), "eager", 1));
  CHECK(count(names, "BatchNormalization") == 62);
  CHECK(count(names, "bn_prep") == 2 * (62 + 59));  // 59 convs carry a folded BN
  // Each BatchNorm pass knows its (image, channel) planes: densenet121's 1,024 channels at 7x7 the last.
  const KernelGraph l = lower(test::zoo("densenet121.onnx"), "eager", 2);
  int64_t last_planes = 0, last_elems = 0;
  for (const Kernel& k : l.kernels)
    if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr)
      if (p->op == MemoryOp::norm) {
        CHECK(p->outer > 0);
        CHECK(p->elems % p->outer == 0);
        last_planes = p->outer, last_elems = p->elems;
      }
  CHECK(last_planes == 2 * 1024);
  CHECK(last_elems == 2 * 1024 * 7 * 7);
}

TEST_CASE("a BatchNorm pass pays norm_plane_ns per (image, channel) plane (docs/model.md \"Memory-bound kernels\")") {
  GpuModel g = test::gpu("h200");
  MemoryProblem bn;
  bn.op = MemoryOp::norm;
  bn.elems = 256 * 512 * 49;
  bn.outer = 256 * 512;
  Layer l;
  l.problem = bn;
  g.params["norm_plane_ns"] = 0.0;
  const double without = cost_layer(l, g).memory_us;
  g.params["norm_plane_ns"] = 1.0;
  CHECK(cost_layer(l, g).memory_us - without == doctest::Approx(131.072));  // 131,072 planes at 1 ns
}

TEST_CASE("an elementwise kernel with a broadcast operand is strided: PyTorch cannot vectorise it") {
  test::OnnxBuilder b(13);
  b.input("x", {2, 8, 6, 6});
  b.input("y", {2, 8, 6, 6});
  b.weight("w", {8, 8, 1, 1});
  b.weight("bias", {8});
  b.weight("gamma", {8, 1, 1});
  b.floats("two", {2.0f}, true);  // rank 0: a Python number
  b.floats("gain", {0.5f});        // rank 1, one value: a tensor PyTorch broadcasts
  b.node("Conv", {"x", "w", "bias"}, {"c"});
  b.node("Mul", {"c", "gamma"}, {"scaled"});  // a per-channel scale: strided
  b.node("Mul", {"scaled", "two"}, {"doubled"});  // a single value: vectorised
  b.node("Add", {"doubled", "y"}, {"sum"});  // two full-size operands: vectorised
  b.node("Mul", {"sum", "gain"}, {"out"});  // a one-element tensor: strided
  b.output("out");
  const Model m = b.load_batch(2);
  const KernelGraph l = eager_lowering(m, false);
  std::map<std::string, bool> strided;
  for (const Kernel& k : l.kernels)
    if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr; p && p->op == MemoryOp::eltwise)
      strided[k.name] = p->strided;
  CHECK(strided.at("c/bias"));  // the conv's own bias, added per channel
  CHECK(strided.at("scaled"));
  CHECK_FALSE(strided.at("doubled"));
  CHECK_FALSE(strided.at("sum"));
  CHECK(strided.at("out"));

  // Its cost: strided_element_ps per output element on top of the traffic, and its own floor.
  GpuModel g = test::gpu("h200");
  MemoryProblem p;
  p.elems = 1'000'000;
  p.strided = true;
  Layer layer;
  layer.problem = p;
  g.params["strided_element_ps"] = 0.0;
  g.params["fixed_us_strided_extra"] = 0.0;
  const KernelCost plain = cost_layer(layer, g);
  g.params["strided_element_ps"] = 2.0;
  g.params["fixed_us_strided_extra"] = 0.5;
  const KernelCost strided_cost = cost_layer(layer, g);
  CHECK(strided_cost.memory_us - plain.memory_us == doctest::Approx(2.0));  // 10^6 elements at 2 ps
  CHECK(strided_cost.fixed_us - plain.fixed_us == doctest::Approx(0.5));
}

TEST_CASE("every runtime: a grouped conv without a native NHWC kernel runs between layout transforms") {
  for (const RuntimeProfile* r : builtin_runtimes()) {
    CAPTURE(r->name());
    const KernelGraph l = lower(test::zoo("regnet_x_3_2gf.onnx"), r->name(), 1);
    // 25 blocks, each a grouped 3x3 conv of group width 48: input and filter
    // to NCHW before, the output back after.
    CHECK(count(ops(l), "layout_transform") == 3 * 25);
    for (size_t i = 1; i + 1 < l.kernels.size(); ++i)
      if (l.kernels[i].name.find("/to_nhwc") != std::string::npos) {
        const Kernel& conv = l.kernels[i - 1];
        REQUIRE(conv.layer);
        REQUIRE(std::holds_alternative<ConvProblem>(conv.layer->problem));
        CHECK(conv.reads[0].layout == Layout::nchw);
        CHECK(l.kernels[i].reads[0].name == conv.writes[0].name);
        CHECK(l.kernels[i].writes[0].layout == Layout::nhwc);
      }
  }
}

namespace {
bool is_transform(const Kernel& k) { return k.ops.is(RuntimeStep::layout_transform); }

// The layout transforms of `g` that write what kernel `k` reads (`reading`
// true) or read what it writes.
std::vector<int> transforms_beside(const KernelGraph& g, const KernelIndex& index, size_t k, bool reading) {
  std::vector<int> out;
  if (reading) {
    for (size_t slot = 0; slot < g.kernels[k].reads.size(); ++slot)
      if (const int p = index.producer(k, slot); p >= 0 && is_transform(g.kernels[size_t(p)])) out.push_back(p);
  } else {
    for (int c : index.consumers(k))
      if (is_transform(g.kernels[size_t(c)])) out.push_back(c);
  }
  return out;
}
}  // namespace

TEST_CASE("layout pass: no conv of a bundled network is wrapped twice, under any configuration") {
  // docs/model.md "Layout pass": one transform at most on each side of a
  // conv, never a transform feeding another, and every conv reads its input
  // in the layout its kernel needs. Batch 1 keeps it to seconds.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(TILEWAVE_ONNX_MODELS))
    if (e.path().extension() == ".onnx") files.push_back(e.path().string());
  REQUIRE(files.size() >= 20);
  int wrapped = 0;
  for (const std::string& file : files) {
    LoadOptions o;
    o.batch = 1;
    const Model m = load_onnx(file, o);
    for (const RuntimeProfile* r : builtin_runtimes())
      for (Layout layout : {Layout::nchw, Layout::nhwc})
        for (bool amp : {false, true}) {
          ExecutionConfig e = default_execution(*r);
          e.layout = layout;
          e.amp = amp;
          CAPTURE(file);
          CAPTURE(e.name());
          const KernelGraph g = lower_model(m, e);
          const KernelIndex index(g);
          for (size_t k = 0; k < g.kernels.size(); ++k) {
            const Kernel& kernel = g.kernels[k];
            if (is_transform(kernel)) {
              CAPTURE(kernel.name);
              CHECK(transforms_beside(g, index, k, true).empty());
              CHECK(transforms_beside(g, index, k, false).empty());
              continue;
            }
            const ConvProblem* p = kernel.layer ? std::get_if<ConvProblem>(&kernel.layer->problem) : nullptr;
            if (!p || kernel.reads.empty()) continue;
            CAPTURE(kernel.name);
            const std::vector<int> before = transforms_beside(g, index, k, true),
                                   after = transforms_beside(g, index, k, false);
            CHECK(before.size() <= 1);
            CHECK(after.size() <= 1);
            // Its own transforms (named after it) come in pairs: it hands back what it took.
            auto own = [&](const std::vector<int>& ts) {
              return std::count_if(ts.begin(), ts.end(), [&](int t) {
                return g.kernels[size_t(t)].name.rfind(kernel.name + "/", 0) == 0;
              });
            };
            CHECK(own(before) == own(after));
            const DType d = kernel.layer->dtype;
            // The precision pass may make an fp32 conv tf32 after the layout pass chose.
            if (d != DType::tf32)
              CHECK(kernel.reads[0].layout ==
                    conv_kernel_layout(*p, d, int(16 / dtype_bytes(d)), e.activation_layout()));
            wrapped += int(own(before));
          }
        }
  }
  CHECK(wrapped > 0);  // the checks above met wrapped convs
}

TEST_CASE("lower_model: the one composition runs the runtime's lowering, then both passes") {
  LoadOptions o;
  o.batch = 2;
  const Model m = load_onnx(test::zoo("regnet_x_3_2gf.onnx"), o);
  ExecutionConfig e = default_execution(default_runtime());  // eager, NCHW, autocast
  const KernelGraph g = lower_model(m, e);
  const KernelGraph own = lower_for_runtime(m, e, OpRegistry::builtin());
  // The runtime's own lowering launches no transforms nor casts: the passes add them.
  CHECK(count(ops(own), "layout_transform") == 0);
  CHECK(count(ops(own), "cast") == 0);
  CHECK(count(ops(g), "layout_transform") > 0);
  CHECK(count(ops(g), "cast") > 0);
  CHECK(g.kernels.size() == own.kernels.size() + size_t(count(ops(g), "layout_transform") + count(ops(g), "cast")));
}

TEST_CASE("eager: a conv over a 1x1 map (squeeze-excitation) keeps its own bias: one add") {
  const KernelGraph l = lower(test::zoo("efficientnet_b0.onnx"), "eager", 1);
  int over_1x1 = 0;
  for (size_t i = 0; i + 1 < l.kernels.size(); ++i) {
    const auto* c = l.kernels[i].layer ? std::get_if<ConvProblem>(&l.kernels[i].layer->problem) : nullptr;
    if (!c || c->H != 1) continue;
    ++over_1x1;
    CAPTURE(l.kernels[i].name);
    CHECK(l.kernels[i + 1].ops.is(RuntimeStep::bias));
  }
  CHECK(over_1x1 == 32);  // 16 squeeze-excitation blocks, two convs each: the loop above checked them all
}

namespace {
// tiny_cnn under a runtime's own defaults at `dtype` (default_execution): the
// kernels PyTorch or the engine launches at that precision.
KernelGraph lower_at(const std::string& runtime, DType dtype) {
  LoadOptions o;
  o.batch = 2;
  const Model m = load_onnx(test::data("tiny_cnn.onnx"), o);
  return lower_model(m, default_execution(runtime_named(runtime, "test"), dtype));
}
std::vector<const Kernel*> of_problem(const KernelGraph& l, size_t problem_index) {
  std::vector<const Kernel*> out;
  for (const auto& k : l.kernels)
    if (k.layer && k.layer->problem.index() == problem_index) out.push_back(&k);
  return out;
}
}  // namespace

TEST_CASE("lowering below and beside fp16: PyTorch's fp32, bf16 autocast, an int8 engine") {
  const size_t conv = Problem(ConvProblem{}).index(), gemm = Problem(GemmProblem{}).index();
  // PyTorch's fp32: convolutions in TF32 (cudnn.allow_tf32), matmuls in full
  // fp32, activations stored in fp32; autocast stays off, so no casts.
  const KernelGraph fp32 = lower_at("eager", DType::fp32);
  REQUIRE(of_problem(fp32, conv).size() == 2);
  for (const Kernel* k : of_problem(fp32, conv)) CHECK(k->layer->dtype == DType::tf32);
  REQUIRE(of_problem(fp32, gemm).size() == 1);
  CHECK(of_problem(fp32, gemm)[0]->layer->dtype == DType::fp32);
  for (const auto& k : fp32.kernels) {
    CAPTURE(k.name);
    CHECK_FALSE(k.ops.is(RuntimeStep::cast));
    for (const auto& t : k.writes) CHECK(t.dtype == DType::fp32);
  }

  // bf16 under autocast: the compute kernels run in bf16 and every fp32
  // weight is cast on every forward, as fp16's are.
  const KernelGraph bf16 = lower_at("eager", DType::bf16), fp16 = lower_at("eager", DType::fp16);
  for (const Kernel* k : of_problem(bf16, conv)) CHECK(k->layer->dtype == DType::bf16);
  int bf16_casts = 0, fp16_casts = 0;
  for (const auto& k : bf16.kernels) bf16_casts += k.ops.is(RuntimeStep::cast);
  for (const auto& k : fp16.kernels) fp16_casts += k.ops.is(RuntimeStep::cast);
  CHECK(bf16_casts > 0);
  CHECK(bf16_casts == fp16_casts);
  for (const auto& k : bf16.kernels)
    if (k.ops.is(RuntimeStep::cast)) {
      CAPTURE(k.name);
      CHECK(k.layer->dtype == DType::bf16);  // what the cast writes
    }

  // An int8 engine: convolutions and the GEMM in int8, weights stored as
  // built (no autocast casts), each tensor's bytes from its own type.
  const KernelGraph int8 = lower_at("tensorrt", DType::int8);
  REQUIRE_FALSE(of_problem(int8, conv).empty());
  for (const Kernel* k : of_problem(int8, conv)) CHECK(k->layer->dtype == DType::int8);
  for (const auto& k : int8.kernels) CHECK_FALSE(k.ops.is(RuntimeStep::cast));
  // The first conv's output: the same elements, each in its own type's bytes.
  const TensorRef& out32 = of_problem(fp32, conv)[0]->writes.at(0);
  const TensorRef& out8 = of_problem(int8, conv)[0]->writes.at(0);
  CHECK(out32.bytes / dtype_bytes(out32.dtype) == out8.bytes / dtype_bytes(out8.dtype));
  CHECK(out32.bytes == 4 * (out8.bytes / dtype_bytes(out8.dtype)));
}

TEST_CASE("inductor: library convs, each pointwise group one generated kernel reading its inputs once") {
  const KernelGraph l = lower(test::data("tiny_cnn.onnx"), "inductor");
  CHECK(ops(l) == std::vector<std::string>{"Conv", "bias+Relu", "Conv", "Add+Relu+MaxPool", "GlobalAveragePool",
                                           "Gemm"});
  // Add+Relu+MaxPool reads the second conv's output and the first Relu's, and
  // writes only the pooled map.
  const auto& fused = std::get<MemoryProblem>(l.kernels[3].layer->problem);
  CHECK(fused.op == MemoryOp::fused);
  CHECK(fused.elems_in == 2 * (2 * 16 * 32 * 32));
  CHECK(fused.elems_out == 2 * 16 * 16 * 16);
  CHECK(l.kernels[3].reads.size() == 2);
}

TEST_CASE("inductor: ResNet-50's BatchNorms, residual adds and ReLUs fuse into one kernel per conv") {
  const KernelGraph l = lower(test::zoo("resnet50.onnx"), "inductor", 16);
  // 53 convs, 53 groups (the 4 downsample biases join their block's add), a
  // pad pair for the stem, the FC: PyTorch 2.11 launched 112.
  CHECK(l.kernels.size() >= 100);
  CHECK(l.kernels.size() <= 115);
  const auto names = ops(l);
  CHECK(count(names, "bias+bias+Add+Relu") == 4);
}

TEST_CASE("runtimes are named objects; unknown names are refused") {
  CHECK(std::string(default_runtime().name()) == "eager");
  CHECK(find_runtime("inductor") != nullptr);
  CHECK(find_runtime("tensorrt") != nullptr);
  CHECK(find_runtime("none") == nullptr);
  CHECK(find_runtime("eager-folded") != nullptr);  // runs 1-6, kept to reprint them
  CHECK(builtin_runtimes().size() == 4);
}

TEST_CASE("eager: an exporter's decomposition of one framework op is one kernel") {
  const KernelGraph l = lower(test::data("activations.onnx"), "eager");
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
  // Special functions an element: GELU's Erf, each Sigmoid; none in a ReLU or a GEMM.
  std::vector<int64_t> special;
  for (const Kernel& k : l.kernels)
    if (auto* m = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr) special.push_back(m->special_functions);
  CHECK(special == std::vector<int64_t>{1, 0, 1, 1, 0});
}

TEST_CASE("an op counts the special functions it evaluates: Mish two, HardSwish none, an exported Mish its members'") {
  test::OnnxBuilder b(18);
  b.input("x", {2, 8, 4, 4});
  b.node("Mish", {"x"}, {"mish"});
  b.node("HardSwish", {"mish"}, {"hswish"});
  b.node("Softplus", {"hswish"}, {"sp"});  // Mish as an exporter writes it: Softplus, Tanh, Mul
  b.node("Tanh", {"sp"}, {"t"});
  b.node("Mul", {"hswish", "t"}, {"y"});
  b.output("y");
  const Model m = b.load_batch(2);
  std::vector<int64_t> special;
  for (const Kernel& k : lower_model(m, default_execution(*find_runtime("eager"))).kernels)
    if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr) special.push_back(p->special_functions);
  CHECK(special == std::vector<int64_t>{2, 0, 2});
}

TEST_CASE("a kernel of special functions takes at least their arithmetic; one without them is not bound by it") {
  Layer l;
  l.dtype = DType::fp16;
  MemoryProblem gelu;
  gelu.op = MemoryOp::eltwise;
  gelu.elems = int64_t(1) << 26;
  gelu.special_functions = 1;
  l.problem = gelu;
  GpuModel gpu = test::gpu("h200");
  gpu.params["special_function_ps"] = 0.0;
  const double traffic_us = cost_layer(l, gpu).memory_us;
  gpu.params["special_function_ps"] = 100.0;  // far slower than the traffic
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(double(gelu.elems) * 100.0 * 1e-6));
  CHECK(cost_layer(l, gpu).memory_us > traffic_us);
  gelu.special_functions = 2;  // Mish's kind: twice the arithmetic
  l.problem = gelu;
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(2 * double(gelu.elems) * 100.0 * 1e-6));
  gpu.params["special_function_ps"] = 1e-6;  // far faster: the traffic bounds it
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(traffic_us));
  gelu.special_functions = 0;
  l.problem = gelu;
  gpu.params["special_function_ps"] = 100.0;
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(traffic_us));
}

TEST_CASE("eager: a linear Resize of an NCHW map loops over its planes, the others run per value, fp32 under autocast") {
  // EfficientFormerV2's attention upsample: 2 x 2 planes of 7 x 7 to 14 x 14,
  // bilinear and nearest after a Relu of the input, bilinear after a Conv.
  // Under channels_last both are channels-last in memory: no loop, PyTorch's
  // NHWC kernels; nearest never loops.
  test::OnnxBuilder b(18);
  b.input("x", {2, 2, 7, 7});
  b.floats("scales", {1.f, 1.f, 2.f, 2.f});
  b.weight("w", {2, 2, 1, 1});
  b.node("Relu", {"x"}, {"r"});
  test::OnnxBuilder::attr(b.node("Resize", {"r", "", "scales"}, {"bilinear"}), "mode", "linear");
  b.node("Resize", {"r", "", "scales"}, {"nearest"});
  b.node("Conv", {"x", "w"}, {"c"});
  test::OnnxBuilder::attr(b.node("Resize", {"c", "", "scales"}, {"after_conv"}), "mode", "linear");
  b.output("bilinear");
  b.output("nearest");
  b.output("after_conv");
  const Model m = b.load_batch(2);
  auto resizes = [&](const char* runtime, Layout layout, bool amp) {
    ExecutionConfig e = cuda_graph_harness(*find_runtime(runtime), DType::fp16);
    e.layout = layout;
    e.amp = amp;
    std::vector<std::tuple<int64_t, ResampleKernel, DType>> out;  // planes looped, per-value kernel, type
    for (const Kernel& k : lower_model(m, e).kernels)
      if (k.ops.is("Resize")) {
        const auto& p = std::get<MemoryProblem>(k.layer->problem);
        out.emplace_back(p.resample_planes, p.resample_kernel, k.layer->dtype);
      }
    return out;
  };
  using R = std::vector<std::tuple<int64_t, ResampleKernel, DType>>;
  constexpr auto none = ResampleKernel::none;
  // Under autocast the network's fp32 input keeps the Relu and both its
  // Resizes fp32; the Conv's half output is cast for the linear one.
  CHECK(resizes("eager", Layout::nchw, true) ==
        R{{4, none, DType::fp32}, {0, ResampleKernel::nearest_nchw, DType::fp32}, {4, none, DType::fp32}});
  CHECK(resizes("eager", Layout::nhwc, true) == R{{0, ResampleKernel::linear_nhwc, DType::fp32},
                                                    {0, ResampleKernel::nearest_nhwc, DType::fp32},
                                                    {0, ResampleKernel::linear_nhwc, DType::fp32}});
  CHECK(resizes("eager", Layout::nchw, false) ==
        R{{4, none, DType::fp16}, {0, ResampleKernel::nearest_nchw, DType::fp16}, {4, none, DType::fp16}});
  for (const auto& [planes, kernel, type] : resizes("inductor", Layout::nchw, false)) {  // its own kernels
    CHECK(planes == 0);
    CHECK(kernel == none);
  }

  // CoaT's parallel blocks: tokens [B, N, C] transposed and reshaped to a map
  // are a channels-last view in PyTorch, whose NHWC kernel does not loop.
  test::OnnxBuilder t(18);
  t.input("tokens", {2, 49, 8});
  t.floats("scales", {1.f, 1.f, 2.f, 2.f});
  t.ints("map_shape", {2, 8, 7, 7});
  test::OnnxBuilder::attr(t.node("Transpose", {"tokens"}, {"channels_first"}), "perm", std::vector<int64_t>{0, 2, 1});
  t.node("Reshape", {"channels_first", "map_shape"}, {"map"});
  test::OnnxBuilder::attr(t.node("Resize", {"map", "", "scales"}, {"up"}), "mode", "linear");
  t.output("up");
  const Model tokens = t.load_batch(2);
  int resizes_seen = 0;
  for (const Kernel& k : lower_model(tokens, cuda_graph_harness(*find_runtime("eager"), DType::fp16)).kernels)
    if (k.ops.is("Resize")) {
      ++resizes_seen;
      CHECK(std::get<MemoryProblem>(k.layer->problem).resample_planes == 0);
    }
  CHECK(resizes_seen == 1);

  // A nearest Resize of a Conv's half output is cast to fp32 under autocast,
  // as the linear one is (both on autocast's fp32 list; HRNet's fuse layers).
  test::OnnxBuilder h(18);
  h.input("x", {2, 2, 7, 7});
  h.floats("scales", {1.f, 1.f, 2.f, 2.f});
  h.weight("w", {2, 2, 1, 1});
  h.node("Conv", {"x", "w"}, {"c"});
  h.node("Resize", {"c", "", "scales"}, {"up"});
  h.output("up");
  ExecutionConfig amp = cuda_graph_harness(*find_runtime("eager"), DType::fp16);
  amp.amp = true;
  amp.layout = Layout::nchw;
  int nearest_seen = 0;
  for (const Kernel& k : lower_model(h.load_batch(2), amp).kernels)
    if (k.ops.is("Resize")) {
      ++nearest_seen;
      CHECK(k.layer->dtype == DType::fp32);
      CHECK(std::get<MemoryProblem>(k.layer->problem).resample_kernel == ResampleKernel::nearest_nchw);
    }
  CHECK(nearest_seen == 1);
}

TEST_CASE("a resample that loops over planes takes planes x a latency, L2's where its bytes are found there") {
  Layer l;
  l.dtype = DType::fp32;
  MemoryProblem up;
  up.op = MemoryOp::copy;
  up.elems_in = int64_t(262144) * 49;  // EfficientFormerV2-S1's at batch 256: 7 x 7 to 14 x 14
  up.elems_out = int64_t(262144) * 196;
  up.resample_planes = 262144;
  l.problem = up;
  GpuModel gpu = test::gpu("h200");
  gpu.params["resample_plane_ns"] = 400.0;
  gpu.params["resample_plane_l2_ns"] = 200.0;
  const CostModel model(gpu);
  const double bytes = double(min_bytes(l));
  CHECK(cost_layer(l, model).memory_us == doctest::Approx(262144 * 400.0 * 1e-3));
  CHECK(cost_layer(l, model, bytes).memory_us == doctest::Approx(262144 * 200.0 * 1e-3));
  CHECK(cost_layer(l, model, bytes / 2).memory_us == doctest::Approx(262144 * 300.0 * 1e-3));
  up.resample_planes = 0;  // any other copy: its traffic
  l.problem = up;
  CHECK(cost_layer(l, model).memory_us < 0.01 * 262144 * 400.0 * 1e-3);
}

TEST_CASE("a per-value resample takes its output values x its kernel's time per value, or its traffic if longer") {
  Layer l;
  l.dtype = DType::fp16;
  MemoryProblem up;
  up.op = MemoryOp::copy;
  up.elems_in = int64_t(256) * 64 * 28 * 28;  // HRNet's fuse upsample at batch 256: 28 x 28 to 56 x 56
  up.elems_out = up.elems_in * 4;
  GpuModel gpu = test::gpu("h200");
  gpu.params["resample_nearest_value_ps"] = 3.0;
  gpu.params["resample_nearest_nhwc_value_ps"] = 6.0;
  gpu.params["resample_linear_nhwc_value_ps"] = 9.0;
  const CostModel model(gpu);
  l.problem = up;
  const double traffic_us = cost_layer(l, model).memory_us;
  for (const auto& [kernel, ps] : std::vector<std::pair<ResampleKernel, double>>{
           {ResampleKernel::nearest_nchw, 3.0}, {ResampleKernel::nearest_nhwc, 6.0}, {ResampleKernel::linear_nhwc, 9.0}}) {
    up.resample_kernel = kernel;
    l.problem = up;
    CHECK(cost_layer(l, model).memory_us == doctest::Approx(std::max(traffic_us, double(up.elems_out) * ps * 1e-6)));
  }
  CHECK(double(up.elems_out) * 6.0 * 1e-6 > traffic_us);  // the index cost, not the bytes, bounds it here
  gpu.params["resample_linear_nhwc_value_ps"] = 1e-6;   // far faster: the traffic bounds it
  CHECK(cost_layer(l, CostModel(gpu)).memory_us == doctest::Approx(traffic_us));
}

// CaiT's talking heads, small: a map from a matmul, permuted heads-last for a
// Linear over the heads, permuted back for the softmax.
TEST_CASE("an expand read only by elementwise ops is a view they broadcast in place; anything else copies it") {
  // ECA's gate: x * sigmoid(conv(pool(x))).expand_as(x), as torch.onnx writes it.
  test::OnnxBuilder b(13);
  b.input("x", {2, 8, 6, 6});
  b.input("m", {2, 8, 6, 6});
  b.ints("full", {2, 8, 6, 6});
  b.node("GlobalAveragePool", {"x"}, {"pooled"});
  b.node("Sigmoid", {"pooled"}, {"gate"});
  b.node("Expand", {"gate", "full"}, {"gate_x"});
  b.node("Mul", {"x", "gate_x"}, {"y"});
  b.node("Expand", {"gate", "full"}, {"gate_m"});  // also read by a matmul: a tensor of its own
  b.node("Mul", {"y", "gate_m"}, {"z"});
  b.node("MatMul", {"gate_m", "m"}, {"w"});
  b.output("z");
  b.output("w");
  const Model m = b.load_batch(2);
  for (const std::string runtime : {"eager", "inductor", "tensorrt"}) {
    CAPTURE(runtime);
    const KernelGraph g = lower_model(m, default_execution(*find_runtime(runtime)));
    // The view's own node is in no kernel of its own.
    CHECK(std::none_of(g.kernels.begin(), g.kernels.end(), [](const Kernel& k) { return k.name == "gate_x"; }));
    if (runtime != "eager") continue;  // a compiler or engine fuses the copy for the matmul into a kernel too
    CHECK(count(ops(g), "Expand") == 1);
    const auto y = std::find_if(g.kernels.begin(), g.kernels.end(), [](const Kernel& k) { return k.name == "y"; });
    REQUIRE(y != g.kernels.end());
    // It reads x and the gate before the expand: a broadcast operand, strided.
    const auto& mul = std::get<MemoryProblem>(y->layer->problem);
    CHECK(mul.inputs == 1);
    CHECK(mul.strided);
    CHECK(y->layer->extra_bytes == 2 * 8 * dtype_bytes(DType::fp16));  // the gate's half activations
  }
}

test::OnnxBuilder talking_heads() {
  test::OnnxBuilder b(17);
  b.input("q", {2, 4, 16, 8});
  b.input("k", {2, 4, 8, 16});
  b.weight("w", {4, 4});
  b.weight("bias", {4});
  b.node("MatMul", {"q", "k"}, {"map"});
  test::OnnxBuilder::attr(b.node("Transpose", {"map"}, {"heads_last"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  b.node("MatMul", {"heads_last", "w"}, {"mixed"});
  b.node("Add", {"mixed", "bias"}, {"biased"});
  test::OnnxBuilder::attr(b.node("Transpose", {"biased"}, {"heads_first"}), "perm", std::vector<int64_t>{0, 3, 1, 2});
  test::OnnxBuilder::attr(b.node("Softmax", {"heads_first"}, {"y"}), "axis", int64_t(-1));
  b.output("y");
  return b;
}

TEST_CASE("eager copies a permuted view a matmul or softmax reads; a Linear on one adds its bias apart") {
  const Model m = talking_heads().load_batch(2);
  ExecutionConfig e = default_execution(*find_runtime("eager"));  // NCHW under autocast, as timm's harness
  REQUIRE(e.amp);
  for (Layout layout : {Layout::nchw, Layout::nhwc}) {
    const std::string name = layout_name(layout);
    CAPTURE(name);
    e.layout = layout;
    const KernelGraph g = lower_model(m, e);
    auto named = [&](const std::string& n) -> const Kernel& {
      const auto k = std::find_if(g.kernels.begin(), g.kernels.end(), [&](const Kernel& x) { return x.name == n; });
      REQUIRE(k != g.kernels.end());
      return *k;
    };
    // A matmul's output is contiguous in its own order whatever the layout,
    // so both permutes are copies (strided elementwise kernels); the Linear's
    // bias is an add of its own, in the half type after its cast; the
    // softmax reads the half map and writes fp32 without a cast kernel.
    CHECK(ops(g) == std::vector<std::string>{"cast", "cast", "MatMul", "Transpose", "cast", "MatMul", "cast", "Add",
                                             "Transpose", "Softmax"});
    for (const char* view : {"heads_last", "heads_first"}) {
      const auto& copy = std::get<MemoryProblem>(named(view).layer->problem);
      CHECK(copy.op == MemoryOp::eltwise);
      CHECK(copy.strided);
      CHECK(copy.elems == 2 * 4 * 16 * 16);
      CHECK(named(view).layer->dtype == DType::fp16);
    }
    CHECK(named("biased/cast_bias").ops.is(RuntimeStep::cast));
    CHECK(named("biased").layer->dtype == DType::fp16);
    CHECK(named("y").layer->dtype == DType::fp32);
  }
  // Compilers and engines keep the permutes as views.
  for (const std::string runtime : {"inductor", "tensorrt"}) {
    CAPTURE(runtime);
    const auto names = ops(lower_model(m, default_execution(*find_runtime(runtime))));
    CHECK(count(names, "Transpose") == 0);
  }
}

TEST_CASE("autocast casts a Linear's bias with its weight: two small cast kernels beside its one GEMM") {
  // DeiT's qkv under timm's harness: the profile holds three casts before each
  // Linear (the fp32 input, the weight, the bias) and one GEMM with the bias.
  test::OnnxBuilder b(17);
  b.input("x", {2, 16, 8});
  b.weight("w", {8, 4});
  b.weight("bias", {4});
  b.node("MatMul", {"x", "w"}, {"product"});
  b.node("Add", {"product", "bias"}, {"y"});
  b.output("y");
  const KernelGraph g = lower_model(b.load_batch(2), default_execution(*find_runtime("eager")));
  std::vector<std::string> names;
  for (const auto& k : g.kernels) names.push_back(k.name);
  // The parameters first, then the activation, just before the GEMM (as the profile orders them).
  CHECK(names == std::vector<std::string>{"product/cast_weight", "product/cast_bias", "product/cast_input", "product"});
  CHECK(g.kernels.back().ops.text() == "MatMul+Add");
  CHECK(std::get<MemoryProblem>(g.kernels[1].layer->problem).elems == 4);
}

TEST_CASE("eager under autocast: an add of a half tensor into an fp32 one is PyTorch's unrolled kernel, not a vectorised one") {
  // A ViT's residual: the fp32 stream plus a half projection runs PyTorch's
  // unrolled_elementwise_kernel; two half operands stay vectorised.
  test::OnnxBuilder b(17);
  b.input("x", {2, 16, 8});
  b.weight("w", {8, 8});
  b.node("MatMul", {"x", "w"}, {"p"});
  b.node("MatMul", {"x", "w"}, {"q"});
  b.node("Add", {"x", "p"}, {"stream"});
  b.node("Add", {"p", "q"}, {"halves"});
  b.output("stream");
  b.output("halves");
  const KernelGraph g = lower_model(b.load_batch(2), default_execution(*find_runtime("eager")));
  std::map<std::string, const Kernel*> named;
  for (const auto& k : g.kernels) named[k.name] = &k;
  REQUIRE(named.count("stream"));
  REQUIRE(named.count("halves"));
  CHECK(named["stream"]->layer->dtype == DType::fp32);
  CHECK(std::get<MemoryProblem>(named["stream"]->layer->problem).unrolled);
  CHECK_FALSE(std::get<MemoryProblem>(named["stream"]->layer->problem).strided);
  CHECK(named["halves"]->layer->dtype == DType::fp16);
  CHECK_FALSE(std::get<MemoryProblem>(named["halves"]->layer->problem).unrolled);
  CHECK_FALSE(std::get<MemoryProblem>(named["halves"]->layer->problem).strided);

  // Its cost: unrolled_element_ps per output element on top of the traffic, and its own floor.
  GpuModel gpu = test::gpu("h200");
  MemoryProblem p;
  p.elems = 1'000'000;
  p.unrolled = true;
  Layer layer;
  layer.problem = p;
  gpu.params["unrolled_element_ps"] = 0.0;
  gpu.params["fixed_us_unrolled_extra"] = 0.0;
  const KernelCost plain = cost_layer(layer, gpu);
  gpu.params["unrolled_element_ps"] = 0.7;
  gpu.params["fixed_us_unrolled_extra"] = 1.2;
  const KernelCost unrolled = cost_layer(layer, gpu);
  CHECK(unrolled.memory_us - plain.memory_us == doctest::Approx(0.7));  // 10^6 elements at 0.7 ps
  CHECK(unrolled.fixed_us - plain.fixed_us == doctest::Approx(1.2));
}

TEST_CASE("eager: a product and bias written by hand promote to the fp32 bias; only a Linear's stays half") {
  // The same graph with the product read twice: not nn.Linear, so PyTorch's
  // `x @ w + b` under autocast adds in fp32 (type promotion by the fp32
  // parameter) and casts no bias.
  test::OnnxBuilder b = talking_heads();
  b.node("Relu", {"mixed"}, {"also"});
  b.output("also");
  ExecutionConfig e = default_execution(*find_runtime("eager"));
  const KernelGraph g = lower_model(b.load_batch(2), e);
  const auto names = ops(g);
  CHECK(count(names, "Add") == 1);
  for (const auto& k : g.kernels) {
    CHECK(k.name != "biased/cast_bias");
    if (k.name == "biased") CHECK(k.layer->dtype == DType::fp32);
  }
}

TEST_CASE("eager: a channels-last activation permuted to [N, H, W, C] is already contiguous") {
  // activations.onnx: elementwise ops on the input, then Transpose(0,2,3,1)
  // before a Linear. In NCHW that view is a copy and the bias an add of its
  // own; under channels_last the input and the ops on it are channels-last.
  LoadOptions o;
  o.batch = 2;
  const Model m = load_onnx(test::data("activations.onnx"), o);
  ExecutionConfig e = default_execution(*find_runtime("eager"));
  e.layout = Layout::nchw;
  const auto nchw = ops(lower_model(m, e));
  CHECK(count(nchw, "MatMul") == 1);
  CHECK(count(nchw, "Add") == 1);
  CHECK(count(nchw, "Transpose") == 2);  // the copy for the Linear, and the real (0,1,3,2) one
  e.layout = Layout::nhwc;
  const auto nhwc = ops(lower_model(m, e));
  CHECK(count(nhwc, "MatMul+Add") == 1);
  CHECK(count(nhwc, "Transpose") == 1);
}

TEST_CASE("eager: ConvNeXt-T's exporter decompositions are one kernel each; its conv biases are its own") {
  // 137 framework-op kernels and one bias add for each of its 22 convs (named
  // parameters, no BatchNorm folded in); its 4x4/4 stem has no first-layer
  // kernel, so nothing pads it.
  const KernelGraph l = lower(test::zoo("convnext_tiny.onnx"), "eager", 16);
  CHECK(l.kernels.size() == 137 + 22);
  const auto names = ops(l);
  CHECK(std::count(names.begin(), names.end(), "Div+Erf+Add+Mul+Mul") == 18);
  CHECK(std::count(names.begin(), names.end(), "MatMul+Add") == 36);
  CHECK(std::count(names.begin(), names.end(), "Transpose") == 0);
}

TEST_CASE("tensorrt: conv absorbs activation and the residual add") {
  const KernelGraph l = lower(test::data("tiny_cnn.onnx"), "tensorrt");
  CHECK(ops(l) == std::vector<std::string>{"Conv+Relu", "Conv+Add+Relu", "MaxPool", "GlobalAveragePool", "Gemm"});
  // The fused residual read is charged to the second conv: 2x16x32x32 fp16 values.
  const Layer& second = *l.kernels[1].layer;
  CHECK(second.extra_bytes == 2 * 16 * 32 * 32 * 2);
}

TEST_CASE("trt fusion never absorbs an op whose other operand depends on the head (SE blocks)") {
  const KernelGraph l = lower(test::zoo("efficientnet_b0.onnx"), "tensorrt", 1);
  for (const auto& k : l.kernels) {
    const std::string text = k.ops.text();
    CAPTURE(text);
    // The SE block's scale (Mul) reads a value computed from the conv output
    // through pooling; it cannot be part of that conv's epilogue.
    // Conv+Sigmoid+Mul (SiLU) is fine; a Mul without its Sigmoid would be the SE scale.
    if (k.ops.head() == "Conv" && k.ops.contains("Mul")) CHECK(text.find("Sigmoid+Mul") != std::string::npos);
  }
  const auto fused = ops(lower(test::zoo("efficientnet_b0.onnx"), "tensorrt", 1));
  CHECK(std::find(fused.begin(), fused.end(), "Conv+Sigmoid+Mul") != fused.end());
  CHECK(l.kernels.size() < lower(test::zoo("efficientnet_b0.onnx"), "eager", 1).kernels.size());
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
  for (const auto& k : r.kernels) row = row || (k.kernel.ops.is("Frobnicate") && !k.cost);
  CHECK(row);
}

TEST_CASE("depthwise and batched MatMul lower to the right problems") {
  const KernelGraph dw = lower(test::data("depthwise.onnx"), "eager", 1);
  REQUIRE(dw.kernels.size() == 1);
  const auto& c = std::get<ConvProblem>(dw.kernels[0].layer->problem);
  CHECK(c.groups == 32);
  CHECK(c.P() == 56);

  const KernelGraph mm = lower(test::data("matmul.onnx"), "eager", 5);
  REQUIRE(mm.kernels.size() == 1);
  const auto& g = std::get<GemmProblem>(mm.kernels[0].layer->problem);
  CHECK(g.M == 64);
  CHECK(g.N == 256);
  CHECK(g.K == 128);
  CHECK(g.batch == 5);
}

TEST_CASE("op traits live in the registry entries the runtimes, the passes and advise read") {
  const OpRegistry& r = OpRegistry::builtin();
  using namespace op_trait;
  for (const char* op : {"Relu", "Clip", "HardSwish", "LeakyRelu", "Sigmoid", "Tanh", "Gelu"}) {
    CAPTURE(op);
    CHECK(r.has_trait("", op, activation));
    CHECK(r.has_trait("", op, carries_channels));
  }
  for (const char* op : {"HardSigmoid", "Elu", "Identity", "BatchNormalization", "MaxPool", "AveragePool",
                         "GlobalAveragePool", "GlobalMaxPool"}) {
    CAPTURE(op);
    CHECK(r.has_trait("", op, carries_channels));
    CHECK_FALSE(r.has_trait("", op, activation));
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) CHECK(r.has_trait("", op, channel_binary));
  for (const char* op : {"Concat", "Transpose", "Slice", "Pad", "Resize", "Upsample", "Split", "Expand", "Tile",
                         "DepthToSpace", "SpaceToDepth"})
    CHECK(r.has_trait("", op, index_remap));
  CHECK(r.has_trait("ai.onnx", "QuantizeLinear", quantize_boundary));  // the default domain by either name
  CHECK(r.has_trait("", "DequantizeLinear", quantize_boundary));
  CHECK_FALSE(r.has_trait("", "Gather", index_remap));           // a gather computes addresses from data
  CHECK_FALSE(r.has_trait("com.microsoft", "Gelu", activation));  // another domain's op of the same name
  CHECK_FALSE(r.has_trait("", "NoSuchOp", activation));
  CHECK_FALSE(r.has_trait("", "Conv", carries_channels | channel_binary | activation | index_remap));
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
  // The eager set applied first, so that the parameters set below are the ones costed.
  GpuModel g = test::gpu("h200").for_runtime("eager");
  AnalyzeOptions a;
  a.load.batch = 2;
  a.exec = cuda_graph_harness(default_runtime(), DType::fp16);  // graph replay: the gap alone
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
  const int64_t act = 2 * 16 * 32 * 32 * 2;
  auto hits = [](const Analysis& r, const std::string& name) {
    for (const auto& k : r.kernels)
      if (k.kernel.name == name) return k.cost->l2_hit_bytes;
    FAIL("no kernel " << name);
    return int64_t(-1);
  };
  // Eager: conv1 -> its bias pass -> relu1 -> conv2. relu1 reads what the
  // bias pass just wrote and conv2 reads relu1's output back from L2.
  CHECK(hits(with_l2, "relu1") == 2 * act);
  // conv1 reads the image (2x3x32x32 fp16, unpadded: no first-layer kernel) from L2 and leaves its raw
  // output there.
  CHECK(hits(with_l2, "conv1") == act + 2 * 3 * 32 * 32 * 2);
  // A window of half the activation: only the most recent half is still there.
  g.params["l2_reuse_fraction"] = 0.5 * double(act) / (g.l2_mb * 1e6);
  const Analysis half = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  CHECK(hits(half, "relu1") == act);  // half of its input, half of its output
  g.params["l2_reuse_fraction"] = 0;
  const Analysis without = analyze_file(test::data("tiny_cnn.onnx"), g, a);
  for (const auto& k : without.kernels) CHECK(k.cost->l2_hit_bytes == 0);
  // The kernels' device time: at batch 2 the step itself is the host's.
  CHECK(without.total.gpu_busy_us > with_l2.total.gpu_busy_us);
}

TEST_CASE("a reduction knows whether it runs over contiguous rows (docs/model.md \"Memory-bound kernels\")") {
  test::OnnxBuilder b(13);
  b.input("x", {2, 16, 7, 7});
  b.node("GlobalAveragePool", {"x"}, {"y"});
  b.output("y");
  const Model m = b.load_batch(2);
  auto kept_inside = [&](Layout layout) {
    ExecutionConfig e = default_execution(*find_runtime("eager"));
    e.layout = layout;
    const KernelGraph g = lower_model(m, e);
    for (const Kernel& k : g.kernels)
      if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr)
        if (p->op == MemoryOp::reduce) return p->kept_inside;
    FAIL("no reduction");
    return int64_t(0);
  };
  CHECK(kept_inside(Layout::nchw) == 1);    // H*W contiguous: a row per output
  CHECK(kept_inside(Layout::nhwc) == 16);   // N,H,W,C: the channels lie inside

  GpuModel g = test::gpu("h200");
  g.params["reduce_row_ns"] = 1.0;
  MemoryProblem rows;
  rows.op = MemoryOp::reduce;
  rows.outer = 100000;
  rows.inner = 49;
  Layer l;
  l.problem = rows;
  const double with_rows = cost_layer(l, g).memory_us;
  rows.kept_inside = 16;
  l.problem = rows;
  const double across = cost_layer(l, g).memory_us;
  CHECK(with_rows - across == doctest::Approx(100.0));  // 100,000 rows at 1 ns
}

TEST_CASE("a softmax over short contiguous rows takes PyTorch's warp path (docs/model.md \"Memory-bound kernels\")") {
  // Attention scores [2, 3, 49, 49] over the last axis; a softmax over axis 1
  // of [2, 8, 4, 5]; one over 1,025 values.
  auto softmax_of = [](std::vector<int64_t> dims, int64_t axis, int opset = 13) {
    test::OnnxBuilder b(opset);
    b.input("x", dims);
    auto& n = b.node("Softmax", {"x"}, {"y"});
    test::OnnxBuilder::attr(n, "axis", axis);
    b.output("y");
    const Model m = b.load_batch(dims[0]);
    ExecutionConfig e = default_execution(*find_runtime("eager"));
    e.layout = Layout::nhwc;  // PyTorch makes a softmax's input contiguous: the layout moves nothing
    const KernelGraph g = lower_model(m, e);
    for (const Kernel& k : g.kernels)
      if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr)
        if (p->op == MemoryOp::row_norm) return *p;
    FAIL("no softmax");
    return MemoryProblem{};
  };
  const MemoryProblem scores = softmax_of({2, 3, 49, 49}, -1);
  CHECK(scores.warp_rows);
  CHECK(scores.outer == 2 * 3 * 49);
  CHECK(scores.inner == 49);
  const MemoryProblem across = softmax_of({2, 8, 4, 5}, 1);
  CHECK_FALSE(across.warp_rows);
  CHECK(across.inner == 8);
  CHECK(across.kept_inside == 20);
  CHECK(across.outer == 2 * 4 * 5);
  CHECK_FALSE(softmax_of({2, 1025}, -1).warp_rows);
  // Before opset 13 the input is 2-D at `axis`: rows of every value from it on.
  const MemoryProblem coerced = softmax_of({2, 4, 8}, 1, 11);
  CHECK(coerced.warp_rows);
  CHECK(coerced.inner == 32);
  CHECK(coerced.kept_inside == 1);

  // The cost: warps of 2 rows a group, 32 threads a row of 49 padded to 64.
  Layer l;
  l.dtype = DType::fp16;
  MemoryProblem rows;
  rows.op = MemoryOp::row_norm;
  rows.outer = 1 << 20;
  rows.inner = 49;
  rows.warp_rows = true;
  l.problem = rows;
  GpuModel g = test::gpu("h200");
  g.params["row_ns"] = 1.0;
  g.params["softmax_warp_value_ns"] = 0.0;
  g.params["softmax_warp_shuffle_ns"] = 0.0;
  g.params["softmax_warp_chain_ns"] = 0.0;
  const KernelCost row_rule = cost_layer(l, g);  // no warp terms: row_ns a row, as any row
  CHECK(row_rule.warps == (1 << 20) / 2);
  CHECK(row_rule.values_per_thread == 4);
  CHECK(row_rule.shuffles_per_warp == 2 * 2 * 5);
  g.params["softmax_warp_value_ns"] = 1.0;
  g.params["softmax_warp_shuffle_ns"] = 1.0;
  const KernelCost warp = cost_layer(l, g);
  CHECK(warp.memory_us == doctest::Approx((1 << 19) * (4 + 20) * 1e-3));  // issue-bound, no row_ns
  CHECK(row_rule.memory_us < warp.memory_us);  // these terms are no fit: the warps bound it
  // Few rows: one warp's chain is the floor.
  rows.outer = 1;
  rows.inner = 1024;
  l.problem = rows;
  g.params["softmax_warp_chain_ns"] = 100.0;
  CHECK(cost_layer(l, g).memory_us == doctest::Approx(32 * 100.0 * 1e-3));
}

TEST_CASE("a LayerNorm's rows cost layer_norm_fp32_row_factor more over fp32 values; a softmax's and half rows do not") {
  // The flag comes from lowering: LayerNormalization sets it; Softmax and RMSNorm's form do not.
  for (const char* op : {"LayerNormalization", "Softmax", "SimplifiedLayerNormalization", "RMSNormalization"}) {
    CAPTURE(op);
    test::OnnxBuilder b(23);
    b.input("x", {2, 197, 192});
    if (std::string(op) != "Softmax") {
      b.weight("g", {192});
      b.node(op, {"x", "g"}, {"y"});
    } else {
      b.node(op, {"x"}, {"y"});
    }
    b.output("y");
    const Model m = b.load_batch(2);
    const KernelGraph g = lower_model(m, default_execution(*find_runtime("eager")));
    bool found = false;
    for (const Kernel& k : g.kernels)
      if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr; p && p->op == MemoryOp::row_norm) {
        CHECK(p->layer_norm == (std::string(op) == "LayerNormalization"));
        found = true;
      }
    CHECK(found);
  }
  Layer l;
  MemoryProblem rows;
  rows.op = MemoryOp::row_norm;
  rows.outer = 1 << 20;
  rows.inner = 192;
  rows.layer_norm = true;
  l.problem = rows;
  GpuModel gpu = test::gpu("h200");
  gpu.params["row_ns"] = 1.0;
  gpu.params["layer_norm_fp32_row_factor"] = 1.0;
  l.dtype = DType::fp32;
  const double plain_us = cost_layer(l, gpu).memory_us;
  gpu.params["layer_norm_fp32_row_factor"] = 1.5;
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(plain_us + 0.5 * (1 << 20) * 1e-3));
  l.dtype = DType::fp16;  // half rows keep row_ns
  const double half_us = cost_layer(l, gpu).memory_us;
  gpu.params["layer_norm_fp32_row_factor"] = 1.0;
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(half_us));
  rows.layer_norm = false;  // a block softmax's fp32 rows keep row_ns
  l.problem = rows;
  l.dtype = DType::fp32;
  gpu.params["layer_norm_fp32_row_factor"] = 1.5;
  CHECK(cost_layer(l, gpu).memory_us == doctest::Approx(plain_us));
}

TEST_CASE("a weight-only float subgraph runs on every forward in PyTorch, is folded by an engine; shape math is neither") {
  // A weight-standardised conv (docs/model.md "Weight-only subgraphs"): the
  // weight's mean is taken and subtracted before the conv reads it; a
  // Shape -> Gather -> Unsqueeze -> Concat chain feeds a Reshape.
  test::OnnxBuilder b(13);
  b.input("x", {1, 4, 8, 8});
  b.weight("w", {4, 4, 3, 3});
  b.ints("axes", {1, 2, 3});
  b.ints("zero", {0}, true);
  b.ints("minus_one", {-1});
  auto& mean = b.node("ReduceMean", {"w"}, {"w_mean"});
  test::OnnxBuilder::attr(mean, "axes", std::vector<int64_t>{1, 2, 3});
  b.node("Sub", {"w", "w_mean"}, {"w_std"});
  b.node("Conv", {"x", "w_std"}, {"y"});
  b.node("Shape", {"y"}, {"y_shape"});
  b.node("Gather", {"y_shape", "zero"}, {"n"});
  auto& unsq = b.node("Unsqueeze", {"n"}, {"n1"});
  test::OnnxBuilder::attr(unsq, "axes", std::vector<int64_t>{0});
  auto& cat = b.node("Concat", {"n1", "minus_one"}, {"flat_shape"});
  test::OnnxBuilder::attr(cat, "axis", int64_t(0));
  b.node("Reshape", {"y", "flat_shape"}, {"z"});
  b.output("z");
  const Model m = b.load_batch(1);
  CHECK(m.weight_computed == std::unordered_set<std::string>{"w_mean", "w_std"});
  auto launched = [&](const std::string& runtime) {
    const KernelGraph g = lower_model(m, default_execution(runtime_named(runtime, "test")));
    std::vector<std::string> nodes;
    for (const Kernel& k : g.kernels)
      for (int i : k.nodes) nodes.push_back(m.nodes[size_t(i)].op_type);
    return nodes;
  };
  for (const char* runtime : {"eager", "inductor"}) {
    CAPTURE(runtime);
    const auto nodes = launched(runtime);
    CHECK(count(nodes, "ReduceMean") == 1);
    CHECK(count(nodes, "Sub") == 1);
    for (const char* shape_op : {"Shape", "Gather", "Unsqueeze", "Concat"}) CHECK(count(nodes, shape_op) == 0);
  }
  const auto engine = launched("tensorrt");
  CHECK(count(engine, "ReduceMean") == 0);
  CHECK(count(engine, "Sub") == 0);
  CHECK(count(engine, "Conv") == 1);
  for (const char* shape_op : {"Shape", "Gather", "Unsqueeze", "Concat"}) CHECK(count(engine, shape_op) == 0);
}

namespace {
// torch.onnx's GroupNorm of x [N, 8, 6, 6] in `groups` groups: Reshape,
// InstanceNormalization, Reshape back, the affine Mul and Add.
test::OnnxBuilder group_norm_model(int64_t groups, bool conv_after = false) {
  test::OnnxBuilder b(13);
  b.input("input", {2, 8, 6, 6});
  b.weight("w", {8, 8, 1, 1});
  b.node("Conv", {"input", "w"}, {"x"});
  b.ints("rows_shape", {0, groups, -1});
  b.ints("x_shape", {2, 8, 6, 6});
  b.floats("ones", std::vector<float>(size_t(groups), 1.0f));
  b.floats("zeros", std::vector<float>(size_t(groups), 0.0f));
  b.weight("gamma", {8, 1, 1});
  b.weight("beta", {8, 1, 1});
  b.node("Reshape", {"x", "rows_shape"}, {"rows"});
  b.node("InstanceNormalization", {"rows", "ones", "zeros"}, {"normed"});
  b.node("Reshape", {"normed", "x_shape"}, {"back"});
  b.node("Mul", {"back", "gamma"}, {"scaled"});
  b.node("Add", {"scaled", "beta"}, {"y"});
  b.node("Relu", {"y"}, {conv_after ? "act" : "out"});
  if (conv_after) {
    b.weight("w2", {8, 8, 3, 3});
    test::OnnxBuilder::attr(b.node("Conv", {"act", "w2"}, {"out"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  }
  b.output("out");
  return b;
}
}  // namespace

TEST_CASE("eager: an exported GroupNorm is PyTorch's three kernels: row moments, scale and shift, apply") {
  const Model m = group_norm_model(2).load_batch(2);
  const KernelGraph l = eager_lowering(m, false, Layout::nchw);
  CHECK(ops(l) == std::vector<std::string>{"Conv", "InstanceNormalization+Reshape", "norm_params",
                                           "norm_apply", "Relu"});
  const auto& moments = std::get<MemoryProblem>(l.kernels[1].layer->problem);
  CHECK(moments.row_moments);
  CHECK(moments.outer == 2 * 2);        // (image, group) rows
  CHECK(moments.inner == 4 * 6 * 6);    // 4 channels of 6x6 per group
  CHECK(moments.elems_written() == 2 * 4);  // a mean and a 1/std per row
  const auto& apply = std::get<MemoryProblem>(l.kernels[3].layer->problem);
  CHECK(apply.elems == 2 * 8 * 6 * 6);
  // The apply reads x and the scales, and writes what the Relu reads.
  REQUIRE(l.kernels[3].writes.size() == 1);
  CHECK(l.kernels[4].reads[0].name == l.kernels[3].writes[0].name);
  CHECK(l.kernels[3].reads[0].name == "x");
  CHECK(l.kernels[2].reads[0].name == l.kernels[1].writes[0].name);

  // Under autocast the op runs in fp32: one cast of the conv's half output
  // in, the three kernels in fp32; the Relu after it runs on the fp32 result
  // (nothing casts it back).
  const KernelGraph amp = eager_lowering(m, true, Layout::nchw);
  CHECK(ops(amp) == std::vector<std::string>{"cast", "cast", "Conv", "cast", "InstanceNormalization+Reshape",
                                             "norm_params", "norm_apply", "Relu"});
  for (int i : {4, 5, 6, 7}) CHECK(amp.kernels[size_t(i)].layer->dtype == DType::fp32);
  // The moments and the apply read the fp32 copy the cast wrote (so its L2 hits are theirs).
  const Kernel& cast = amp.kernels[3];
  REQUIRE(cast.writes.size() == 1);
  CHECK(cast.reads[0].name == "x");
  CHECK(amp.kernels[4].reads[0].name == cast.writes[0].name);
  CHECK(amp.kernels[6].reads[0].name == cast.writes[0].name);
  CHECK(cast.writes[0].bytes == 2 * 8 * 6 * 6 * 4);

  // Other runtimes keep their own lowering of the nodes.
  const KernelGraph trt = lower_model(m, cuda_graph_harness(*find_runtime("tensorrt"), DType::fp16));
  for (const Kernel& k : trt.kernels)
    if (auto* p = k.layer ? std::get_if<MemoryProblem>(&k.layer->problem) : nullptr) CHECK_FALSE(p->row_moments);
}

TEST_CASE("eager under channels_last: a GroupNorm copies its input to NCHW and returns NCHW, which the next conv copies back") {
  const Model m = group_norm_model(2, true).load_batch(2);
  const KernelGraph l = eager_lowering(m, false, Layout::nhwc);
  CHECK(ops(l) == std::vector<std::string>{"Conv", "layout_transform", "InstanceNormalization+Reshape", "norm_params",
                                           "norm_apply", "Relu", "layout_transform", "Conv"});
  const Kernel& to_nchw = l.kernels[1];
  const Kernel& apply = l.kernels[4];
  const Kernel& to_nhwc = l.kernels[6];
  CHECK(std::get<MemoryProblem>(to_nchw.layer->problem).op == MemoryOp::transform);
  CHECK(std::get<MemoryProblem>(to_nchw.layer->problem).elems_in == 2 * 8 * 6 * 6);
  // The moments and the apply read the NCHW copy; the Relu reads the apply's
  // NCHW output, and the conv (its weight a channels_last parameter) the copy of it.
  REQUIRE(to_nchw.writes.size() == 1);
  CHECK(to_nchw.reads[0].name == "x");
  CHECK(l.kernels[2].reads[0].name == to_nchw.writes[0].name);
  CHECK(apply.reads[0].name == to_nchw.writes[0].name);
  CHECK(l.kernels[5].reads[0].name == apply.writes[0].name);
  CHECK(to_nhwc.reads[0].name == l.kernels[5].writes[0].name);
  CHECK(l.kernels[7].reads[0].name == to_nhwc.writes[0].name);

  // Autocast casts the conv's half output to fp32 first; the copy before the
  // GroupNorm moves fp32, the one before the conv half after the cast down.
  const KernelGraph amp = eager_lowering(m, true, Layout::nhwc);
  CHECK(ops(amp) == std::vector<std::string>{"cast", "cast", "Conv", "cast", "layout_transform",
                                             "InstanceNormalization+Reshape", "norm_params", "norm_apply", "Relu",
                                             "cast", "layout_transform", "cast", "Conv"});
  for (int i : {4, 5, 6, 7}) CHECK(amp.kernels[size_t(i)].layer->dtype == DType::fp32);
  CHECK(amp.kernels[10].layer->dtype == DType::fp16);
  CHECK(amp.kernels[4].reads[0].name == amp.kernels[3].writes[0].name);
  CHECK(amp.kernels[3].name == amp.kernels[5].name + "/cast_fp32");  // named after the op, as without the copy

  // In NCHW, and on inductor, nothing is copied for them (the 3x3 conv's own
  // transforms to cuDNN's NHWC kernel stay, in NCHW).
  for (const KernelGraph& g : {eager_lowering(m, true, Layout::nchw),
                               lower_model(m, cuda_graph_harness(*find_runtime("inductor"), DType::fp16))})
    for (size_t i = 0; i < g.kernels.size(); ++i) {
      CHECK(g.kernels[i].name.find("contiguous_") == std::string::npos);
      if (i + 1 < g.kernels.size() && is_group_norm(g.kernels[i + 1]))
        CHECK_FALSE(g.kernels[i].ops.is(RuntimeStep::layout_transform));
    }
}

TEST_CASE("eager under channels_last: an add of a channels_last and an NCHW tensor is strided") {
  test::OnnxBuilder b = group_norm_model(2);
  b.node("Add", {"out", "x"}, {"sum"});
  b.output("sum");
  const KernelGraph l = eager_lowering(b.load_batch(2), false, Layout::nhwc);
  REQUIRE(l.kernels.back().ops.is("Add"));
  CHECK(std::get<MemoryProblem>(l.kernels.back().layer->problem).strided);
  const KernelGraph nchw = eager_lowering(b.load_batch(2), false, Layout::nchw);
  CHECK_FALSE(std::get<MemoryProblem>(nchw.kernels.back().layer->problem).strided);
}

TEST_CASE("eager: an InstanceNormalization that is not a GroupNorm's stays one kernel") {
  test::OnnxBuilder b(13);
  b.input("x", {2, 8, 36});
  b.weight("scale", {8});
  b.weight("bias", {8});
  b.node("InstanceNormalization", {"x", "scale", "bias"}, {"y"});
  b.output("y");
  const Model m = b.load_batch(2);
  const KernelGraph l = lower_model(m, cuda_graph_harness(*find_runtime("eager"), DType::fp16));
  CHECK(ops(l) == std::vector<std::string>{"InstanceNormalization"});
  CHECK_FALSE(std::get<MemoryProblem>(l.kernels[0].layer->problem).row_moments);
}

TEST_CASE("row moments: rows run in waves of resident blocks, each walking its row at a latency-bound rate") {
  GpuModel g = test::gpu("h200");
  g.params["row_block_us"] = 2.0;
  g.params["row_block_element_ns"] = 1.0;
  g.params["row_block_l2_element_ns"] = 0.5;
  g.params["row_blocks_per_sm"] = 4.0;
  MemoryProblem rows;
  rows.op = MemoryOp::row_norm;
  rows.row_moments = true;
  rows.outer = 1;
  rows.inner = 300000;
  Layer l;
  l.problem = rows;
  l.dtype = DType::fp32;
  const KernelCost one = cost_layer(l, g);
  CHECK(one.waves == 1);
  CHECK(one.tiles == 1);
  CHECK(one.memory_us == doctest::Approx(2.0 + 300.0));  // one block: 300,000 elements at 1 ns
  // 132 SMs x 4 blocks: 528 rows are one wave, 529 two.
  rows.outer = 528;
  l.problem = rows;
  CHECK(cost_layer(l, g).waves == 1);
  rows.outer = 529;
  l.problem = rows;
  CHECK(cost_layer(l, g).waves == 2);
  // Many short rows cost at least their bytes.
  rows.outer = 1 << 20;
  rows.inner = 64;
  l.problem = rows;
  const KernelCost many = cost_layer(l, g);
  CHECK(many.memory_us >= double(many.bytes) / (g.dram_bandwidth_gbs * 1e3));
}

TEST_CASE("eager under autocast: types follow PyTorch's promotion; a half-type op casts each fp32 input it reads") {
  // x -> Conv -> Mul by a per-channel fp32 parameter -> Add of the fp32
  // input -> Relu -> Conv -> Mul by a scalar: the parameter makes the
  // residual stream fp32 until the next conv casts it (timm's layer scale).
  test::OnnxBuilder b(13);
  b.input("x", {2, 8, 6, 6});
  b.weight("w1", {8, 8, 1, 1});
  b.weight("w2", {8, 8, 1, 1});
  b.weight("gamma", {8, 1, 1});
  b.floats("half_scale", {0.5f}, true);
  b.node("Conv", {"x", "w1"}, {"a"});
  b.node("Mul", {"a", "gamma"}, {"scaled"});
  b.node("Add", {"scaled", "x"}, {"sum"});
  b.node("Relu", {"sum"}, {"act"});
  b.node("Conv", {"act", "w2"}, {"c"});
  b.node("Mul", {"c", "half_scale"}, {"out"});
  b.output("out");
  const Model m = b.load_batch(2);
  const KernelGraph g = eager_lowering(m, true);
  CHECK(ops(g) == std::vector<std::string>{"cast", "cast", "Conv", "Mul", "Add", "Relu", "cast", "cast", "Conv", "Mul"});
  auto dtype = [&](size_t i) { return g.kernels[i].layer->dtype; };
  // The weight's cast, then the network's fp32 input, cast where the conv reads it.
  CHECK(g.kernels[0].name == "a/cast_weight");
  CHECK(g.kernels[1].reads[0].name == "x");
  CHECK(dtype(2) == DType::fp16);
  CHECK(dtype(3) == DType::fp32);  // the parameter promotes
  CHECK(dtype(4) == DType::fp32);  // an fp32 operand promotes
  CHECK(dtype(5) == DType::fp32);
  CHECK(g.kernels[7].name == "c/cast_input");  // the second conv casts the fp32 activation it reads
  CHECK(g.kernels[7].reads[0].name == "act");
  CHECK(g.kernels[8].reads[0].name == g.kernels[7].writes[0].name);
  CHECK(dtype(9) == DType::fp16);  // a scalar does not promote
  // The fp32 values are twice the bytes: the Relu moves 4 + 4 bytes a value.
  CHECK(min_bytes(*g.kernels[5].layer) == 2 * 8 * 6 * 6 * 8);

  // inductor keeps each op in the half type.
  ExecutionConfig ind = cuda_graph_harness(*find_runtime("inductor"), DType::fp16);
  ind.amp = true;
  for (const Kernel& k : lower_model(m, ind).kernels)
    if (k.layer && !k.ops.is(RuntimeStep::cast)) CHECK(k.layer->dtype == DType::fp16);
}

TEST_CASE("eager under autocast: a MatMul of two fp32 activations casts each, under its own name") {
  test::OnnxBuilder b(13);
  b.input("a", {2, 8, 16});
  b.input("b", {2, 16, 8});
  b.node("MatMul", {"a", "b"}, {"m"});
  b.output("m");
  const Model m = b.load_batch(2);
  const KernelGraph g = eager_lowering(m, true);
  REQUIRE(g.kernels.size() == 3);
  CHECK(g.kernels[0].name == "m/cast_input");
  CHECK(g.kernels[1].name == "m/cast_input2");
  CHECK(g.kernels[2].reads[0].name == g.kernels[0].writes[0].name);
  CHECK(g.kernels[2].reads[1].name == g.kernels[1].writes[0].name);
  CHECK(g.kernels[2].layer->dtype == DType::fp16);
}

TEST_CASE("eager under autocast: a Cast to the type its input has in the export keeps the run-time type") {
  // EvoNorm's group std: x.float() ... .to(x_dtype) are both Cast(to=FLOAT)
  // in an fp32 export, so neither may turn the activations fp32; a cast to
  // FLOAT16 and back is a real type change either way.
  test::OnnxBuilder b(13);
  b.input("x", {2, 8, 6, 6});
  b.weight("w", {8, 8, 1, 1});
  b.node("Conv", {"x", "w"}, {"a"});
  test::OnnxBuilder::attr(b.node("Cast", {"a"}, {"same"}), "to", int64_t(tilewave::onnx::TensorProto::FLOAT));
  b.node("Relu", {"same"}, {"r"});
  test::OnnxBuilder::attr(b.node("Cast", {"r"}, {"h"}), "to", int64_t(tilewave::onnx::TensorProto::FLOAT16));
  test::OnnxBuilder::attr(b.node("Cast", {"h"}, {"f"}), "to", int64_t(tilewave::onnx::TensorProto::FLOAT));
  b.node("Relu", {"f"}, {"out"});
  b.output("out");
  const Model m = b.load_batch(2);
  const KernelGraph g = eager_lowering(m, true);
  CHECK(ops(g) == std::vector<std::string>{"cast", "cast", "Conv", "Cast", "Relu", "Cast", "Cast", "Relu"});
  auto dtype = [&](size_t i) { return g.kernels[i].layer->dtype; };
  CHECK(dtype(3) == DType::fp16);  // no-op in the export: the conv's half output stays half
  CHECK(dtype(4) == DType::fp16);
  CHECK(dtype(5) == DType::fp16);
  CHECK(dtype(6) == DType::fp32);  // FLOAT16 -> FLOAT is x.float()
  CHECK(dtype(7) == DType::fp32);
}

TEST_CASE("the precision pass reads the runtime's traits, not its name") {
  const size_t conv = Problem(ConvProblem{}).index();
  LoadOptions o;
  o.batch = 1;
  const Model convnext = load_onnx(test::zoo("convnext_tiny.onnx"), o);
  for (const RuntimeProfile* r : builtin_runtimes()) {
    const std::string name = r->name();
    CAPTURE(name);
    // PyTorch's fp32 runs cuDNN's convolutions in TF32; an engine keeps fp32.
    const KernelGraph fp32 = lower_at(name, DType::fp32);
    REQUIRE_FALSE(of_problem(fp32, conv).empty());
    for (const Kernel* k : of_problem(fp32, conv)) CHECK((k->layer->dtype == DType::tf32) == r->applies_autocast());
    // Under AMP autocast brings casts. Placed tensor by tensor (eager), a
    // LayerNorm reads the fp32 tensor its input already is; a compiler casts
    // inside its kernels, so an fp32-list op sits between two casts.
    ExecutionConfig amp = default_execution(*r, DType::fp16);
    amp.amp = true;
    const KernelGraph g = lower_model(convnext, amp);
    int casts = 0, casts_back = 0;
    for (const auto& k : g.kernels) {
      casts += k.ops.is(RuntimeStep::cast);
      casts_back += k.ops.is(RuntimeStep::cast) && k.name.find("/cast_back") != std::string::npos;
    }
    CHECK((casts > 0) == r->applies_autocast());
    CHECK((casts_back > 0) == (r->applies_autocast() && !r->casts_per_tensor()));
  }
}

TEST_CASE("layout pass: a pointwise conv given NCHW in half precision takes the faster of its two paths") {
  // docs/model.md "Pointwise convolutions on NCHW": cuDNN's benchmark mode.
  const GpuModel gpu = test::gpu("h200");
  ExecutionConfig e = cuda_graph_harness(*find_runtime("eager"), DType::fp16);
  e.layout = Layout::nchw;
  const GpuModel specialised = gpu_for(gpu, e);
  const CostModel costs(specialised);
  auto lowered = [&](int64_t c, int64_t side, int64_t batch, const CostModel* with) {
    test::OnnxBuilder b(13);
    b.input("x", {batch, c, side, side});
    b.weight("w", {c, c, 1, 1});
    b.node("Conv", {"x", "w"}, {"y"});
    b.output("y");
    return lower_model(b.load_batch(batch), e, with);
  };
  auto path_us = [&](const KernelGraph& g) {
    double us = 0;
    for (const Kernel& k : g.kernels)
      if (k.ops.is(RuntimeStep::layout_transform) || (k.layer && std::holds_alternative<ConvProblem>(k.layer->problem)))
        us += cost_layer(*k.layer, costs).time_us;
    return us;
  };
  auto transforms = [](const KernelGraph& g) {
    return std::count_if(g.kernels.begin(), g.kernels.end(),
                         [](const Kernel& k) { return k.ops.is(RuntimeStep::layout_transform); });
  };
  // Many channels over a 7x7 map: the direct GEMM's 49 positions per image waste its tiles.
  const KernelGraph small_map = lowered(1024, 7, 64, &costs), small_direct = lowered(1024, 7, 64, nullptr);
  CHECK(transforms(small_map) == 2);
  CHECK(transforms(small_direct) == 0);
  CHECK(path_us(small_map) < path_us(small_direct));
  // Few channels over a large map: the direct GEMM, no transforms.
  const KernelGraph large_map = lowered(64, 56, 16, &costs);
  CHECK(transforms(large_map) == 0);
}
