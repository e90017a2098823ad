// tilewave_bench: the speed figures docs/performance.md reports.
//   1. analysing a model: load (protobuf parse + shape inference) apart from
//      the analysis proper (graph, lowering, costing);
//   2. `layers` throughput: cost_layer() calls per second on one core;
//   3. large graphs (issue 9's linear-time lowering): a chain of 10,000
//      elementwise nodes and a 5,000-layer CNN, built in memory, loaded and
//      analysed under each runtime.
// usage: tilewave_bench MODEL.onnx BATCH LAYERS.jsonl [GPU]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <tuple>

#include "tilewave_onnx.pb.h"

#include "tilewave/analysis.h"
#include "tilewave/layer_set.h"
#include "tilewave/lowering.h"
#include "tilewave/pipeline.h"

using namespace tilewave;
using Clock = std::chrono::steady_clock;

namespace {
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

template <class F>
double best_ms(int reps, F&& f) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    auto t = Clock::now();
    f();
    best = std::min(best, ms_since(t));
  }
  return best;
}
// x -> [Conv 3x3 64->64 + Relu] x layers (conv_layers > 0), or a chain of
// `relus` Relu nodes on [1, 64, 56, 56].
std::shared_ptr<onnx::ModelProto> big_graph(int conv_layers, int relus) {
  auto m = std::make_shared<onnx::ModelProto>();
  m->set_ir_version(8);
  m->add_opset_import()->set_version(17);
  auto* g = m->mutable_graph();
  g->set_name("big");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 64, 56, 56}) tt->mutable_shape()->add_dim()->set_dim_value(d);
  std::string prev = "x";
  auto node = [&](const char* op, std::vector<std::string> ins, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  for (int i = 0; i < conv_layers; ++i) {
    const std::string w = "w" + std::to_string(i);
    auto* t = g->add_initializer();
    t->set_name(w);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {64, 64, 3, 3}) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* c = node("Conv", {prev, w}, "c" + std::to_string(i));
    auto* pads = c->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int k = 0; k < 4; ++k) pads->add_ints(1);
    prev = node("Relu", {c->output(0)}, "r" + std::to_string(i))->output(0);
  }
  for (int i = 0; i < relus; ++i) prev = node("Relu", {prev}, "e" + std::to_string(i))->output(0);
  g->add_output()->set_name(prev);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.onnx BATCH LAYERS.jsonl [GPU]\n", argv[0]);
    return 2;
  }
  const std::string model_path = argv[1];
  const int64_t batch = std::stoll(argv[2]);
  const GpuModel gpu = load_gpu(argc > 4 ? argv[4] : "h200", default_gpu_dir());
  AnalyzeOptions opt;
  opt.load.batch = batch;

  std::ifstream f(model_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const double parse_ms = best_ms(20, [&] {
    onnx::ModelProto m;
    m.ParseFromString(bytes);
  });
  const double load_ms = best_ms(20, [&] { load_onnx(model_path, opt.load); });
  const Model model = load_onnx(model_path, opt.load);
  size_t kernels = 0;
  const double analyze_ms = best_ms(50, [&] { kernels = analyze_model(model, gpu, opt).kernels.size(); });
  std::printf("model %s, batch %lld, %zu nodes -> %zu kernels\n", model_path.c_str(), (long long)batch,
              model.nodes.size(), kernels);
  std::printf("  protobuf parse              %8.3f ms\n", parse_ms);
  std::printf("  load (parse + shape inference) %5.3f ms\n", load_ms);
  std::printf("  analysis past the load      %8.3f ms  (graph, lowering, costing, totals)\n", analyze_ms);

  const auto entries = read_layer_set(argv[3]);
  std::vector<Layer> layers;
  for (const auto& e : entries) layers.push_back(e.layer);
  const int rounds = std::max<int>(1, int(200000 / std::max<size_t>(layers.size(), 1)));
  double sink = 0;
  const auto t = Clock::now();
  const CostModel cost_model(gpu);  // resolved once, as a search loop would
  for (int r = 0; r < rounds; ++r)
    for (const auto& l : layers) sink += cost_layer(l, cost_model).time_us;
  const double s = ms_since(t) / 1e3;
  const double n = double(rounds) * double(layers.size());
  std::printf("layer predictions: %.0f layers in %.3f s on one core = %.0f layers/s  (checksum %.3g)\n", n, s, n / s,
              sink);

  for (const auto& [name, convs, relus] : {std::tuple<const char*, int, int>{"10,000-node Relu chain", 0, 10000},
                                          {"5,000-layer CNN (Conv+Relu)", 5000, 0}}) {
    const auto proto = big_graph(convs, relus);
    for (const RuntimeProfile* rt : builtin_runtimes()) {
      AnalyzeOptions o;
      o.exec.runtime = rt;
      const auto t0 = Clock::now();
      const Model big = load_onnx_proto(std::make_shared<onnx::ModelProto>(*proto), "big.onnx");
      const Analysis a = analyze_model(big, gpu, o);
      std::printf("%-28s %-12s %6zu nodes -> %6zu kernels in %8.1f ms (load + analysis)\n", name, rt->name(),
                  big.nodes.size(), a.kernels.size(), ms_since(t0));
    }
  }
  return 0;
}
