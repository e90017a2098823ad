// The driver of the flow (docs/model.md "Pipeline"): the stages composed in
// their order, each stage's inputs passed in (the op registry, the execution
// configuration). analysis.h builds on these to cost a whole model.
#pragma once
#include <memory>
#include <string>

#include "tilewave/exec_config.h"
#include "tilewave/ir/kernel_graph.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"
#include "tilewave/op_registry.h"

namespace tilewave {

// Load, then shape inference with options.registry (null: the built-in ops):
// every tensor's shape and the small values known at load time. Throws
// InputError naming the file on any problem.
Model load_onnx(const std::string& path, const LoadOptions& options = {});
// The same for a model already in memory; `path` names it in errors.
Model load_onnx_proto(std::shared_ptr<onnx::ModelProto> proto, const std::string& path,
                      const LoadOptions& options = {});

// The stages after loading, composed in their one place: the runtime's
// lowering (over the node graph the loader linked), the passes the configuration asks for
// (docs/model.md "Layout pass", "Precision pass"), then the check that launch
// order respects every edge. exec.fuse_attention: the MatMul-Softmax-MatMul
// chains exporters write for scaled_dot_product_attention become one
// flash-attention kernel (docs/model.md "Attention"); false costs them node by
// node. cuda_graph_harness(runtime, dtype) is the configuration calibrate/'s
// sets were measured under. `costs`, where given, is the GPU the layout pass
// times a pointwise convolution's two paths on (docs/model.md "Pointwise
// convolutions on NCHW"); without it the convolution keeps NCHW.
KernelGraph lower_model(const Model& model, const ExecutionConfig& exec, const CostModel* costs = nullptr,
                        const OpRegistry& registry = OpRegistry::builtin());

}  // namespace tilewave
