#include "tilewave/ir/kernel_graph.h"

#include <algorithm>
#include <queue>
#include <stdexcept>

namespace tilewave {

const char* host_call_name(HostCall c) {
  switch (c) {
    case HostCall::inner: return "inner";
    case HostCall::op: return "op";
    case HostCall::conv: return "conv";
    case HostCall::gemm: return "gemm";
    case HostCall::norm: return "norm";
    case HostCall::cast: return "cast";
  }
  return "?";
}

HostCall host_call_of(const Kernel& k) {
  if (k.host_call != HostCall::op || !k.layer) return k.host_call;
  const Problem& p = k.layer->problem;
  if (std::holds_alternative<ConvProblem>(p)) return HostCall::conv;
  if (std::holds_alternative<GemmProblem>(p) || std::holds_alternative<AttentionProblem>(p)) return HostCall::gemm;
  if (std::get<MemoryProblem>(p).op == MemoryOp::norm) return HostCall::norm;
  return HostCall::op;
}

const char* runtime_step_name(RuntimeStep s) {
  switch (s) {
    case RuntimeStep::bias: return "bias";
    case RuntimeStep::pad: return "pad";
    case RuntimeStep::bn_prep: return "bn_prep";
    case RuntimeStep::layout_transform: return "layout_transform";
    case RuntimeStep::cast: return "cast";
    case RuntimeStep::attention: return "Attention(MatMul+Softmax+MatMul)";
    case RuntimeStep::norm_params: return "norm_params";
    case RuntimeStep::norm_apply: return "norm_apply";
  }
  return "?";
}

const char* runtime_step_meaning(RuntimeStep s) {
  switch (s) {
    case RuntimeStep::bias: return "a convolution's bias or folded BatchNorm, added by eager PyTorch in kernels of its own";
    case RuntimeStep::pad: return "an RGB stem's input or filter padded to 4 channels for cuDNN";
    case RuntimeStep::bn_prep: return "PyTorch's BatchNorm statistics kernels (a copy, the inverse std) over the channels";
    case RuntimeStep::layout_transform: return "a copy between NCHW and NHWC around a kernel that needs the other";
    case RuntimeStep::cast: return "an autocast cast of a weight or activation to the compute type, every forward";
    case RuntimeStep::attention: return "MatMul-Softmax-MatMul run as one flash-attention kernel";
    case RuntimeStep::norm_params: return "PyTorch's GroupNorm: each channel's scale and shift from its group's moments";
    case RuntimeStep::norm_apply: return "PyTorch's GroupNorm: the scale and shift applied to every element";
  }
  return "?";
}

namespace {
std::string spelling(const KernelOps::Part& p) {
  if (const auto* op = std::get_if<std::string>(&p)) return *op;
  return runtime_step_name(std::get<RuntimeStep>(p));
}
}  // namespace

bool KernelOps::is(RuntimeStep step) const {
  return parts_.size() == 1 && std::holds_alternative<RuntimeStep>(parts_[0]) &&
         std::get<RuntimeStep>(parts_[0]) == step;
}

bool KernelOps::is_runtime_step() const {
  return parts_.size() == 1 && std::holds_alternative<RuntimeStep>(parts_[0]);
}

bool KernelOps::is(const std::string& op_type) const {
  return parts_.size() == 1 && std::holds_alternative<std::string>(parts_[0]) &&
         std::get<std::string>(parts_[0]) == op_type;
}

bool KernelOps::contains(const std::string& op_type) const {
  for (const Part& p : parts_)
    if (const auto* op = std::get_if<std::string>(&p); op && *op == op_type) return true;
  return false;
}

std::string KernelOps::head() const { return parts_.empty() ? std::string() : spelling(parts_[0]); }

std::string KernelOps::text() const {
  std::string out;
  for (size_t i = 0; i < parts_.size(); ++i) out += (i ? "+" : "") + spelling(parts_[i]);
  return out;
}

Kernel derived_kernel(const Kernel& owner, const std::string& suffix, RuntimeStep step, Layer layer,
                      HostCall call) {
  Kernel k;
  k.name = owner.name + suffix;
  k.ops = step;
  k.nodes = {owner.nodes.empty() ? -1 : owner.nodes[0]};
  k.layer = std::move(layer);
  k.host_call = call;
  return k;
}

KernelIndex::KernelIndex(const KernelGraph& graph) {
  const size_t n = graph.kernels.size();
  producers_.resize(n);
  consumers_.resize(n);
  std::unordered_map<std::string, int> first_writer;  // for reads ahead of every write
  for (size_t k = 0; k < n; ++k)
    for (const TensorRef& w : graph.kernels[k].writes) {
      first_writer.emplace(w.name, int(k));
      bytes_.emplace(w.name, w.bytes);
    }
  std::unordered_map<std::string, int> latest;  // tensor -> last kernel so far writing it
  for (size_t k = 0; k < n; ++k) {
    const Kernel& kernel = graph.kernels[k];
    for (const TensorRef& r : kernel.reads) {
      bytes_.emplace(r.name, r.bytes);
      int p = -1;
      if (auto it = latest.find(r.name); it != latest.end()) p = it->second;
      else if (auto f = first_writer.find(r.name); f != first_writer.end() && f->second != int(k)) p = f->second;
      producers_[k].push_back(p);
      if (p >= 0) consumers_[size_t(p)].push_back(int(k));
    }
    for (const TensorRef& w : kernel.writes) latest[w.name] = int(k);
  }
  for (auto& c : consumers_) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
}

int64_t KernelIndex::tensor_bytes(const std::string& tensor) const {
  auto it = bytes_.find(tensor);
  return it == bytes_.end() ? 0 : it->second;
}

std::vector<int> topological_order(const KernelGraph& graph, const KernelIndex& index) {
  const size_t n = graph.kernels.size();
  std::vector<int> pending(n, 0);
  for (size_t k = 0; k < n; ++k)
    for (int c : index.consumers(k)) ++pending[size_t(c)];
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;  // lowest launch position first
  for (size_t k = 0; k < n; ++k)
    if (pending[k] == 0) ready.push(int(k));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int c : index.consumers(size_t(k)))
      if (--pending[size_t(c)] == 0) ready.push(c);
  }
  if (order.size() != n) throw std::logic_error("the kernel graph has a cycle");
  return order;
}

std::optional<std::string> launch_order_error(const KernelGraph& graph, const KernelIndex& index) {
  for (size_t k = 0; k < graph.kernels.size(); ++k)
    for (size_t s = 0; s < graph.kernels[k].reads.size(); ++s) {
      const int p = index.producer(k, s);
      if (p > int(k))
        return "kernel " + std::to_string(k) + " (" + graph.kernels[k].name + ", " + graph.kernels[k].ops.text() +
               ") reads " + graph.kernels[k].reads[s].name + " before kernel " + std::to_string(p) + " (" +
               graph.kernels[size_t(p)].name + ", " + graph.kernels[size_t(p)].ops.text() + ") writes it";
    }
  return std::nullopt;
}

}  // namespace tilewave
