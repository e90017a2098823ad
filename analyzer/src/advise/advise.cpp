// docs/report.md "`tilewave advise`". Each suggestion is a changed model
// (another runtime, dtype or batch, or a graph with padded channels)
// analysed by the same path as the original; its gain is the difference.
#include "tilewave/advise.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/text.h"
#include "tilewave_onnx.pb.h"

namespace tilewave {

namespace {

double gain_of(const Totals& before, const Totals& after) {
  return before.throughput_per_s > 0 ? after.throughput_per_s / before.throughput_per_s - 1 : 0;
}

// --- Channel padding on the graph -----------------------------------------

onnx::TensorProto* initializer(onnx::GraphProto& g, const std::string& name) {
  for (auto& t : *g.mutable_initializer())
    if (t.name() == name) return &t;
  return nullptr;
}
const onnx::TensorProto* initializer(const onnx::GraphProto& g, const std::string& name) {
  return initializer(const_cast<onnx::GraphProto&>(g), name);
}

// Who writes and who reads each tensor, built once per graph: the rewrites
// below change initializers' shapes and drop nodes, never the wiring they look at.
struct GraphIndex {
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<std::pair<int, int>>> consumers;  // tensor -> (node, input slot)
  std::set<std::string> outputs;                                      // graph outputs
  explicit GraphIndex(const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& o : g.node(i).output()) producer[o] = i;
      for (int s = 0; s < g.node(i).input_size(); ++s) consumers[g.node(i).input(s)].push_back({i, s});
    }
    for (const auto& o : g.output()) outputs.insert(o.name());
  }
  // Readers, a graph output counting as one.
  size_t uses(const std::string& tensor) const {
    const auto it = consumers.find(tensor);
    return (it == consumers.end() ? 0 : it->second.size()) + outputs.count(tensor);
  }
  const std::vector<std::pair<int, int>>& readers(const std::string& tensor) const {
    static const std::vector<std::pair<int, int>> none;
    const auto it = consumers.find(tensor);
    return it == consumers.end() ? none : it->second;
  }
};

int64_t group_of(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "group") return a.i();
  return 1;
}

// The data goes (this copy is only analysed): the tensor keeps its shape, as
// the bundled weight-stripped models do.
void shape_only(onnx::TensorProto* t) {
  t->clear_raw_data();
  t->clear_float_data();
  t->clear_int32_data();
  t->clear_int64_data();
  t->clear_double_data();
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("padded.bin");
}

// Ops a channel dimension passes through unchanged, reading it on input 0.
const std::set<std::string> kPassThrough = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh", "HardSwish",
                                            "HardSigmoid", "Elu", "Gelu", "BatchNormalization"};

// Pads the output channels of Conv node `index` to `to`, with every tensor
// they reach: through pass-through ops (BatchNorm's parameters padded too)
// to convolutions that read them (their input channels padded). False, and
// nothing changed, if the channels reach anything else.
bool pad_conv_outputs(onnx::GraphProto& g, const GraphIndex& index_of, int index, int64_t to) {
  std::vector<std::pair<std::string, int>> edits;  // initializer, dim to set to `to`
  const auto& conv = g.node(index);
  if (conv.input_size() < 2) return false;
  edits.push_back({conv.input(1), 0});
  if (conv.input_size() > 2 && !conv.input(2).empty()) edits.push_back({conv.input(2), 0});
  std::vector<std::string> frontier = {conv.output(0)};
  while (!frontier.empty()) {
    const std::string tensor = frontier.back();
    frontier.pop_back();
    if (index_of.outputs.count(tensor) || index_of.readers(tensor).empty()) return false;
    for (const auto& [node, slot] : index_of.readers(tensor)) {
      const auto& n = g.node(node);
      if (slot != 0) return false;
      if (n.op_type() == "Conv" && group_of(n) == 1 && n.input_size() > 1) {
        edits.push_back({n.input(1), 1});
      } else if (kPassThrough.count(n.op_type()) && n.output_size() > 0) {
        if (n.op_type() == "BatchNormalization")
          for (int s = 1; s < n.input_size(); ++s) edits.push_back({n.input(s), 0});
        frontier.push_back(n.output(0));
      } else {
        return false;
      }
    }
  }
  for (const auto& [name, dim] : edits) {
    const onnx::TensorProto* t = initializer(g, name);
    if (!t || t->dims_size() <= dim || index_of.uses(name) != 1) return false;
  }
  for (const auto& [name, dim] : edits) {
    onnx::TensorProto* t = initializer(g, name);
    t->set_dims(dim, to);
    shape_only(t);
  }
  return true;
}

std::optional<Advice> pad_channels(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options,
                                   const Analysis& base) {
  const auto proto = read_onnx_file(path);
  auto& g = *proto->mutable_graph();
  const int align = gpu.precision(options.dtype).align;
  // Every convolution whose output channels miss the alignment, where the
  // padding stays local (pad_conv_outputs); the whole change is kept only if
  // the model predicts it faster.
  const GraphIndex index(g);
  std::vector<std::string> padded;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() != "Conv" || group_of(n) != 1 || n.input_size() < 2) continue;
    const onnx::TensorProto* w = initializer(g, n.input(1));
    if (!w || w->dims_size() != 4 || w->dims(0) % align == 0) continue;
    const int64_t k = w->dims(0), to = (k + align - 1) / align * align;
    const std::string name = n.name().empty() ? n.output(0) : n.name();
    if (!pad_conv_outputs(g, index, i, to)) continue;  // it changes nothing when it fails
    padded.push_back(fmt::format("{} {}->{}", compact_name(name), k, to));
  }
  if (padded.empty()) return std::nullopt;
  const Analysis after = analyze_model(load_onnx_proto(proto, path, options.load), gpu, options);
  Advice a;
  a.kind = "channels";
  a.change = fmt::format("pad the output channels of {} convolution{} to multiples of {}", padded.size(),
                         padded.size() == 1 ? "" : "s", align);
  std::string list;
  for (size_t i = 0; i < padded.size() && i < 6; ++i) list += (i ? ", " : "") + padded[i];
  if (padded.size() > 6) list += fmt::format(", and {} more", padded.size() - 6);
  a.detail = fmt::format("{} (the {}-element alignment tensor-core kernels need for {}); FLOPs grow {:.1f}%", list,
                         align, dtype_name(options.dtype),
                         base.total.flops > 0 ? 100.0 * (double(after.total.flops) / double(base.total.flops) - 1) : 0.0);
  a.before = base.total;
  a.after = after.total;
  a.gain = gain_of(base.total, after.total);
  return a;
}

// --- Depthwise blocks fused into one dense convolution -------------------

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// 1x1 expansion conv -> activation -> depthwise kxk conv -> activation
// becomes one dense kxk conv (the expansion's, with the depthwise conv's
// window and stride) -> activation: EfficientNetV2's Fused-MBConv. Where
// the depthwise convolution is mostly fixed cost, the dense one does more
// FLOPs in fewer, fuller kernels. Single-node activations only.
struct DepthwiseBlock {
  int expand = -1, depthwise = -1, act_after = -1;
  std::string act_before_output, name;
};

std::vector<DepthwiseBlock> depthwise_blocks(const onnx::GraphProto& g) {
  const GraphIndex index(g);
  const auto& producer = index.producer;
  auto uses = [&](const std::string& tensor) { return index.uses(tensor); };
  auto init = [&](const std::string& name) { return initializer(g, name); };
  const std::set<std::string> activations = {"Relu", "Clip", "HardSwish", "LeakyRelu", "Sigmoid", "Tanh", "Gelu"};
  std::vector<DepthwiseBlock> blocks;
  for (int d = 0; d < g.node_size(); ++d) {
    const auto& dw = g.node(d);
    if (dw.op_type() != "Conv" || dw.input_size() < 2) continue;
    const onnx::TensorProto* w = init(dw.input(1));
    if (!w || w->dims_size() != 4 || w->dims(1) != 1 || group_of(dw) != w->dims(0) || w->dims(0) < 2) continue;
    // Its input: one activation, fed by a 1x1 ungrouped conv, each used once.
    const auto a1 = producer.find(dw.input(0));
    if (a1 == producer.end() || !activations.count(g.node(a1->second).op_type()) || uses(dw.input(0)) != 1) continue;
    const auto& act1 = g.node(a1->second);
    const auto x = producer.find(act1.input(0));
    if (x == producer.end() || uses(act1.input(0)) != 1) continue;
    const auto& expand = g.node(x->second);
    const onnx::TensorProto* we = expand.input_size() > 1 ? init(expand.input(1)) : nullptr;
    if (expand.op_type() != "Conv" || group_of(expand) != 1 || !we || we->dims_size() != 4 || we->dims(2) != 1 ||
        we->dims(3) != 1 || we->dims(0) != w->dims(0) || uses(expand.input(1)) != 1)
      continue;
    // And its output: one activation of the same kind.
    if (uses(dw.output(0)) != 1 || index.readers(dw.output(0)).size() != 1) continue;
    const auto [a2, slot] = index.readers(dw.output(0)).front();
    if (slot != 0 || g.node(a2).op_type() != act1.op_type()) continue;
    blocks.push_back({x->second, d, a2, act1.output(0), compact_name(dw.name().empty() ? dw.output(0) : dw.name())});
  }
  return blocks;
}

// The graph with these blocks fused: each expansion takes its depthwise
// conv's window and stride; the depthwise conv and the activation after it
// go, their readers reading the first activation's output.
onnx::GraphProto fuse_blocks(const onnx::GraphProto& g, const std::vector<const DepthwiseBlock*>& blocks) {
  onnx::GraphProto out = g;
  std::set<int> removed;
  std::map<int, const DepthwiseBlock*> by_expand;
  std::map<std::string, std::string> renamed;  // tensor -> the tensor that replaces it
  for (const DepthwiseBlock* b : blocks) {
    const onnx::TensorProto* w = initializer(out, g.node(b->depthwise).input(1));
    onnx::TensorProto* wt = initializer(out, g.node(b->expand).input(1));
    const int64_t r = w->dims(2), k = w->dims(3);
    wt->set_dims(2, r);
    wt->set_dims(3, k);
    shape_only(wt);
    removed.insert(b->depthwise);
    removed.insert(b->act_after);
    by_expand[b->expand] = b;
    renamed[g.node(b->act_after).output(0)] = b->act_before_output;
  }
  out.clear_node();
  for (int i = 0; i < g.node_size(); ++i) {
    if (removed.count(i)) continue;
    onnx::NodeProto n = g.node(i);
    if (const auto it = by_expand.find(i); it != by_expand.end()) {
      n.clear_attribute();
      for (const char* name : {"kernel_shape", "strides", "pads", "dilations"})
        if (const auto* a = attribute(g.node(it->second->depthwise), name)) *n.add_attribute() = *a;
    }
    for (auto& in : *n.mutable_input())
      if (renamed.count(in)) in = renamed[in];
    *out.add_node() = std::move(n);
  }
  for (auto& o : *out.mutable_output())
    if (renamed.count(o.name())) o.set_name(renamed[o.name()]);
  return out;
}

std::optional<Advice> fuse_depthwise(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options,
                                     const Analysis& base) {
  const onnx::ModelProto original = *read_onnx_file(path);
  const std::vector<DepthwiseBlock> blocks = depthwise_blocks(original.graph());
  auto analysed = [&](const std::vector<const DepthwiseBlock*>& set) {
    auto proto = std::make_shared<onnx::ModelProto>(original);
    *proto->mutable_graph() = fuse_blocks(original.graph(), set);
    return analyze_model(load_onnx_proto(proto, path, options.load), gpu, options);
  };
  // Each block alone first: only those predicted faster on their own are fused.
  std::vector<const DepthwiseBlock*> faster;
  for (const auto& b : blocks)
    if (analysed({&b}).total.time_us < base.total.time_us) faster.push_back(&b);
  if (faster.empty()) return std::nullopt;
  const Analysis after = analysed(faster);
  Advice a;
  a.kind = "depthwise";
  a.change = fmt::format("replace {} of {} expansion + depthwise blocks by one dense convolution each (Fused-MBConv)",
                         faster.size(), blocks.size());
  std::string list;
  for (size_t i = 0; i < faster.size() && i < 4; ++i) list += (i ? ", " : "") + faster[i]->name;
  if (faster.size() > 4) list += fmt::format(", and {} more", faster.size() - 4);
  a.detail = fmt::format("{}: {} kernels instead of {}, FLOPs {:+.0f}%; changes the architecture: retrain", list,
                         after.total.kernels, base.total.kernels,
                         base.total.flops > 0 ? 100.0 * (double(after.total.flops) / double(base.total.flops) - 1) : 0.0);
  a.before = base.total;
  a.after = after.total;
  a.gain = gain_of(base.total, after.total);
  return a;
}

}  // namespace

std::vector<Advice> advise(const std::string& path, const GpuModel& gpu, const AnalyzeOptions& options,
                           const Analysis& base, double min_gain) {
  std::vector<Advice> out;
  auto keep = [&](Advice a) {
    a.gain = gain_of(a.before, a.after);
    if (a.gain > min_gain) out.push_back(std::move(a));
  };
  auto analyse = [&](const AnalyzeOptions& o) { return analyze_file(path, gpu, o); };

  // Another runtime: what it fuses that this one does not.
  for (const RuntimeProfile* r : builtin_runtimes()) {
    if (r == options.runtime || std::string(r->name()) == "eager-folded") continue;
    AnalyzeOptions o = options;
    o.runtime = r;
    const Analysis a = analyse(o);
    if (a.partial) continue;
    keep({"runtime", fmt::format("run it with {} instead of {}", r->name(), options.runtime->name()),
          fmt::format("{} kernels instead of {}: {}", a.total.kernels, base.total.kernels, r->summary()), base.total,
          a.total});
  }
  // Another dtype: fp32/tf32 to half precision; int8 where the runtime builds int8 engines.
  std::vector<DType> dtypes;
  if (options.dtype == DType::fp32 || options.dtype == DType::tf32) dtypes = {DType::fp16, DType::bf16};
  if (std::string(options.runtime->name()) == "tensorrt" && options.dtype != DType::int8) dtypes.push_back(DType::int8);
  for (DType d : dtypes) {
    if (!gpu.precisions.count(d)) continue;
    AnalyzeOptions o = options;
    o.dtype = d;
    const Analysis a = analyse(o);
    if (a.partial) continue;
    keep({"dtype", fmt::format("run it in {} instead of {}", dtype_name(d), dtype_name(options.dtype)),
          d == DType::int8 ? "needs calibrated quantization; check accuracy" : "check accuracy", base.total, a.total});
  }
  // A batch that fills the last wave better: the best throughput a little
  // above this batch (up to a quarter more, at least 8 more), where partial
  // tiles and waves fill without changing the latency much.
  if (base.batch >= 1) {
    std::vector<int64_t> batches;
    for (int64_t b = base.batch + 1; b <= base.batch + std::max<int64_t>(8, base.batch / 4); ++b) batches.push_back(b);
    const Analysis* best = nullptr;
    std::vector<Analysis> tried;
    tried.reserve(batches.size());
    for (int64_t b : batches) {
      AnalyzeOptions o = options;
      o.load.batch = b;
      tried.push_back(analyse(o));
      if (!tried.back().partial && (!best || tried.back().total.throughput_per_s > best->total.throughput_per_s))
        best = &tried.back();
    }
    if (best)
      keep({"batch", fmt::format("use batch {} instead of {}", best->batch, base.batch),
            fmt::format("latency {:.1f} -> {:.1f} us for {} samples instead of {}: fuller tiles and waves, fixed "
                        "costs spread over more samples", base.total.time_us, best->total.time_us, best->batch, base.batch),
            base.total, best->total});
  }
  if (auto a = pad_channels(path, gpu, options, base)) keep(std::move(*a));
  if (auto a = fuse_depthwise(path, gpu, options, base)) keep(std::move(*a));
  std::stable_sort(out.begin(), out.end(), [](const Advice& x, const Advice& y) { return x.gain > y.gain; });
  return out;
}

}  // namespace tilewave
