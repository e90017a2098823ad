// docs/report.md "`tilewave advise`". Each suggestion is a changed model
// (another runtime, dtype or batch, or a graph with padded channels)
// analysed by the same path as the original; its gain is the difference.
#include "tilewave/advise.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/model.h"
#include "tilewave/text.h"
#include "tilewave_onnx.pb.h"
#include "tilewave/tensor_values.h"
#include "tilewave/pipeline.h"

namespace tilewave {

namespace {

double gain_of(const Totals& before, const Totals& after) {
  return before.throughput_per_s > 0 ? after.throughput_per_s / before.throughput_per_s - 1 : 0;
}

// --- Channel padding on the graph -----------------------------------------

// Who writes and who reads each tensor, and where each initializer is, built
// once per graph: the rewrites below change initializers' shapes and drop
// nodes, never the wiring they look at or the initializers' order, so the
// index also serves copies of the graph.
struct GraphIndex {
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<std::pair<int, int>>> consumers;  // tensor -> (node, input slot)
  std::set<std::string> outputs;                                      // graph outputs
  std::map<std::string, int> initializer_at;                          // name -> position (the first of a name)
  const OpRegistry& registry;  // what each op is (op_trait): the rewrites keep no op lists of their own
  GraphIndex(const onnx::GraphProto& g, const OpRegistry& ops) : registry(ops) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& o : g.node(i).output()) producer[o] = i;
      for (int s = 0; s < g.node(i).input_size(); ++s) consumers[g.node(i).input(s)].push_back({i, s});
    }
    for (const auto& o : g.output()) outputs.insert(o.name());
    for (int i = 0; i < g.initializer_size(); ++i) initializer_at.emplace(g.initializer(i).name(), i);
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
  // The initializer of this name in `g` (the indexed graph or a copy), or null.
  onnx::TensorProto* initializer(onnx::GraphProto& g, const std::string& name) const {
    const auto it = initializer_at.find(name);
    return it == initializer_at.end() ? nullptr : g.mutable_initializer(it->second);
  }
  const onnx::TensorProto* initializer(const onnx::GraphProto& g, const std::string& name) const {
    const auto it = initializer_at.find(name);
    return it == initializer_at.end() ? nullptr : &g.initializer(it->second);
  }
};

// Elements of an initializer; dims from the file, so the product saturates.
int64_t elements(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n = saturating_mul(n, d);
  return n;
}

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

// Whether node n is registered with `trait` (op_registry.h: carries_channels,
// channel_binary, activation).
bool is(const GraphIndex& index, const onnx::NodeProto& n, unsigned trait) {
  return index.registry.has_trait(n.domain(), n.op_type(), trait);
}

// A constant with at most one element (it broadcasts over any channel count).
bool scalar_constant(const onnx::GraphProto& g, const GraphIndex& index, const std::string& tensor) {
  if (const onnx::TensorProto* t = index.initializer(g, tensor)) return elements(*t) <= 1;
  const auto p = index.producer.find(tensor);
  if (p == index.producer.end() || g.node(p->second).op_type() != "Constant") return false;
  for (const auto& a : g.node(p->second).attribute())
    if (a.name() == "value") return elements(a.t()) <= 1;
    else if (a.name() == "value_float" || a.name() == "value_int") return true;
  return false;
}

// Every tensor that must grow by `delta` channels together with the output
// of Conv `conv` (docs/report.md "`tilewave advise`"): through activations,
// norms and pools, across additions and products (whose other operand then
// grows too, back to the convolutions that write it: residual streams, SE
// gates), through depthwise convolutions (their groups grow) and into
// channel concatenations (whose output grows). Each ungrouped convolution it
// reaches reads (or writes) `delta` more channels. The edits, or nothing if
// the channels reach an op, a graph input or output, or a shared weight that
// this cannot change.
struct ChannelGrowth {
  std::vector<std::pair<std::string, int>> dims;  // initializer, dim that grows
  std::vector<int> groups;                        // depthwise convs whose group grows
  std::vector<int> padded_convs;                  // convs that write more channels
};

std::optional<ChannelGrowth> channel_growth(const onnx::GraphProto& g, const GraphIndex& index, int conv) {
  ChannelGrowth out;
  std::set<std::string> joined, producer_done;
  std::set<std::pair<int, int>> visited;  // (node, slot) ; slot -1: the node's output
  std::vector<std::string> todo;
  auto join = [&](const std::string& t, bool from_producer) {
    if (from_producer) producer_done.insert(t);
    if (joined.insert(t).second) todo.push_back(t);
  };
  auto grow_output = [&](int i) {
    const auto& n = g.node(i);
    out.dims.push_back({n.input(1), 0});
    if (n.input_size() > 2 && !n.input(2).empty()) out.dims.push_back({n.input(2), 0});
    out.padded_convs.push_back(i);
  };
  // One node met through one of its tensors; false where the growth cannot pass.
  auto visit = [&](int i, int slot) -> bool {
    const auto& n = g.node(i);
    const std::string& op = n.op_type();
    if (op == "Conv") {
      const onnx::TensorProto* w = n.input_size() > 1 ? index.initializer(g, n.input(1)) : nullptr;
      if (!w || w->dims_size() != 4 || slot > 0) return false;
      const int64_t group = group_of(n);
      if (group == 1) {
        if (!visited.insert({i, slot}).second) return true;
        if (slot < 0) grow_output(i);
        else out.dims.push_back({n.input(1), 1});
        return true;
      }
      if (w->dims(1) != 1 || group != w->dims(0)) return false;  // grouped, not depthwise
      if (!visited.insert({i, 0}).second) return true;
      out.dims.push_back({n.input(1), 0});
      if (n.input_size() > 2 && !n.input(2).empty()) out.dims.push_back({n.input(2), 0});
      out.groups.push_back(i);
      join(n.input(0), false);
      join(n.output(0), true);
      return true;
    }
    if (n.output_size() < 1) return false;
    for (int o = 1; o < n.output_size(); ++o)
      if (index.uses(n.output(o))) return false;  // BatchNorm's training outputs, MaxPool's indices
    if (is(index, n, op_trait::carries_channels)) {
      if (slot > 0) return false;  // the channels feed a parameter
      if (!visited.insert({i, 0}).second) return true;
      if (op == "BatchNormalization")
        for (int s = 1; s < n.input_size(); ++s) out.dims.push_back({n.input(s), 0});
      join(n.input(0), false);
      join(n.output(0), true);
      return true;
    }
    if (is(index, n, op_trait::channel_binary)) {
      if (!visited.insert({i, 0}).second) return true;
      for (const auto& in : n.input()) {
        if (scalar_constant(g, index, in)) continue;
        join(in, false);
      }
      join(n.output(0), true);
      return true;
    }
    if (op == "Concat") {
      const onnx::AttributeProto* axis = nullptr;
      for (const auto& a : n.attribute())
        if (a.name() == "axis") axis = &a;
      // Which input should grow is not known from the output; and one input
      // growing twice would grow the output by 2 * delta.
      if (!axis || axis->i() != 1 || slot < 0 || !visited.insert({i, 0}).second) return false;
      join(n.output(0), true);
      return true;
    }
    return false;
  };
  grow_output(conv);
  visited.insert({conv, -1});
  join(g.node(conv).output(0), true);
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    if (index.outputs.count(t)) return std::nullopt;  // the model's interface would change
    if (!producer_done.count(t)) {
      const auto p = index.producer.find(t);
      if (p == index.producer.end() || !visit(p->second, -1)) return std::nullopt;
    }
    for (const auto& [node, slot] : index.readers(t))
      if (!visit(node, slot)) return std::nullopt;
  }
  for (const auto& [name, dim] : out.dims) {
    const onnx::TensorProto* t = index.initializer(g, name);
    if (!t || t->dims_size() <= dim || index.uses(name) != 1) return std::nullopt;
  }
  return out;
}

// Applies (sign +1) or undoes (-1) a growth on the analysed copy.
void apply_growth(onnx::GraphProto& g, const GraphIndex& index, const ChannelGrowth& growth, int64_t delta) {
  for (const auto& [name, dim] : growth.dims) {
    onnx::TensorProto* t = index.initializer(g, name);
    t->set_dims(dim, t->dims(dim) + delta);
    shape_only(t);
  }
  for (int i : growth.groups)
    for (auto& a : *g.mutable_node(i)->mutable_attribute())
      if (a.name() == "group") a.set_i(a.i() + delta);
}

std::optional<Advice> pad_channels(const ModelFile& model, const GpuModel& gpu, const AnalyzeOptions& options,
                                   const Analysis& base) {
  const auto proto = std::make_shared<onnx::ModelProto>(*model.proto);
  auto& g = *proto->mutable_graph();
  const int align = gpu.precision(options.exec.dtype).align;
  auto analysed = [&] { return analyze_model(load_onnx_proto(proto, model.path, options.load), gpu, options); };
  // Each convolution whose output channels miss the alignment, with all the
  // tensors that must grow with it (channel_growth). A growth can pay only
  // together with another (the convolution after both reads aligned
  // channels), so two sets are tried: all growths at once, and each kept
  // only if the network is predicted faster with it than without; the
  // faster set is advised.
  struct Candidate {
    ChannelGrowth growth;
    int64_t delta = 0;
    std::vector<std::string> labels;  // "conv k->to" for each conv it pads
  };
  const GraphIndex index(g, options.load.registry ? *options.load.registry : OpRegistry::builtin());
  std::vector<Candidate> all;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() != "Conv" || group_of(n) != 1 || n.input_size() < 2) continue;
    const onnx::TensorProto* w = index.initializer(g, n.input(1));
    if (!w || w->dims_size() != 4 || w->dims(0) % align == 0) continue;
    auto growth = channel_growth(g, index, i);
    if (!growth) continue;
    Candidate c{std::move(*growth), (w->dims(0) + align - 1) / align * align - w->dims(0), {}};
    for (int conv : c.growth.padded_convs) {
      const auto& pc = g.node(conv);
      const int64_t k = index.initializer(g, pc.input(1))->dims(0);
      c.labels.push_back(fmt::format("{} {}->{}", compact_name(pc.name().empty() ? pc.output(0) : pc.name()), k, k + c.delta));
    }
    apply_growth(g, index, c.growth, c.delta);  // later candidates see these convs aligned
    all.push_back(std::move(c));
  }
  if (all.empty()) return std::nullopt;
  Analysis together = analysed();
  for (auto c = all.rbegin(); c != all.rend(); ++c) apply_growth(g, index, c->growth, -c->delta);
  std::vector<const Candidate*> kept;
  std::optional<Analysis> one_by_one;
  for (const Candidate& c : all) {
    apply_growth(g, index, c.growth, c.delta);
    Analysis after = analysed();
    if (after.partial || after.total.time_us >= (one_by_one ? one_by_one->total : base.total).time_us) {
      apply_growth(g, index, c.growth, -c.delta);
      continue;
    }
    one_by_one = std::move(after);
    kept.push_back(&c);
  }
  const bool all_faster = !together.partial && (!one_by_one || together.total.time_us < one_by_one->total.time_us);
  if (!all_faster) {
    if (!one_by_one) return std::nullopt;
    together = std::move(*one_by_one);
  } else {
    kept.clear();
    for (const Candidate& c : all) kept.push_back(&c);
  }
  std::vector<std::string> padded;
  for (const Candidate* c : kept) padded.insert(padded.end(), c->labels.begin(), c->labels.end());
  Advice a;
  a.kind = "channels";
  a.change = fmt::format("pad the output channels of {} convolution{} to multiples of {}", padded.size(),
                         padded.size() == 1 ? "" : "s", align);
  std::string list;
  for (size_t i = 0; i < padded.size() && i < 6; ++i) list += (i ? ", " : "") + padded[i];
  if (padded.size() > 6) list += fmt::format(", and {} more", padded.size() - 6);
  a.detail = fmt::format("{} (the {}-element alignment tensor-core kernels need for {}; the tensors added to or "
                         "multiplied with them grow too); FLOPs grow {:.1f}%",
                         list, align, dtype_name(options.exec.dtype),
                         base.total.flops > 0 ? 100.0 * (double(together.total.flops) / double(base.total.flops) - 1) : 0.0);
  a.before = base.total;
  a.after = together.total;
  a.gain = gain_of(base.total, together.total);
  return a;
}

// --- Depthwise blocks fused into one dense convolution -------------------

// Floating-point initializers larger than this are weights, which the trials
// analyse by shape alone.
constexpr int64_t kShapeOnlyAbove = 4096;

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// 1x1 expansion conv -> activation -> depthwise kxk conv -> activation
// becomes one dense kxk conv (the expansion's, with the depthwise conv's
// window and stride) -> activation: EfficientNetV2's Fused-MBConv. Where
// the depthwise convolution is mostly fixed cost, the dense one does more
// FLOPs in fewer, fuller kernels. An activation is one node, or SiLU as
// torch.onnx writes it: x * Sigmoid(x).
struct Activation {
  std::string kind, input, output;
  std::vector<int> nodes;
};


// The activation that writes `tensor`, its input read by nothing else.
std::optional<Activation> activation_writing(const onnx::GraphProto& g, const GraphIndex& index,
                                             const std::string& tensor) {
  const auto p = index.producer.find(tensor);
  if (p == index.producer.end()) return std::nullopt;
  const auto& n = g.node(p->second);
  if (n.input_size() < 1) return std::nullopt;
  if (is(index, n, op_trait::activation) && index.uses(n.input(0)) == 1)
    return Activation{n.op_type(), n.input(0), tensor, {p->second}};
  if (n.op_type() != "Mul" || n.input_size() != 2) return std::nullopt;
  for (int s = 0; s < 2; ++s) {
    const auto sig = index.producer.find(n.input(s));
    if (sig == index.producer.end()) continue;
    const auto& sn = g.node(sig->second);
    const std::string& x = n.input(1 - s);
    if (sn.op_type() == "Sigmoid" && sn.input_size() == 1 && sn.input(0) == x && index.uses(x) == 2 &&
        index.uses(n.input(s)) == 1)
      return Activation{"SiLU", x, tensor, {sig->second, p->second}};
  }
  return std::nullopt;
}

// The activation that is the only reader of `tensor`.
std::optional<Activation> activation_reading(const onnx::GraphProto& g, const GraphIndex& index,
                                             const std::string& tensor) {
  const auto& readers = index.readers(tensor);
  if (index.outputs.count(tensor)) return std::nullopt;
  if (readers.size() == 1) {
    const auto& n = g.node(readers[0].first);
    if (readers[0].second == 0 && is(index, n, op_trait::activation) && n.output_size() > 0)
      return Activation{n.op_type(), tensor, n.output(0), {readers[0].first}};
    return std::nullopt;
  }
  if (readers.size() != 2) return std::nullopt;
  for (int s = 0; s < 2; ++s) {
    const auto& sig = g.node(readers[size_t(s)].first);
    if (sig.op_type() != "Sigmoid" || sig.output_size() < 1) continue;
    const int mul_index = readers[size_t(1 - s)].first;
    const auto& mul = g.node(mul_index);
    if (mul.op_type() != "Mul" || mul.input_size() != 2 || index.uses(sig.output(0)) != 1) continue;
    const auto r = index.readers(sig.output(0)).front();
    if (r.first == mul_index) return Activation{"SiLU", tensor, mul.output(0), {readers[size_t(s)].first, mul_index}};
  }
  return std::nullopt;
}

struct DepthwiseBlock {
  int expand = -1, depthwise = -1;
  std::vector<int> act_after;  // its nodes
  std::string act_before_output, act_after_output, name;
};

std::vector<DepthwiseBlock> depthwise_blocks(const onnx::GraphProto& g, const GraphIndex& index) {
  auto init = [&](const std::string& name) { return index.initializer(g, name); };
  std::vector<DepthwiseBlock> blocks;
  for (int d = 0; d < g.node_size(); ++d) {
    const auto& dw = g.node(d);
    if (dw.op_type() != "Conv" || dw.input_size() < 2) continue;
    const onnx::TensorProto* w = init(dw.input(1));
    if (!w || w->dims_size() != 4 || w->dims(1) != 1 || group_of(dw) != w->dims(0) || w->dims(0) < 2) continue;
    // Its input: one activation, fed by a 1x1 ungrouped conv, each used once.
    if (index.uses(dw.input(0)) != 1) continue;
    const auto act1 = activation_writing(g, index, dw.input(0));
    if (!act1) continue;
    const auto x = index.producer.find(act1->input);
    if (x == index.producer.end()) continue;
    const auto& expand = g.node(x->second);
    const onnx::TensorProto* we = expand.input_size() > 1 ? init(expand.input(1)) : nullptr;
    if (expand.op_type() != "Conv" || group_of(expand) != 1 || !we || we->dims_size() != 4 || we->dims(2) != 1 ||
        we->dims(3) != 1 || we->dims(0) != w->dims(0) || index.uses(expand.input(1)) != 1)
      continue;
    // And its output: one activation of the same kind.
    const auto act2 = activation_reading(g, index, dw.output(0));
    if (!act2 || act2->kind != act1->kind) continue;
    blocks.push_back({x->second, d, act2->nodes, act1->output, act2->output,
                      compact_name(dw.name().empty() ? dw.output(0) : dw.name())});
  }
  return blocks;
}

// The graph with these blocks fused: each expansion takes its depthwise
// conv's window and stride; the depthwise conv and the activation after it
// go, their readers reading the first activation's output.
onnx::GraphProto fuse_blocks(const onnx::GraphProto& g, const GraphIndex& index,
                             const std::vector<const DepthwiseBlock*>& blocks) {
  onnx::GraphProto out = g;
  std::set<int> removed;
  std::map<int, const DepthwiseBlock*> by_expand;
  std::map<std::string, std::string> renamed;  // tensor -> the tensor that replaces it
  for (const DepthwiseBlock* b : blocks) {
    const onnx::TensorProto* w = index.initializer(out, g.node(b->depthwise).input(1));
    onnx::TensorProto* wt = index.initializer(out, g.node(b->expand).input(1));
    const int64_t r = w->dims(2), k = w->dims(3);
    wt->set_dims(2, r);
    wt->set_dims(3, k);
    shape_only(wt);
    removed.insert(b->depthwise);
    removed.insert(b->act_after.begin(), b->act_after.end());
    by_expand[b->expand] = b;
    renamed[b->act_after_output] = b->act_before_output;
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

std::optional<Advice> fuse_depthwise(const ModelFile& model, const GpuModel& gpu, const AnalyzeOptions& options,
                                     const Analysis& base) {
  // Each trial copies the model; a copy whose weights are shapes only keeps
  // that cheap for a model that carries its weights. Small tensors keep their
  // values: shape inputs, Clip bounds and other constants the analysis reads.
  onnx::ModelProto shapes = *model.proto;
  for (auto& t : *shapes.mutable_graph()->mutable_initializer())
    if (elem::is_real(t.data_type()) && elements(t) > kShapeOnlyAbove) shape_only(&t);
  const onnx::GraphProto& graph = shapes.graph();
  const GraphIndex index(graph, options.load.registry ? *options.load.registry : OpRegistry::builtin());
  const std::vector<DepthwiseBlock> blocks = depthwise_blocks(graph, index);
  onnx::ModelProto shell = shapes;  // the model's own fields; each trial adds its graph
  shell.clear_graph();
  auto analysed = [&](const std::vector<const DepthwiseBlock*>& set) {
    auto proto = std::make_shared<onnx::ModelProto>(shell);
    *proto->mutable_graph() = fuse_blocks(graph, index, set);
    return analyze_model(load_onnx_proto(proto, model.path, options.load), gpu, options);
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

std::vector<Advice> advise(const ModelFile& model, const GpuModel& gpu, const AnalyzeOptions& options,
                           const Analysis& base, double min_gain) {
  std::vector<Advice> out;
  auto keep = [&](Advice a) {
    a.gain = gain_of(a.before, a.after);
    if (a.gain > min_gain) out.push_back(std::move(a));
  };
  auto analyse = [&](const AnalyzeOptions& o) { return model.analyze(gpu, o); };

  // Another runtime: what it fuses that this one does not.
  for (const RuntimeProfile* r : builtin_runtimes()) {
    if (r == &options.exec.runtime_profile() || r->historical()) continue;
    AnalyzeOptions o = options;
    o.exec.runtime = r;
    const Analysis a = analyse(o);
    if (a.partial) continue;
    keep({"runtime", fmt::format("run it with {} instead of {}", r->name(), options.exec.runtime_profile().name()),
          fmt::format("{} kernels instead of {}: {}", a.total.kernels, base.total.kernels, r->summary()), base.total,
          a.total});
  }
  // A plain loop whose host sets the pace: the same kernels replayed as one
  // CUDA graph (docs/model.md "Schedule").
  if (options.exec.launch == Launch::loop && base.total.host_bound) {
    AnalyzeOptions o = options;
    o.exec.launch = Launch::graph;
    const Analysis a = analyse(o);
    if (!a.partial)
      keep({"launch",
            "capture the forward in a CUDA graph (torch.cuda.CUDAGraph, or torch.compile(mode=\"reduce-overhead\"))",
            fmt::format("the step is host-bound: the host issues for {:.0f} µs against {:.0f} µs of GPU work; a graph "
                        "replay issues it once",
                        base.total.host_busy_us, base.total.gpu_busy_us),
            base.total, a.total});
  }
  // The other activation layout.
  if (options.exec.runtime_profile().follows_layout()) {
    AnalyzeOptions o = options;
    o.exec.layout = options.exec.layout == Layout::nchw ? Layout::nhwc : Layout::nchw;
    const Analysis a = analyse(o);
    if (!a.partial)
      keep({"layout",
            o.exec.layout == Layout::nhwc ? "run it channels_last (model and input .to(memory_format=torch.channels_last))"
                                          : "run it in NCHW (contiguous) instead of channels_last",
            fmt::format("{} kernels instead of {}", a.total.kernels, base.total.kernels), base.total, a.total});
  }
  // Another dtype: fp32/tf32 to half precision; int8 where the runtime builds int8 engines.
  std::vector<DType> dtypes;
  if (options.exec.dtype == DType::fp32 || options.exec.dtype == DType::tf32) dtypes = {DType::fp16, DType::bf16};
  if (options.exec.runtime_profile().builds_int8() && options.exec.dtype != DType::int8) dtypes.push_back(DType::int8);
  for (DType d : dtypes) {
    if (!gpu.precisions.count(d)) continue;
    AnalyzeOptions o = options;
    o.exec.dtype = d;
    const Analysis a = analyse(o);
    if (a.partial) continue;
    keep({"dtype", fmt::format("run it in {} instead of {}", dtype_name(d), dtype_name(options.exec.dtype)),
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
  if (auto a = pad_channels(model, gpu, options, base)) keep(std::move(*a));
  if (auto a = fuse_depthwise(model, gpu, options, base)) keep(std::move(*a));
  std::stable_sort(out.begin(), out.end(), [](const Advice& x, const Advice& y) { return x.gain > y.gain; });
  return out;
}

}  // namespace tilewave
