// The stages composed in their order (tilewave/pipeline.h, docs/model.md "Pipeline").
#include "tilewave/pipeline.h"

#include <stdexcept>

#include "tilewave/passes.h"
#include "tilewave/shape_inference.h"

namespace tilewave {

Model load_onnx(const std::string& path, const LoadOptions& options) {
  return load_onnx_proto(read_onnx_file(path), path, options);
}

Model load_onnx_proto(std::shared_ptr<onnx::ModelProto> proto, const std::string& path, const LoadOptions& options) {
  Model model = read_onnx_proto(std::move(proto), path, options);
  infer_shapes(model, options.registry ? *options.registry : OpRegistry::builtin());
  return model;
}

KernelGraph lower_model(const Model& model, const ExecutionConfig& exec, const CostModel* costs,
                        const OpRegistry& registry) {
  KernelGraph out = lower_for_runtime(model, exec, registry);
  const LowerInput in{model, registry, exec.dtype, exec};
  LayerTime layer_us;
  if (costs) layer_us = [costs](const Layer& l) { return cost_layer(l, *costs).time_us; };
  layout_pass(in, out, layer_us);
  precision_pass(in, out);
  if (auto e = launch_order_error(out, KernelIndex(out)))
    throw std::logic_error("lowering " + model.path + " broke launch order: " + *e);
  return out;
}

}  // namespace tilewave
