// `tilewave annotate` (docs/report.md "tilewave annotate"): the model file again,
// each node's prediction as key/value pairs in its metadata_props (ONNX
// 1.16's NodeProto field, added to tilewave's copy of the 1.12 schema,
// analyzer/CMakeLists.txt) and one short line in its doc_string for
// Netron's sidebar; the network's totals in the model's metadata_props. The
// file is re-read as it is on disk (the loader's copy has overridden
// shapes); only doc strings and metadata change, and the weights stay as
// they were. External data files stay where they are: a copy written to
// another folder has their locations rewritten relative to it.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/model.h"
#include "tilewave/report.h"
#include "tilewave/text.h"

#include "format.h"
#include "tilewave_onnx.pb.h"

namespace tilewave {

namespace {

constexpr const char* kMark = "[tilewave] ";
constexpr const char* kKeyPrefix = "tilewave.";  // every key annotate writes; a second run replaces them

using Entries = google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto>;

// Drops the entries an earlier annotation wrote, keeping everyone else's.
void drop_ours(Entries& props) {
  for (int i = props.size(); i-- > 0;)
    if (props.Get(i).key().rfind(kKeyPrefix, 0) == 0 || props.Get(i).key() == "tilewave") props.DeleteSubrange(i, 1);
}

void put(Entries& props, const std::string& key, const std::string& value) {
  auto* e = props.Add();
  e->set_key(kKeyPrefix + key);
  e->set_value(value);
}

// The node's facts (NodeFate: over the kernels it heads, utilization and
// losses weighted by time, bound and main loss the longest kernel's) and its one-line summary.
std::string annotate_node(const Analysis& a, int node, Entries& props) {
  const NodeFate& fate = a.nodes_fate[size_t(node)];
  put(props, "fate", fate_name(fate.fate));
  std::string kernels;
  for (int k : fate.kernels) kernels += (kernels.empty() ? "" : "; ") + a.kernels[size_t(k)].kernel.name;
  put(props, "kernels", kernels);
  if (fate.kernels.empty()) return "launches no kernel (shape arithmetic, or a constant the runtime folds)";
  const KernelResult& first = a.kernels[size_t(fate.kernels.front())];
  if (fate.fate == Fate::fused) {
    const std::string& head = a.nodes_fate[size_t(first.kernel.nodes.front())].name;
    put(props, "fused_into", head);
    return fmt::format("fused into kernel {}, whose head is node {}", first.kernel.name, head);
  }
  if (fate.fate == Fate::unmodelled) {
    put(props, "unmodelled", first.kernel.unmodelled_reason);
    return "unmodelled: " + first.kernel.unmodelled_reason;
  }
  if (fate.longest_kernel < 0 || !(fate.time_us > 0)) return "no costed kernel";
  const KernelCost& longest = *a.kernels[size_t(fate.longest_kernel)].cost;
  put(props, "time_us", fmt::format("{:.3f}", fate.time_us));
  put(props, "step_share", fmt::format("{:.4f}", fate.step_share));
  put(props, "gpu_busy_share", fmt::format("{:.4f}", fate.gpu_busy_share));
  put(props, "utilization", fmt::format("{:.4f}", fate.utilization));
  put(props, "bound", bound_name(longest.bound));
  put(props, "main_loss", main_loss(longest));
  put(props, "runs_as", longest.kernel);
  for (LossCause cause : kLossCauses)
    if (cause != LossCause::idle)  // a network's loss, not a kernel's
      put(props, std::string("loss.") + loss_cause_names(cause).key, fmt::format("{:.4f}", loss_share(fate.losses, cause)));
  return fmt::format("{:.2f} us ({:.1f}% of the GPU's busy time), utilization {:.1f}%, {}-bound, main loss: {}",
                     fate.time_us, 100 * fate.gpu_busy_share, 100 * fate.utilization, bound_name(longest.bound),
                     main_loss(longest));
}

namespace fs = std::filesystem;

// Every tensor of `g` and its subgraphs that keeps its data in an external
// file: initializers, and the tensor attributes of Constant nodes and others.
template <typename F>
void for_each_tensor(onnx::GraphProto& g, const F& f) {
  for (auto& t : *g.mutable_initializer()) f(t);
  for (auto& n : *g.mutable_node())
    for (auto& attr : *n.mutable_attribute()) {
      if (attr.has_t()) f(*attr.mutable_t());
      for (auto& t : *attr.mutable_tensors()) f(t);
      if (attr.has_g()) for_each_tensor(*attr.mutable_g(), f);
      for (auto& sub : *attr.mutable_graphs()) for_each_tensor(sub, f);
    }
}

// ONNX reads an external data file relative to the model's folder, so an
// annotated copy in `output`'s folder names each one relative to that
// folder, or is refused where it could only do so through "..", which ONNX's
// loaders refuse.
void relocate_external_data(onnx::ModelProto& proto, const std::string& path, const std::string& output) {
  const fs::path model_dir = fs::absolute(fs::path(path)).lexically_normal().parent_path();
  const fs::path out_dir = fs::absolute(fs::path(output)).lexically_normal().parent_path();
  if (model_dir == out_dir) return;
  for_each_tensor(*proto.mutable_graph(), [&](onnx::TensorProto& t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return;
    for (auto& entry : *t.mutable_external_data()) {
      if (entry.key() != "location") continue;
      const fs::path file = (model_dir / fs::path(entry.value())).lexically_normal();
      const fs::path moved = file.lexically_relative(out_dir);
      if (moved.empty() || *moved.begin() == "..")
        throw InputError(path, fmt::format("tensor '{}' keeps its data in '{}', which ONNX reads relative to the "
                                           "model's folder; an annotated copy in {} could reach it only through "
                                           "'..': write the copy in the model's folder or one above it",
                                           printable(t.name()), printable(entry.value()),
                                           printable(out_dir.string())));
      entry.set_value(moved.generic_string());
    }
  });
}

}  // namespace

std::string annotated_onnx(const std::string& path, const Analysis& a, const std::string& output) {
  views::require_parts(a, ResultParts{true, false}, "annotate");
  onnx::ModelProto proto = *read_onnx_file(path);
  if (!output.empty() && output != "-") relocate_external_data(proto, path, output);
  auto* g = proto.mutable_graph();
  const int nodes = g->node_size();
  if (size_t(nodes) != a.nodes_fate.size()) throw InputError(path, "the file changed while it was analysed");
  const std::string target = fmt::format("{} ({}), batch {}, {}, runtime {}", a.gpu_name, a.gpu_id, a.batch,
                                         dtype_name(a.dtype), a.runtime);
  for (int i = 0; i < nodes; ++i) {
    onnx::NodeProto* node = g->mutable_node(i);
    drop_ours(*node->mutable_metadata_props());
    const std::string line = fmt::format("{}{}, batch {}: {}", kMark, a.gpu_id, a.batch,
                                         annotate_node(a, i, *node->mutable_metadata_props()));
    // A second annotation replaces the first; the node's own text stays.
    std::string doc = node->doc_string();
    const auto at = doc.find(kMark);
    if (at != std::string::npos) doc.erase(at > 0 && doc[at - 1] == '\n' ? at - 1 : at);
    node->set_doc_string(doc.empty() ? line : doc + "\n" + line);
  }
  auto& meta = *proto.mutable_metadata_props();
  drop_ours(meta);
  put(meta, "target", target);
  put(meta, "time_us", fmt::format("{:.3f}", a.total.time_us));
  put(meta, "throughput_per_s", fmt::format("{:.1f}", a.total.throughput_per_s));
  put(meta, "utilization", fmt::format("{:.4f}", a.total.utilization));
  put(meta, "kernels", std::to_string(a.total.kernels));
  put(meta, "partial", a.partial ? "true" : "false");
  return proto.SerializeAsString();
}

}  // namespace tilewave
