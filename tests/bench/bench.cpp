// tilewave_bench: the speed figures docs/performance.md reports.
//   1. analysing a model: load (protobuf parse + shape inference) apart from
//      the analysis proper (graph, lowering, costing);
//   2. `layers` throughput: cost_layer() calls per second on one core.
// usage: tilewave_bench MODEL.onnx BATCH LAYERS.jsonl [GPU]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "tilewave_onnx.pb.h"

#include "tilewave/analysis.h"
#include "tilewave/layer_set.h"

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
  return 0;
}
