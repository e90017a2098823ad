// docs/report.md "`tilewave advise`". Each suggestion is a changed model
// (another runtime, dtype or batch, or a graph with padded channels)
// analysed by the same path as the original; its gain is the difference.
// The graph rewrites are passes over the loaded Model: each says what it
// changes as a GraphEdit, which a ModelCopy applies (model_copy.h).
#include "tilewave/advise.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model_copy.h"
#include "tilewave/model.h"
#include "tilewave/op_registry.h"
#include "tilewave/text.h"

namespace tilewave {

namespace {

double gain_of(const Totals& before, const Totals& after) {
  return before.throughput_per_s > 0 ? after.throughput_per_s / before.throughput_per_s - 1 : 0;
}

// The trust mark of a changed configuration: none of the GPU's parameters
// fitted on its runtime (as `analyze`'s header marks it, docs/cli.md
// "Trust"), or it leaves the layout and precision set fitted for `base`
// for one without (the runtime's own parameters then stand in).
std::string not_fitted(const Analysis& a, const Analysis& base) {
  if (!a.runtime_calibrated) return fmt::format("no parameters fitted on {} for this GPU", a.runtime);
  if (base.execution_calibrated && !a.execution_calibrated)
    return fmt::format("no parameter set fitted on '{}' for this GPU (the {} set stands in)", a.exec.params_key(),
                       a.runtime);
  return "";
}

// Why a larger batch is faster per sample, from the two analyses: a
// host-bound step issues the same kernels for more samples; a GPU-bound one
// loses less of its time to the causes that do not grow with the batch.
std::string batch_cause(const Analysis& base, const Analysis& larger) {
  const Totals &b = base.total, &l = larger.total;
  if (b.host_bound && l.host_bound)
    return fmt::format("the step stays host-bound: the host issues the same {} kernels in about {:.0f} µs whatever the "
                       "batch, so each carries {} samples instead of {}",
                       l.kernels, l.host_busy_us, larger.batch, base.batch);
  if (b.host_bound)
    return fmt::format("the step is host-bound at batch {} (the host issues for {:.0f} µs against {:.0f} µs of GPU "
                       "work); at batch {} the GPU's work ({:.0f} µs) fills the host's time",
                       base.batch, b.host_busy_us, b.gpu_busy_us, larger.batch, l.gpu_busy_us);
  std::vector<std::pair<double, LossCause>> drops;
  for (LossCause c : {LossCause::tile, LossCause::wave, LossCause::fixed, LossCause::idle, LossCause::efficiency})
    if (loss_share(b.losses, c) - loss_share(l.losses, c) >= 0.01)
      drops.push_back({loss_share(b.losses, c) - loss_share(l.losses, c), c});
  std::stable_sort(drops.begin(), drops.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (drops.empty()) return "the GPU-bound step's losses barely change: the gain is work done in parallel";
  std::string out = "the GPU-bound step loses less of its time to ";
  for (size_t i = 0; i < drops.size() && i < 2; ++i)
    out += fmt::format("{}{} ({:.0f}% -> {:.0f}%)", i ? " and " : "", loss_cause_names(drops[i].second).label,
                       100 * loss_share(b.losses, drops[i].second), 100 * loss_share(l.losses, drops[i].second));
  return out;
}

// --- The graph the rewrites search ----------------------------------------

// What the rewrites read: the loaded model (who writes and who reads each
// tensor, the initializers' dims, the attributes) and what each op is
// (op_trait: the rewrites keep no op lists of their own).
struct Graph {
  const Model& model;
  const OpRegistry& registry;

  const Node& node(int i) const { return model.nodes[size_t(i)]; }
  // The node writing `tensor`, or null.
  const Node* producer(const std::string& tensor) const { return model.producer_of(tensor); }
  // Whether node n is registered with `trait` (op_registry.h: carries_channels,
  // channel_binary, activation).
  bool is(const Node& n, unsigned trait) const { return registry.has_trait(n.domain, n.op_type, trait); }
  // Readers, a graph output counting as one.
  size_t uses(const std::string& tensor) const {
    return model.readers_of(tensor).size() + (model.is_output(tensor) ? 1 : 0);
  }
  // An initializer's dims, or null for any other tensor.
  const std::vector<int64_t>* initializer(const std::string& name) const {
    const TensorInfo* t = model.initializers.count(name) ? model.tensor(name) : nullptr;
    return t ? &t->dims : nullptr;
  }
};

// A constant with at most one element (it broadcasts over any channel count).
bool scalar_constant(const Graph& g, const std::string& tensor) {
  const Node* p = g.producer(tensor);
  if (!g.model.initializers.count(tensor) && !(p && p->op_type == "Constant")) return false;
  const TensorInfo* t = g.model.tensor(tensor);
  return t && t->fully_known() && t->numel() <= 1;
}

// The label of a node in advice: its name in the file, shortened.
std::string label(const Node& n) { return compact_name(file_name_of(n)); }

// --- Channel padding on the graph -----------------------------------------

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

// Growths applied, kept as the GraphEdit that applies them: the search reads
// the initializers' dims and the convolutions' groups through it (each
// growth is found on the graph with those found before it), and each trial
// applies it to a copy.
class Grown {
 public:
  explicit Grown(const Graph& g) : graph_(g) {}
  // An initializer's dims, or null for any other tensor.
  const std::vector<int64_t>* dims(const std::string& name) const {
    const auto it = edit_.initializer_dims.find(name);
    return it != edit_.initializer_dims.end() ? &it->second : graph_.initializer(name);
  }
  int64_t group(const Node& n) const {
    const auto it = edit_.int_attributes.find({n.index, "group"});
    return it != edit_.int_attributes.end() ? it->second : attr_int(n, "group", 1);
  }
  // Grows by `delta` what `growth` names (by 0: it is in the edit, unchanged).
  void grow(const ChannelGrowth& growth, int64_t delta) {
    for (const auto& [name, dim] : growth.dims) {
      std::vector<int64_t> d = *dims(name);
      d[size_t(dim)] += delta;
      edit_.initializer_dims[name] = std::move(d);
    }
    for (int i : growth.groups) edit_.int_attributes[{i, "group"}] = group(graph_.node(i)) + delta;
  }
  const GraphEdit& edit() const { return edit_; }

 private:
  const Graph& graph_;
  GraphEdit edit_;
};

std::optional<ChannelGrowth> channel_growth(const Graph& g, const Grown& grown, int conv) {
  ChannelGrowth out;
  std::set<std::string> joined, producer_done;
  std::set<std::pair<int, int>> visited;  // (node, slot) ; slot -1: the node's output
  std::vector<std::string> todo;
  auto join = [&](const std::string& t, bool from_producer) {
    if (from_producer) producer_done.insert(t);
    if (joined.insert(t).second) todo.push_back(t);
  };
  auto grow_output = [&](const Node& n) {
    out.dims.push_back({n.inputs[1], 0});
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) out.dims.push_back({n.inputs[2], 0});
    out.padded_convs.push_back(n.index);
  };
  // One node met through one of its tensors; false where the growth cannot pass.
  auto visit = [&](int i, int slot) -> bool {
    const Node& n = g.node(i);
    const std::string& op = n.op_type;
    if (op == "Conv") {
      const std::vector<int64_t>* w = n.inputs.size() > 1 ? grown.dims(n.inputs[1]) : nullptr;
      if (!w || w->size() != 4 || slot > 0) return false;
      const int64_t group = grown.group(n);
      if (group == 1) {
        if (!visited.insert({i, slot}).second) return true;
        if (slot < 0) grow_output(n);
        else out.dims.push_back({n.inputs[1], 1});
        return true;
      }
      if ((*w)[1] != 1 || group != (*w)[0] || n.outputs.empty()) return false;  // grouped, not depthwise
      if (!visited.insert({i, 0}).second) return true;
      out.dims.push_back({n.inputs[1], 0});
      if (n.inputs.size() > 2 && !n.inputs[2].empty()) out.dims.push_back({n.inputs[2], 0});
      out.groups.push_back(i);
      join(n.inputs[0], false);
      join(n.outputs[0], true);
      return true;
    }
    if (n.outputs.empty()) return false;
    for (size_t o = 1; o < n.outputs.size(); ++o)
      if (g.uses(n.outputs[o])) return false;  // BatchNorm's training outputs, MaxPool's indices
    if (g.is(n, op_trait::carries_channels)) {
      if (slot > 0 || n.inputs.empty()) return false;  // the channels feed a parameter
      if (!visited.insert({i, 0}).second) return true;
      if (op == "BatchNormalization")
        for (size_t s = 1; s < n.inputs.size(); ++s) out.dims.push_back({n.inputs[s], 0});
      join(n.inputs[0], false);
      join(n.outputs[0], true);
      return true;
    }
    if (g.is(n, op_trait::channel_binary)) {
      if (!visited.insert({i, 0}).second) return true;
      for (const auto& in : n.inputs)
        if (!scalar_constant(g, in)) join(in, false);
      join(n.outputs[0], true);
      return true;
    }
    if (op == "Concat") {
      // Which input should grow is not known from the output; and one input
      // growing twice would grow the output by 2 * delta.
      if (!find_attr(n, "axis") || attr_int(n, "axis", 0) != 1 || slot < 0 || !visited.insert({i, 0}).second)
        return false;
      join(n.outputs[0], true);
      return true;
    }
    return false;
  };
  grow_output(g.node(conv));
  visited.insert({conv, -1});
  join(g.node(conv).outputs[0], true);
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    if (g.model.is_output(t)) return std::nullopt;  // the model's interface would change
    if (!producer_done.count(t)) {
      const Node* p = g.producer(t);
      if (!p || !visit(p->index, -1)) return std::nullopt;
    }
    for (const TensorRead& r : g.model.readers_of(t))
      if (!visit(r.node, r.slot)) return std::nullopt;
  }
  for (const auto& [name, dim] : out.dims) {
    const std::vector<int64_t>* d = grown.dims(name);
    if (!d || int(d->size()) <= dim || g.uses(name) != 1) return std::nullopt;
  }
  return out;
}

std::optional<Advice> pad_channels(const ModelFile& model, const Graph& g, const GpuModel& gpu,
                                   const AnalyzeOptions& options, const Analysis& base) {
  const int align = gpu.precision(options.exec.dtype).align;
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
  std::vector<Candidate> all;
  Grown found(g);  // later candidates see the convs earlier ones pad aligned
  for (const Node& n : g.model.nodes) {
    if (n.op_type != "Conv" || n.inputs.size() < 2 || n.outputs.empty() || found.group(n) != 1) continue;
    const std::vector<int64_t>* w = found.dims(n.inputs[1]);
    if (!w || w->size() != 4 || (*w)[0] % align == 0) continue;
    auto growth = channel_growth(g, found, n.index);
    if (!growth) continue;
    const int64_t channels = (*w)[0];
    Candidate c{std::move(*growth), (channels + align - 1) / align * align - channels, {}};
    for (int conv : c.growth.padded_convs) {
      const Node& pc = g.node(conv);
      const int64_t k = (*found.dims(pc.inputs[1]))[0];
      c.labels.push_back(fmt::format("{} {}->{}", label(pc), k, k + c.delta));
    }
    found.grow(c.growth, c.delta);
    all.push_back(std::move(c));
  }
  if (all.empty()) return std::nullopt;
  // One copy, analysed with each set: every tensor any candidate grows is in
  // every set's edit (grown by 0 where the set leaves it), so each edit
  // undoes the one before.
  ModelCopy copy(model);
  auto analysed = [&](const std::vector<const Candidate*>& set) {
    Grown grown(g);
    for (const Candidate& c : all) grown.grow(c.growth, 0);
    for (const Candidate* c : set) grown.grow(c->growth, c->delta);
    copy.apply(grown.edit());
    return copy.analyze(gpu, options);
  };
  std::vector<const Candidate*> every;
  for (const Candidate& c : all) every.push_back(&c);
  Analysis together = analysed(every);
  std::vector<const Candidate*> kept;
  std::optional<Analysis> one_by_one;
  // Each trial analyses the whole model: one by one only for the first
  // kOneByOne candidates, so that the trials stay linear in the convolutions
  // (the rest are judged together).
  constexpr size_t kOneByOne = 24;
  for (const Candidate& c : all) {
    if (size_t(&c - all.data()) >= kOneByOne) break;
    std::vector<const Candidate*> tried = kept;
    tried.push_back(&c);
    Analysis after = analysed(tried);
    if (after.partial || after.total.time_us >= (one_by_one ? one_by_one->total : base.total).time_us) continue;
    one_by_one = std::move(after);
    kept = std::move(tried);
  }
  const bool all_faster = !together.partial && (!one_by_one || together.total.time_us < one_by_one->total.time_us);
  if (!all_faster) {
    if (!one_by_one) return std::nullopt;
    together = std::move(*one_by_one);
  } else {
    kept = every;
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
std::optional<Activation> activation_writing(const Graph& g, const std::string& tensor) {
  const Node* n = g.producer(tensor);
  if (!n || n->inputs.empty()) return std::nullopt;
  if (g.is(*n, op_trait::activation) && g.uses(n->inputs[0]) == 1)
    return Activation{n->op_type, n->inputs[0], tensor, {n->index}};
  if (n->op_type != "Mul" || n->inputs.size() != 2) return std::nullopt;
  for (size_t s = 0; s < 2; ++s) {
    const Node* sig = g.producer(n->inputs[s]);
    if (!sig) continue;
    const std::string& x = n->inputs[1 - s];
    if (sig->op_type == "Sigmoid" && sig->inputs.size() == 1 && sig->inputs[0] == x && g.uses(x) == 2 &&
        g.uses(n->inputs[s]) == 1)
      return Activation{"SiLU", x, tensor, {sig->index, n->index}};
  }
  return std::nullopt;
}

// The activation that is the only reader of `tensor`.
std::optional<Activation> activation_reading(const Graph& g, const std::string& tensor) {
  const std::vector<TensorRead>& readers = g.model.readers_of(tensor);
  if (g.model.is_output(tensor)) return std::nullopt;
  if (readers.size() == 1) {
    const Node& n = g.node(readers[0].node);
    if (readers[0].slot == 0 && g.is(n, op_trait::activation) && !n.outputs.empty())
      return Activation{n.op_type, tensor, n.outputs[0], {n.index}};
    return std::nullopt;
  }
  if (readers.size() != 2) return std::nullopt;
  for (size_t s = 0; s < 2; ++s) {
    const Node& sig = g.node(readers[s].node);
    if (sig.op_type != "Sigmoid" || sig.outputs.empty()) continue;
    const Node& mul = g.node(readers[1 - s].node);
    if (mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.empty() || g.uses(sig.outputs[0]) != 1) continue;
    const std::vector<TensorRead>& gated = g.model.readers_of(sig.outputs[0]);
    if (!gated.empty() && gated.front().node == mul.index)
      return Activation{"SiLU", tensor, mul.outputs[0], {sig.index, mul.index}};
  }
  return std::nullopt;
}

struct DepthwiseBlock {
  int expand = -1, depthwise = -1;
  std::vector<int> act_after;  // its nodes
  std::string act_before_output, act_after_output, name;
};

// The weight dims of n if it is a depthwise conv (is_depthwise) writing one
// channel per group, whose groups can grow with its channels.
const std::vector<int64_t>* depthwise_weight(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || n.inputs.size() < 2 || n.outputs.empty()) return nullptr;
  const std::vector<int64_t>* w = g.initializer(n.inputs[1]);
  if (!w || w->size() != 4) return nullptr;
  const int64_t groups = attr_int(n, "group", 1);
  if (!is_depthwise((*w)[1] * groups, groups) || (*w)[0] != groups) return nullptr;
  return w;
}

// Whether n is an ungrouped 1x1 conv writing `channels`, its weight its own.
bool is_expansion(const Graph& g, const Node& n, int64_t channels) {
  if (n.op_type != "Conv" || attr_int(n, "group", 1) != 1 || n.inputs.size() < 2) return false;
  const std::vector<int64_t>* w = g.initializer(n.inputs[1]);
  return w && w->size() == 4 && (*w)[2] == 1 && (*w)[3] == 1 && (*w)[0] == channels && g.uses(n.inputs[1]) == 1;
}

std::vector<DepthwiseBlock> depthwise_blocks(const Graph& g) {
  std::vector<DepthwiseBlock> blocks;
  for (const Node& dw : g.model.nodes) {
    const std::vector<int64_t>* w = depthwise_weight(g, dw);
    // Its input: one activation, fed by a 1x1 ungrouped conv, each used once.
    if (!w || g.uses(dw.inputs[0]) != 1) continue;
    const auto act1 = activation_writing(g, dw.inputs[0]);
    if (!act1) continue;
    const Node* expand = g.producer(act1->input);
    if (!expand || !is_expansion(g, *expand, (*w)[0])) continue;
    // And its output: one activation of the same kind.
    const auto act2 = activation_reading(g, dw.outputs[0]);
    if (!act2 || act2->kind != act1->kind) continue;
    blocks.push_back({expand->index, dw.index, act2->nodes, act1->output, act2->output, label(dw)});
  }
  return blocks;
}

// The edit fusing these blocks: each expansion takes its depthwise conv's
// window and stride; the depthwise conv and the activation after it go,
// their readers reading the first activation's output.
GraphEdit fused(const Graph& g, const std::vector<const DepthwiseBlock*>& blocks) {
  GraphEdit edit;
  for (const DepthwiseBlock* b : blocks) {
    const Node& expand = g.node(b->expand);
    const std::vector<int64_t>& window = *g.initializer(g.node(b->depthwise).inputs[1]);
    std::vector<int64_t> dims = *g.initializer(expand.inputs[1]);
    dims[2] = window[2];
    dims[3] = window[3];
    edit.initializer_dims[expand.inputs[1]] = std::move(dims);
    edit.attributes_from[b->expand] = {b->depthwise, {"kernel_shape", "strides", "pads", "dilations"}};
    edit.dropped_nodes.insert(b->depthwise);
    edit.dropped_nodes.insert(b->act_after.begin(), b->act_after.end());
    edit.renamed_reads[b->act_after_output] = b->act_before_output;
  }
  return edit;
}

std::optional<Advice> fuse_depthwise(const ModelFile& model, const Graph& g, const GpuModel& gpu,
                                     const AnalyzeOptions& options, const Analysis& base) {
  const std::vector<DepthwiseBlock> blocks = depthwise_blocks(g);
  if (blocks.empty()) return std::nullopt;
  // Each trial copies the model; a copy whose weights are shapes only keeps
  // that cheap for a model that carries its weights.
  ModelCopy shapes(model);
  shapes.keep_shapes_only_above(kShapeOnlyAbove);
  auto analysed = [&](const std::vector<const DepthwiseBlock*>& set) {
    ModelCopy trial = shapes;
    trial.apply(fused(g, set));
    return trial.analyze(gpu, options);
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

AdviseRun advise_file(const std::string& path, const RunOptions& o,
                      const std::function<void(const Analysis&)>& on_analysis) {
  const GpuModel gpu = gpu_of(o);
  const AnalyzeOptions options = analyze_options(o);
  const ModelFile model(path);
  AdviseRun run{model.analyze(gpu, options), {}};
  if (on_analysis) on_analysis(run.analysis);
  run.advice = advise(model, gpu, options, run.analysis);
  return run;
}

std::vector<Advice> advise(const ModelFile& model, const GpuModel& gpu, const AnalyzeOptions& options,
                           const Analysis& base, double min_gain) {
  std::vector<Advice> out;
  // `after`: the changed configuration's analysis; a graph rewrite keeps the base's.
  auto keep = [&](Advice a, const Analysis& after) {
    a.gain = gain_of(a.before, a.after);
    a.not_fitted = not_fitted(after, base);
    if (a.gain > min_gain) out.push_back(std::move(a));
  };
  auto analyse = [&](const AnalyzeOptions& o) { return model.analyze(gpu, o); };
  // Every trial is judged by its totals, memory note and calibration marks alone (docs/model.md "Result parts").
  AnalyzeOptions trial_options = options;
  trial_options.parts = kTotalsOnly;

  // Another runtime: what it fuses that this one does not.
  for (const RuntimeProfile* r : builtin_runtimes()) {
    if (r == &options.exec.runtime_profile() || r->historical()) continue;
    AnalyzeOptions o = trial_options;
    o.exec.runtime = r;
    // An engine is launched as one (its default: a graph replay), never
    // issued kernel by kernel at a PyTorch runtime's host costs.
    const bool engine = r->defaults().launch == Launch::graph;
    if (engine) o.exec.launch = Launch::graph, o.exec.amp = r->defaults().amp, o.exec.layout = r->defaults().layout;
    const Analysis a = analyse(o);
    if (a.partial) continue;
    keep({"runtime",
          fmt::format("run it with {} instead of {}{}", r->name(), options.exec.runtime_profile().name(),
                      engine && options.exec.launch == Launch::loop ? ", launched as an engine is (one graph replay)"
                                                                   : ""),
          fmt::format("{} kernels instead of {}: {}", a.total.kernels, base.total.kernels, r->summary()), base.total,
          a.total},
         a);
  }
  // A plain loop whose host sets the pace: the same kernels replayed as one
  // CUDA graph (docs/model.md "Schedule").
  if (options.exec.launch == Launch::loop && base.total.host_bound) {
    AnalyzeOptions o = trial_options;
    o.exec.launch = Launch::graph;
    const Analysis a = analyse(o);
    if (!a.partial)
      keep({"launch",
            "capture the forward in a CUDA graph (torch.cuda.CUDAGraph, or torch.compile(mode=\"reduce-overhead\"))",
            fmt::format("the step is host-bound: the host issues for {:.0f} µs against {:.0f} µs of GPU work; a graph "
                        "replay issues it once",
                        base.total.host_busy_us, base.total.gpu_busy_us),
            base.total, a.total},
           a);
  }
  // The other activation layout.
  if (options.exec.runtime_profile().follows_layout()) {
    AnalyzeOptions o = trial_options;
    o.exec.layout = options.exec.layout == Layout::nchw ? Layout::nhwc : Layout::nchw;
    const Analysis a = analyse(o);
    if (!a.partial)
      keep({"layout",
            o.exec.layout == Layout::nhwc ? "run it channels_last (model and input .to(memory_format=torch.channels_last))"
                                          : "run it in NCHW (contiguous) instead of channels_last",
            fmt::format("{} kernels instead of {}", a.total.kernels, base.total.kernels), base.total, a.total}, a);
  }
  // Another dtype: fp32/tf32 to half precision; int8 where the runtime builds int8 engines.
  std::vector<DType> dtypes;
  if (options.exec.dtype == DType::fp32 || options.exec.dtype == DType::tf32) dtypes = {DType::fp16, DType::bf16};
  if (options.exec.runtime_profile().builds_int8() && options.exec.dtype != DType::int8) dtypes.push_back(DType::int8);
  for (DType d : dtypes) {
    if (!gpu.precisions.count(d)) continue;
    AnalyzeOptions o = trial_options;
    o.exec.dtype = d;
    const Analysis a = analyse(o);
    if (a.partial) continue;
    keep({"dtype", fmt::format("run it in {} instead of {}", dtype_name(d), dtype_name(options.exec.dtype)),
          d == DType::int8 ? "needs calibrated quantization; check accuracy" : "check accuracy", base.total, a.total},
         a);
  }
  // A larger batch: batches doubling from this one up to what
  // the GPU's memory holds (at most kBatchTrials analyses: a batch of a
  // million must not cost a million analyses, docs/errors.md "Budgets");
  // advised is the smallest within 5% of the best throughput found, since
  // latency grows with the batch and throughput saturates.
  if (base.batch >= 1) {
    constexpr int kBatchTrials = 16;
    constexpr int64_t kMaxBatch = int64_t(1) << 24;
    std::vector<Analysis> tried;
    tried.reserve(kBatchTrials);
    double next = double(base.batch);
    const char* stop = "the last of the search's trials";
    for (int k = 0; k < kBatchTrials; ++k) {
      next *= 2;
      const int64_t b = std::max<int64_t>(int64_t(std::ceil(next)), (tried.empty() ? base.batch : tried.back().batch) + 1);
      if (b > kMaxBatch) {
        stop = "the last below 2^24";
        break;
      }
      AnalyzeOptions o = trial_options;
      o.load.batch = b;
      tried.push_back(analyse(o));
      if (tried.back().over_memory) {  // a larger batch only needs more
        tried.pop_back();
        stop = "the last that fits the GPU's memory";
        break;
      }
    }
    double best_throughput = 0;
    for (const auto& t : tried)
      if (!t.partial) best_throughput = std::max(best_throughput, t.total.throughput_per_s);
    const auto pick = std::find_if(tried.begin(), tried.end(), [&](const Analysis& t) {
      return !t.partial && t.total.throughput_per_s >= 0.95 * best_throughput;
    });
    if (pick != tried.end())
      keep({"batch", fmt::format("use batch {} instead of {}", pick->batch, base.batch),
            fmt::format("latency {:.1f} -> {:.1f} us for {} samples instead of {}: {}; {}", base.total.time_us,
                        pick->total.time_us, pick->batch, base.batch, batch_cause(base, *pick),
                        &*pick == &tried.back()
                            ? fmt::format("it is the largest batch tried, {}", stop)
                            : fmt::format("the largest batch tried ({}, {}) gives at most 5% more", tried.back().batch,
                                          stop)),
            base.total, pick->total},
           *pick);
  }
  // The graph rewrites search the model as loaded.
  const Model loaded = model.load(options.load);
  const Graph graph{loaded, options.load.registry ? *options.load.registry : OpRegistry::builtin()};
  if (auto a = pad_channels(model, graph, gpu, trial_options, base)) keep(std::move(*a), base);
  if (auto a = fuse_depthwise(model, graph, gpu, trial_options, base)) keep(std::move(*a), base);
  std::stable_sort(out.begin(), out.end(), [](const Advice& x, const Advice& y) { return x.gain > y.gain; });
  return out;
}

}  // namespace tilewave
