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
bool pad_conv_outputs(onnx::GraphProto& g, int index, int64_t to) {
  std::map<std::string, std::vector<std::pair<int, int>>> consumers;
  for (int i = 0; i < g.node_size(); ++i)
    for (int s = 0; s < g.node(i).input_size(); ++s) consumers[g.node(i).input(s)].push_back({i, s});
  std::set<std::string> outputs;
  for (const auto& o : g.output()) outputs.insert(o.name());
  std::vector<std::pair<std::string, int>> edits;  // initializer, dim to set to `to`
  const auto& conv = g.node(index);
  if (conv.input_size() < 2) return false;
  edits.push_back({conv.input(1), 0});
  if (conv.input_size() > 2 && !conv.input(2).empty()) edits.push_back({conv.input(2), 0});
  std::vector<std::string> frontier = {conv.output(0)};
  while (!frontier.empty()) {
    const std::string tensor = frontier.back();
    frontier.pop_back();
    if (outputs.count(tensor) || consumers[tensor].empty()) return false;
    for (const auto& [node, slot] : consumers[tensor]) {
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
    if (!t || t->dims_size() <= dim || consumers[name].size() != 1) return false;
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
  std::ifstream f(path, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  auto proto = std::make_shared<onnx::ModelProto>();
  if (!f || !proto->ParseFromString(bytes.str())) return std::nullopt;
  auto& g = *proto->mutable_graph();
  const int align = gpu.precision(options.dtype).align;
  // Every convolution whose output channels miss the alignment, where the
  // padding stays local (pad_conv_outputs); the whole change is kept only if
  // the model predicts it faster.
  std::vector<std::string> padded;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() != "Conv" || group_of(n) != 1 || n.input_size() < 2) continue;
    const onnx::TensorProto* w = initializer(g, n.input(1));
    if (!w || w->dims_size() != 4 || w->dims(0) % align == 0) continue;
    const int64_t k = w->dims(0), to = (k + align - 1) / align * align;
    const std::string name = n.name().empty() ? n.output(0) : n.name();
    onnx::GraphProto trial = g;
    if (!pad_conv_outputs(trial, i, to)) continue;
    g = std::move(trial);
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
  std::stable_sort(out.begin(), out.end(), [](const Advice& x, const Advice& y) { return x.gain > y.gain; });
  return out;
}

}  // namespace tilewave
