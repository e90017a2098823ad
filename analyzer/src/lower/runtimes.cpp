// The built-in runtime profiles (docs/model.md "Runtimes"): each is a short
// composition of the lowering rules in this folder.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "attention_fusion.h"
#include "conv_kernels.h"
#include "framework_ops.h"
#include "pointwise_fusion.h"
#include "trt_fusion.h"
#include "tilewave/error.h"

namespace tilewave {

namespace {

// A lowering of node kernels with the tensor edges of each filled in.
KernelGraph with_edges(const LowerInput& in, KernelGraph out) {
  const KernelEdges edges(in);
  for (Kernel& k : out.kernels) edges.derive(k);
  return out;
}

int64_t channels_of(const LowerInput& in, const Node& bn) {
  const TensorInfo* x = in.model.tensor(bn.inputs[0]);
  return x && x->dims.size() > 1 && x->dims[1] > 0 ? x->dims[1] : 1;
}

// Elements of one (image, channel) plane of a BatchNorm's input: H x W.
int64_t spatial_of(const LowerInput& in, const Node& bn) {
  const TensorInfo* x = in.model.tensor(bn.inputs[0]);
  int64_t n = 1;
  if (x)
    for (size_t i = 2; i < x->dims.size(); ++i) n *= std::max<int64_t>(1, x->dims[i]);
  return n;
}

// A library convolution with cuDNN's channel padding before it, then its
// bias applied as PyTorch eager does.
void append_eager_conv(const LowerInput& in, const KernelEdges& edges, Kernel conv, int bias_aux,
                       std::vector<Kernel>& out) {
  for (auto& k : channel_padding_kernels(in, edges, conv)) out.push_back(std::move(k));
  std::vector<Kernel> bias = eager_bias_kernels(in, conv, bias_aux);
  out.push_back(std::move(conv));
  for (auto& k : bias) out.push_back(std::move(k));
}

// PyTorch eager: one kernel per framework op, plus the kernels its
// convolutions bring.
class EagerRuntime : public RuntimeProfile {
 public:
  bool follows_layout() const override { return true; }
  // Attention computed op by op in Python stays op by op (docs/model.md "Attention").
  bool fuses_written_attention() const override { return false; }
  bool applies_autocast() const override { return true; }
  bool casts_per_tensor() const override { return true; }
  bool copies_permuted_views() const override { return true; }
  bool aten_resample_kernels() const override { return true; }
  const char* name() const override { return "eager"; }
  const char* summary() const override {
    return "PyTorch eager: one kernel per framework op; a conv's bias or BatchNorm is separate kernels";
  }
  const char* help() const override { return "PyTorch eager"; }
  const char* role_kernels(FusionRole role) const override {
    switch (role) {
      case FusionRole::none: return "nothing (view or load-time value)";
      case FusionRole::gemm: return "library kernel (+ bias/BN kernels)";
      default: return "own kernel";
    }
  }
  KernelGraph lower(const LowerInput& in) const override {
    const KernelEdges edges(in);
    // Over fp32 parameters (autocast) a BatchNorm of half activations is
    // cuDNN's one kernel, without PyTorch's statistics kernels (docs/model.md
    // "Precision pass").
    const int bn_aux = in.exec.amp ? 0 : kBatchNormAuxKernels;
    KernelGraph grouped = lower_framework_ops(in);
    KernelGraph out;
    out.free_nodes = grouped.free_nodes;
    for (Kernel& k : grouped.kernels) {
      edges.derive(k);
      const Node& head = in.model.nodes[k.nodes[0]];
      if (head.op_type == "BatchNormalization" && k.layer) {
        // One over parameters (weight standardisation, docs/model.md
        // "Weight-only subgraphs") stays fp32 under autocast: PyTorch's kernels.
        const bool over_parameters = in.model.static_tensors.count(head.inputs[0]) > 0;
        for (auto& aux :
             batchnorm_aux_kernels(in, k, channels_of(in, head), over_parameters ? kBatchNormAuxKernels : bn_aux))
          out.kernels.push_back(std::move(aux));
        if (auto* m = std::get_if<MemoryProblem>(&k.layer->problem)) {
          m->op = MemoryOp::norm;
          m->outer = m->elems / std::max<int64_t>(1, spatial_of(in, head));  // (image, channel) planes
        }
      }
      if (is_group_norm(k)) {
        for (auto& part : group_norm_kernels(in, std::move(k))) out.kernels.push_back(std::move(part));
        continue;
      }
      const bool conv = k.layer && std::holds_alternative<ConvProblem>(k.layer->problem);
      if (!conv) {
        out.kernels.push_back(std::move(k));
        continue;
      }
      append_eager_conv(in, edges, std::move(k), bn_aux, out.kernels);
    }
    return out;
  }

 private:
  // Seen in PyTorch 2.11's profiles: a copy and an inverse-std kernel before
  // each inference BatchNorm's pass (calibrate/data/h200/runtimes).
  static constexpr int kBatchNormAuxKernels = 2;
};

// What calibrate/measure/netbench timed in runs 1-6: eager PyTorch on a network whose
// BatchNorms were folded into its convs and whose conv biases were removed, so
// that each framework op was one kernel. No user runs this; it is kept so the
// figures of those runs can be reprinted.
class EagerFoldedRuntime : public RuntimeProfile {
 public:
  const char* name() const override { return "eager-folded"; }
  const char* summary() const override {
    return "historical: eager PyTorch with BatchNorm folded and conv biases removed (calibrate/measure/netbench runs 1-6)";
  }
  const char* help() const override { return "reprints runs 1-6 (BatchNorm folded, conv biases removed)"; }
  bool historical() const override { return true; }
  bool fuses_written_attention() const override { return false; }
  KernelGraph lower(const LowerInput& in) const override { return with_edges(in, lower_framework_ops(in)); }
  RuntimeDefaults defaults() const override { return {false, Layout::nhwc, Launch::graph}; }  // as those runs timed it
};

class InductorRuntime : public RuntimeProfile {
 public:
  bool applies_autocast() const override { return true; }
  const char* name() const override { return "inductor"; }
  const char* summary() const override {
    return "torch.compile, default mode: library convs and matmuls, each group of pointwise ops and "
           "reductions between them one generated kernel";
  }
  const char* help() const override { return "torch.compile"; }
  const char* role_kernels(FusionRole role) const override {
    switch (role) {
      case FusionRole::none: return "nothing";
      case FusionRole::gemm: return "library kernel";
      case FusionRole::elementwise:
      case FusionRole::reduction: return "fused into a generated kernel";
      case FusionRole::opaque: break;
    }
    return "own kernel";
  }
  KernelGraph lower(const LowerInput& in) const override { return fuse_pointwise(in, KernelEdges(in)); }
};

class TensorRtRuntime : public RuntimeProfile {
 public:
  bool builds_int8() const override { return true; }
  bool folds_weight_subgraphs() const override { return true; }
  const char* name() const override { return "tensorrt"; }
  const char* summary() const override {
    return "TensorRT-like engine: epilogue fusion into convs and GEMMs, elementwise chains fused";
  }
  const char* help() const override { return "TensorRT-like"; }
  const char* role_kernels(FusionRole role) const override {
    switch (role) {
      case FusionRole::none: return "nothing";
      case FusionRole::gemm: return "library kernel + fused epilogue";
      case FusionRole::elementwise: return "epilogue of its producer, else own";
      default: return "own kernel";
    }
  }
  KernelGraph lower(const LowerInput& in) const override { return with_edges(in, fuse_trt(in)); }
  // An engine is built in its precision and picks its own layouts; its
  // enqueue issues the kernels back to back from C++, which graph replay's
  // gap per kernel stands for.
  RuntimeDefaults defaults() const override { return {false, Layout::nhwc, Launch::graph}; }
};

}  // namespace

const std::vector<const RuntimeProfile*>& builtin_runtimes() {
  static const EagerRuntime eager;
  static const InductorRuntime inductor;
  static const TensorRtRuntime tensorrt;
  static const EagerFoldedRuntime eager_folded;
  static const std::vector<const RuntimeProfile*> all = {&eager, &inductor, &tensorrt, &eager_folded};
  return all;
}

std::vector<std::string> runtime_names(bool historical) {
  std::vector<std::string> names;
  for (const RuntimeProfile* r : builtin_runtimes())
    if (historical || !r->historical()) names.push_back(r->name());
  return names;
}

const RuntimeProfile* find_runtime(const std::string& name) {
  for (const RuntimeProfile* r : builtin_runtimes())
    if (name == r->name()) return r;
  return nullptr;
}

const RuntimeProfile& runtime_named(const std::string& name, const std::string& where) {
  if (const RuntimeProfile* r = find_runtime(name)) return *r;
  std::string known;
  for (const RuntimeProfile* r : builtin_runtimes()) known += (known.empty() ? "" : ", ") + std::string(r->name());
  throw InputError(where, fmt::format("unknown runtime '{}' ({})", name, known));
}

const RuntimeProfile& default_runtime() { return *builtin_runtimes().front(); }

KernelGraph lower_for_runtime(const Model& model, const ExecutionConfig& exec, const OpRegistry& registry) {
  std::vector<std::optional<std::optional<Kernel>>> node_kernels(model.nodes.size());
  std::optional<AttentionChains> chains;
  if (exec.fuse_attention) chains.emplace(model, !exec.runtime_profile().fuses_written_attention());
  const LowerInput in{model, registry, exec.dtype, exec, chains ? &*chains : nullptr, &node_kernels};
  return exec.runtime_profile().lower(in);
}

}  // namespace tilewave
