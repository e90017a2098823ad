#include "tilewave/analysis.h"

#include <filesystem>

#include <fmt/format.h>

namespace tilewave {

Analysis analyze_model(const Model& model, const GpuModel& gpu, const AnalyzeOptions& options) {
  const LayerGraph graph = build_layer_graph(model);
  const Lowering lowered = lower_model(model, graph, options.fusion, options.dtype);
  Analysis a;
  a.model_path = model.path;
  a.model_name = std::filesystem::path(model.path).stem().string();
  a.gpu_id = gpu.id;
  a.gpu_name = gpu.name;
  a.peak_tflops = gpu.peak_flops(options.dtype) / 1e12;
  a.batch = model.batch;
  a.dtype = options.dtype;
  a.fusion = options.fusion;
  a.nodes = int(model.nodes.size());
  a.notes = model.notes;
  a.free_nodes = lowered.free_nodes;
  Losses weighted;
  for (const Kernel& k : lowered.kernels) {
    KernelResult r{k, std::nullopt};
    if (k.layer) {
      r.cost = cost_layer(*k.layer, gpu);
      const KernelCost& c = *r.cost;
      a.total.flops += c.flops;
      a.total.bytes += c.bytes;
      a.total.time_us += c.time_us;
      weighted.tile += c.losses.tile * c.time_us;
      weighted.wave += c.losses.wave * c.time_us;
      weighted.efficiency += c.losses.efficiency * c.time_us;
      weighted.memory += c.losses.memory * c.time_us;
      weighted.fixed += c.losses.fixed * c.time_us;
      ++a.total.kernels;
    } else {
      a.unmodelled.push_back(fmt::format("{} ({}): {}", k.name, k.ops, k.unmodelled_reason));
    }
    a.kernels.push_back(std::move(r));
  }
  const double t = a.total.time_us;
  if (t > 0) {
    a.total.utilization = double(a.total.flops) / (t * 1e-6 * gpu.peak_flops(options.dtype));
    a.total.throughput_per_s = double(a.batch) / (t * 1e-6);
    a.total.losses = {weighted.tile / t, weighted.wave / t, weighted.efficiency / t, weighted.memory / t,
                      weighted.fixed / t};
  }
  return a;
}

Analysis analyze_file(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options) {
  return analyze_model(load_onnx(path, options.load), gpu, options);
}

}  // namespace tilewave
