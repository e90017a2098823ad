// `tilewave annotate` (docs/report.md): the model file again, each node's
// doc_string carrying its prediction so that Netron shows it beside the
// node, and the network's in metadata_props. The file is re-read as it is
// on disk (the loader's copy has overridden shapes); only doc strings and
// metadata change, so weights, internal or external, stay as they were.
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/model.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave_onnx.pb.h"

namespace tilewave {

namespace {

constexpr const char* kMark = "[tilewave] ";

std::string kernel_line(const KernelResult& k) {
  if (!k.cost) return fmt::format("kernel {} [{}]: unmodelled: {}", k.kernel.name, k.kernel.ops, k.kernel.unmodelled_reason);
  const KernelCost& c = *k.cost;
  const Losses& l = c.losses;
  return fmt::format("kernel {} [{}] {}: {:.2f} us, utilization {:.2f}%, {}-bound; time lost to tile {:.1f}%, "
                     "wave {:.1f}%, main-loop efficiency {:.1f}%, memory {:.1f}%, fixed cost {:.1f}%; main loss: {}; "
                     "runs as {}",
                     k.kernel.name, k.kernel.ops, shape_text(k.kernel), c.time_us, 100 * c.utilization,
                     bound_name(c.bound), 100 * l.tile, 100 * l.wave, 100 * l.efficiency, 100 * l.memory,
                     100 * l.fixed, main_loss(c), c.kernel);
}

}  // namespace

std::string annotated_onnx(const std::string& path, const Analysis& a) {
  onnx::ModelProto proto = *read_onnx_file(path);
  auto* g = proto.mutable_graph();
  const int nodes = g->node_size();
  if (size_t(nodes) != a.nodes_fate.size()) throw InputError(path, "the file changed while it was analysed");
  const std::string target = fmt::format("{} ({}), batch {}, {}, runtime {}", a.gpu_name, a.gpu_id, a.batch,
                                         dtype_name(a.dtype), a.runtime);
  for (int i = 0; i < nodes; ++i) {
    std::string text = fmt::format("{}predicted on {}: ", kMark, target);
    const NodeFate& fate = a.nodes_fate[size_t(i)];
    if (fate.kernels.empty()) text += "launches no kernel (shape arithmetic, or a constant the runtime folds)";
    for (size_t j = 0; j < fate.kernels.size(); ++j) {
      const KernelResult& k = a.kernels[size_t(fate.kernels[j])];
      if (j) text += "\n";
      if (k.kernel.nodes.front() == i) text += kernel_line(k);
      else text += fmt::format("fused into kernel {} [{}], whose head is node {}", k.kernel.name, k.kernel.ops,
                               g->node(k.kernel.nodes.front()).name());
    }
    // A second annotation replaces the first; the node's own text stays.
    std::string doc = g->node(i).doc_string();
    const auto at = doc.find(kMark);
    if (at != std::string::npos) doc.erase(at > 0 && doc[at - 1] == '\n' ? at - 1 : at);
    g->mutable_node(i)->set_doc_string(doc.empty() ? text : doc + "\n" + text);
  }
  onnx::StringStringEntryProto* meta = nullptr;
  for (auto& e : *proto.mutable_metadata_props())
    if (e.key() == "tilewave") meta = &e;
  if (!meta) meta = proto.add_metadata_props(), meta->set_key("tilewave");
  meta->set_value(fmt::format("predicted on {}: {:.1f} us, {:.0f} samples/s, utilization {:.2f}% of {:.0f} TFLOP/s; "
                              "{} kernels{}",
                              target, a.total.time_us, a.total.throughput_per_s, 100 * a.total.utilization,
                              a.peak_tflops, a.total.kernels, a.partial ? " (PARTIAL)" : ""));
  return proto.SerializeAsString();
}

}  // namespace tilewave
