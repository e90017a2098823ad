// docs/model.md "Precision pass".
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tilewave/passes.h"

namespace tilewave {

namespace {

Kernel cast_kernel(const Kernel& owner, const std::string& suffix, int64_t elems, DType from, DType to) {
  // A vectorized elementwise kernel (at::native's float16 copy), not a strided copy.
  Layer l = elementwise_layer(elems, to);
  l.input_dtype = from;
  return derived_kernel(owner, suffix, RuntimeStep::cast, l, HostCall::cast);
}

bool is_compute(const Kernel& k) {
  return k.layer && (std::holds_alternative<ConvProblem>(k.layer->problem) ||
                     std::holds_alternative<GemmProblem>(k.layer->problem));
}

// Softmax-class kernels (LayerNorm, GroupNorm, Softmax, RMSNorm) and a
// linear resample: on autocast's fp32 list.
bool runs_in_fp32(const Kernel& k) {
  if (!k.layer) return false;
  const auto* m = std::get_if<MemoryProblem>(&k.layer->problem);
  return m && (m->op == MemoryOp::row_norm || m->autocast_fp32);
}

// A kernel the runtime launches inside `owner`'s op, after it.
bool same_op(const Kernel& owner, const Kernel& next) {
  return next.layer && std::holds_alternative<MemoryProblem>(next.layer->problem) && !owner.nodes.empty() &&
         !next.nodes.empty() && next.nodes[0] == owner.nodes[0] &&
         (next.ops.is(RuntimeStep::norm_params) || next.ops.is(RuntimeStep::norm_apply));
}

// The layout pass's transform of an fp32 op's input (an eager GroupNorm's
// under channels_last): the op copies its fp32 input, after autocast's cast.
bool transforms_fp32_input(const Kernel& k, const Kernel& next) {
  return k.ops.is(RuntimeStep::layout_transform) && runs_in_fp32(next) && !k.nodes.empty() &&
         !next.nodes.empty() && k.nodes[0] == next.nodes[0];
}

// An Add of a constant bias to a MatMul by a constant weight over a
// Transpose, the MatMul's one reader, left a kernel of its own: nn.Linear's
// bias, which PyTorch puts in the GEMM's epilogue only for a contiguous input
// (docs/model.md "Framework ops": permuted inputs). A MatMul and Add written
// by hand (the product read elsewhere too) promote to the fp32 parameter.
bool unfused_linear_bias(const Model& m, const Kernel& k) {
  if (k.nodes.size() != 1 || k.nodes[0] < 0 || !k.ops.is("Add")) return false;
  const Node& add = m.nodes[size_t(k.nodes[0])];
  if (add.inputs.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    const Node* mm = m.producer_of(add.inputs[i]);
    if (!mm || mm->op_type != "MatMul" || mm->inputs.size() != 2 || !m.static_tensors.count(mm->inputs[1]) ||
        !m.static_tensors.count(add.inputs[1 - i]) || m.readers_of(add.inputs[i]).size() != 1)
      continue;
    const Node* view = m.producer_of(mm->inputs[0]);
    if (view && view->op_type == "Transpose") return true;
  }
  return false;
}

// A Transpose copied for a matmul or convolution: autocast casts the view to
// the half type, keeping its strides, and the op copies the cast view
// (calibrate/data/h100/strided_inputs/with_copy_sweep, CaiT's proj_w).
bool copies_for_compute(const Model& m, const Kernel& k) {
  if (k.nodes.size() != 1 || k.nodes[0] < 0 || !k.ops.is("Transpose")) return false;
  const auto& readers = m.readers_of(m.nodes[size_t(k.nodes[0])].outputs[0]);
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](const auto& r) {
    const std::string& op = m.nodes[size_t(r.node)].op_type;
    return op == "MatMul" || op == "Gemm" || op == "Conv";
  });
}

// onnx::TensorProto's element types the flow below tells apart.
constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10, kOnnxBfloat16 = 16;

// Autocast's element types, tensor by tensor, for eager PyTorch: what each
// kernel reads and writes (docs/model.md "Precision pass").
class TypeFlow {
 public:
  // The network's float inputs arrive in fp32 (timm's harness feeds torch.randn).
  TypeFlow(const LowerInput& in, DType half) : in_(in), half_(half) {
    for (const auto& x : in.model.inputs) {
      const TensorInfo* t = in.model.tensor(x);
      if (t && t->elem_type == kOnnxFloat && !in.model.initializers.count(x)) types_[x] = DType::fp32;
    }
  }

  DType of(const TensorRef& t) const {
    auto it = types_.find(t.name);
    return it == types_.end() ? t.dtype : it->second;
  }
  // The ref as the tensor now is.
  TensorRef current(TensorRef t) const {
    const DType d = of(t);
    if (d != t.dtype && t.bytes > 0) t.bytes = t.bytes / dtype_bytes(t.dtype) * dtype_bytes(d);
    t.dtype = d;
    return t;
  }
  void refresh_reads(Kernel& k) const {
    for (auto& r : k.reads) r = current(r);
  }
  void write(Kernel& k, DType d) {
    for (auto& w : k.writes) {
      if (w.dtype != d && w.bytes > 0) w.bytes = w.bytes / dtype_bytes(w.dtype) * dtype_bytes(d);
      w.dtype = d;
      types_[w.name] = d;
    }
  }
  bool reads_fp32(const Kernel& k) const {
    return std::any_of(k.reads.begin(), k.reads.end(), [&](const TensorRef& r) { return of(r) == DType::fp32; });
  }
  // An fp32 parameter among the node's operands (a layer scale, a position
  // embedding): PyTorch promotes a half tensor combined with it to fp32. A
  // 0-d or one-value constant is a scalar and does not promote.
  bool reads_fp32_parameter(const Kernel& k) const {
    const Model& m = in_.model;
    for (int idx : k.nodes) {
      if (idx < 0) continue;
      for (const auto& t : m.nodes[size_t(idx)].inputs)
        if (!t.empty() && m.initializers.count(t) && m.numel(t) > 1) {
          const TensorInfo* info = m.tensor(t);
          if (info && info->elem_type == kOnnxFloat) return true;
        }
    }
    return false;
  }
  // A cast of the fp32 tensor `t` to the half type, for a kernel that needs it so.
  Kernel cast_down(const Kernel& owner, const std::string& suffix, const TensorRef& t, TensorRef& replaced) {
    Kernel cast = cast_kernel(owner, suffix, t.bytes / dtype_bytes(DType::fp32), DType::fp32, half_);
    replaced = t;
    replaced.name += "#half";
    replaced.dtype = half_;
    replaced.bytes = t.bytes / dtype_bytes(DType::fp32) * dtype_bytes(half_);
    cast.reads = {t};
    cast.writes = {replaced};
    types_[replaced.name] = half_;
    return cast;
  }

 private:
  const LowerInput& in_;
  DType half_;
  std::unordered_map<std::string, DType> types_;
};

}  // namespace

void precision_pass(const LowerInput& in, KernelGraph& graph) {
  const ExecutionConfig& e = in.exec;
  if (!e.runtime_profile().applies_autocast()) return;
  // PyTorch's fp32 default: cuDNN convolutions in TF32 (allow_tf32), matmuls in fp32.
  if (e.dtype == DType::fp32 && !e.amp) {
    for (Kernel& k : graph.kernels)
      if (k.layer && std::holds_alternative<ConvProblem>(k.layer->problem)) k.layer->dtype = DType::tf32;
    return;
  }
  if (!e.amp) return;
  const Model& m = in.model;
  const DType half = e.dtype;
  // Eager follows autocast's types tensor by tensor; inductor's generated
  // kernels cast inside themselves, so there every op runs in the half type
  // and an fp32-list op sits between two casts.
  const bool flow = e.runtime_profile().casts_per_tensor();
  TypeFlow types(in, half);
  std::unordered_set<std::string> graph_inputs(m.inputs.begin(), m.inputs.end());
  std::vector<Kernel> out;
  out.reserve(graph.kernels.size() * 2);
  // Autocast casts an fp32 activation where a half-type op reads it; a
  // layout transform or a channel pad before a convolution already works on
  // the cast copy.
  auto cast_fp32_reads = [&](Kernel& k) {
    // Named after the op's node ("<conv>/cast_input"), whichever of its kernels reads first.
    Kernel op = k;
    if (!k.nodes.empty() && k.nodes[0] >= 0) op.name = m.nodes[size_t(k.nodes[0])].name;
    int casts = 0;  // a MatMul of two fp32 activations casts both: "/cast_input", "/cast_input2"
    for (auto& r : k.reads)
      if (types.of(r) == DType::fp32) {
        TensorRef cast_copy;
        const std::string suffix = "/cast_input" + (casts++ ? std::to_string(casts) : std::string());
        out.push_back(types.cast_down(op, suffix, r, cast_copy));
        r = cast_copy;
      }
  };
  for (size_t i = 0; i < graph.kernels.size(); ++i) {
    Kernel& k = graph.kernels[i];
    if (flow) types.refresh_reads(k);
    if (is_compute(k) && !k.nodes.empty() && k.nodes[0] >= 0) {
      const Node& n = m.nodes[size_t(k.nodes[0])];
      // Every weight is cast on every forward (no cast cache under inference_mode).
      std::vector<Kernel> parameter_casts;
      const bool conv = std::holds_alternative<ConvProblem>(k.layer->problem);
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        const std::string& t = n.inputs[i];
        if (t.empty() || !m.initializers.count(t) || m.numel(t) <= 0) continue;
        // A folded BatchNorm's bias is not the conv's: PyTorch's BatchNorm keeps fp32 parameters.
        if (conv && i == 2 && !bias_is_own(n, std::get<ConvProblem>(k.layer->problem))) continue;
        parameter_casts.push_back(cast_kernel(k, i == 1 ? "/cast_weight" : "/cast_bias", m.numel(t), DType::fp32, half));
      }
      // A Linear's bias sits in its own Add node (MatMul then Add, one GEMM
      // with a bias epilogue): autocast casts it with the weight.
      for (size_t j = 1; j < k.nodes.size(); ++j) {
        if (k.nodes[j] < 0 || m.nodes[size_t(k.nodes[j])].op_type != "Add") continue;
        for (const auto& t : m.nodes[size_t(k.nodes[j])].inputs)
          if (m.initializers.count(t) && m.numel(t) > 0)
            parameter_casts.push_back(cast_kernel(k, "/cast_bias", m.numel(t), DType::fp32, half));
      }
      if (flow) {
        // Eager's profiles show the parameters' casts first, then the
        // activation's, just before the op that reads it.
        for (auto& c : parameter_casts) out.push_back(std::move(c));
        parameter_casts.clear();
        cast_fp32_reads(k);
      } else {
        // The fp32 input reaches the first op as fp32: autocast casts it there.
        for (const auto& t : n.inputs)
          if (graph_inputs.count(t) && m.numel(t) > 0) {
            Kernel cast = cast_kernel(k, "/cast_input", m.numel(t), DType::fp32, half);
            // It reads the network's fp32 input: the search knows it by that edge.
            cast.reads = {{t, m.numel(t) * 4, DType::fp32, e.activation_layout()}};
            out.push_back(std::move(cast));
          }
      }
      for (auto& c : parameter_casts) out.push_back(std::move(c));
      types.write(k, half);
      out.push_back(std::move(k));
      continue;
    }
    const bool input_transform = i + 1 < graph.kernels.size() && transforms_fp32_input(k, graph.kernels[i + 1]);
    if (flow && !input_transform &&
        (k.ops.is(RuntimeStep::layout_transform) || k.ops.is(RuntimeStep::pad) || copies_for_compute(m, k))) {
      cast_fp32_reads(k);
      types.write(k, half);
      out.push_back(std::move(k));
      continue;
    }
    if (runs_in_fp32(k) || input_transform) {
      // Cast in, run and write in fp32. The op's later kernels (GroupNorm's
      // scale and apply, and the copy before it) run in fp32 too. Eager
      // leaves the result fp32 for whoever reads it next; inductor casts it
      // back at once.
      const Kernel owner = input_transform ? graph.kernels[i + 1] : k;
      const auto& p = std::get<MemoryProblem>(owner.layer->problem);
      size_t last = input_transform ? i + 1 : i;
      while (last + 1 < graph.kernels.size() && same_op(owner, graph.kernels[last + 1])) ++last;
      // The op reads the fp32 copy the cast just wrote (docs/model.md
      // "Inside a network": its L2 hits are that copy's).
      // `k` reads the op's input: the op's first kernel, or the transform before it.
      // Autocast gives a softmax an fp32 output type, not an fp32 input:
      // eager's one kernel reads the half tensor and writes fp32
      // (calibrate/data/h100/strided_inputs), with no cast kernel.
      const bool input_fp32 =
          flow && ((!k.reads.empty() && types.of(k.reads[0]) == DType::fp32) || owner.ops.is("Softmax"));
      TensorRef x, x32;
      if (!input_fp32) {
        Kernel cast = cast_kernel(owner, "/cast_fp32", p.elems_read(), half, DType::fp32);
        if (!k.reads.empty() && k.reads[0].dtype != DType::fp32) {
          x = k.reads[0];
          x32 = {x.name + "#fp32", x.bytes / dtype_bytes(x.dtype) * dtype_bytes(DType::fp32), DType::fp32, x.layout};
          cast.reads = {x};
          cast.writes = {x32};
        }
        out.push_back(std::move(cast));
      }
      int64_t written = 0;
      for (size_t j = i; j <= last; ++j) {
        Kernel& part = graph.kernels[j];
        if (flow && j > i) types.refresh_reads(part);
        for (auto& r : part.reads)
          if (!x.name.empty() && r.name == x.name) r = x32;
        part.layer->dtype = DType::fp32;
        types.write(part, DType::fp32);
        written = std::get<MemoryProblem>(part.layer->problem).elems_written();
        out.push_back(std::move(part));
      }
      if (!flow) out.push_back(cast_kernel(owner, "/cast_back", written, DType::fp32, half));
      i = last;
      continue;
    }
    if (flow && k.layer && std::holds_alternative<MemoryProblem>(k.layer->problem)) {
      // Type promotion: an op over an fp32 tensor, or an elementwise op with
      // an fp32 parameter, runs and writes in fp32 (a BatchNorm's own fp32
      // parameters do not: cuDNN keeps the activations' type).
      const MemoryOp op = std::get<MemoryProblem>(k.layer->problem).op;
      // A Linear's bias added apart from its GEMM: autocast cast the bias
      // with the weight, so the add stays in the half type and that cast is
      // a kernel of its own.
      const bool linear_bias = unfused_linear_bias(m, k);
      if (linear_bias) {
        const Node& add = m.nodes[size_t(k.nodes[0])];
        for (const auto& t : add.inputs)
          if (m.static_tensors.count(t) && m.numel(t) > 0)
            out.push_back(cast_kernel(k, "/cast_bias", m.numel(t), DType::fp32, half));
      }
      bool fp32 = types.reads_fp32(k) || (op == MemoryOp::eltwise && !k.ops.is_runtime_step() && !linear_bias &&
                                          types.reads_fp32_parameter(k));
      // The model's own casts (x.float(), x.to(dtype)) decide for themselves,
      // except a cast to the type its input already has in the fp32 export:
      // there x.float() and x.to(x_dtype) (EvoNorm's group std, which casts
      // back to the activations' type) are the same node, so it keeps its
      // input's run-time type rather than turning the rest of the network fp32.
      if (k.ops.is("Cast") && !k.nodes.empty() && k.nodes[0] >= 0) {
        const Node& cast = m.nodes[size_t(k.nodes[0])];
        const int64_t to = attr_int(cast, "to", 0);
        const TensorInfo* from = cast.inputs.empty() ? nullptr : m.tensor(cast.inputs[0]);
        const bool no_op_in_export = from && from->elem_type == to;
        if (to == kOnnxFloat && !no_op_in_export) fp32 = true;
        if (to == kOnnxFloat16 || to == kOnnxBfloat16) fp32 = false;
      }
      if (fp32) k.layer->dtype = DType::fp32;
      // Operands of two types (a half tensor promoted beside an fp32 one, a
      // ViT's residual add under autocast): PyTorch casts each element as it
      // loads it, in its unrolled kernel without vector loads, unless an
      // operand is broadcast, which the strided path already is
      // (docs/model.md "Memory-bound kernels").
      if (op == MemoryOp::eltwise && !k.ops.is_runtime_step() && !k.ops.is("Cast") &&
          std::any_of(k.reads.begin(), k.reads.end(), [&](const TensorRef& r) { return types.of(r) != k.layer->dtype; })) {
        auto& p = std::get<MemoryProblem>(k.layer->problem);
        p.unrolled = !p.strided;
      }
      types.write(k, k.layer->dtype);
    }
    out.push_back(std::move(k));
  }
  graph.kernels = std::move(out);
}

}  // namespace tilewave
