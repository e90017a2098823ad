#include "model_copy.h"

#include "tilewave/pipeline.h"
#include "tilewave/tensor_values.h"
#include "tilewave_onnx.pb.h"

namespace tilewave {

namespace {

// Elements of an initializer; dims from the file, so the product saturates.
int64_t elements(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n = saturating_mul(n, d);
  return n;
}

// The data goes (the copy is only analysed): the tensor keeps its shape, as
// the bundled weight-stripped models do.
void shape_only(onnx::TensorProto& t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t.add_external_data();
  e->set_key("location");
  e->set_value("padded.bin");
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

void set_int_attribute(onnx::NodeProto& n, const std::string& name, int64_t value) {
  bool found = false;
  for (auto& a : *n.mutable_attribute())
    if (a.name() == name) {
      a.set_i(value);
      found = true;
    }
  if (found) return;
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void set_dims(onnx::GraphProto& g, const std::map<std::string, std::vector<int64_t>>& dims) {
  for (auto& t : *g.mutable_initializer()) {
    const auto it = dims.find(t.name());
    if (it == dims.end()) continue;
    t.clear_dims();
    for (int64_t d : it->second) t.add_dims(d);
    shape_only(t);
  }
}

// Each node's attributes taken from another node, all read before any is
// written.
void copy_attributes(onnx::GraphProto& g, const std::map<int, GraphEdit::AttributesFrom>& from) {
  std::map<int, std::vector<onnx::AttributeProto>> taken;
  for (const auto& [node, source] : from) {
    auto& list = taken[node];
    for (const auto& name : source.names)
      if (const auto* a = attribute(g.node(source.node), name)) list.push_back(*a);
  }
  for (const auto& [node, list] : taken) {
    auto* n = g.mutable_node(node);
    n->clear_attribute();
    for (const auto& a : list) *n->add_attribute() = a;
  }
}

// The nodes kept, in their order, reading the renamed tensors; the graph
// outputs renamed too.
void drop_and_rename(onnx::GraphProto& g, const std::set<int>& dropped,
                     const std::map<std::string, std::string>& renamed) {
  auto rename = [&](std::string& tensor) {
    if (const auto it = renamed.find(tensor); it != renamed.end()) tensor = it->second;
  };
  auto& nodes = *g.mutable_node();
  int kept = 0;
  for (int i = 0; i < nodes.size(); ++i) {
    if (dropped.count(i)) continue;
    if (kept != i) nodes.SwapElements(kept, i);
    for (auto& in : *nodes.Mutable(kept)->mutable_input()) rename(in);
    ++kept;
  }
  nodes.DeleteSubrange(kept, nodes.size() - kept);
  for (auto& o : *g.mutable_output()) rename(*o.mutable_name());
}

}  // namespace

ModelCopy::ModelCopy(const ModelFile& file)
    : path_(file.path), proto_(std::make_shared<onnx::ModelProto>(*file.proto)) {}

ModelCopy::ModelCopy(const ModelCopy& other)
    : path_(other.path_), proto_(std::make_shared<onnx::ModelProto>(*other.proto_)) {}

void ModelCopy::keep_shapes_only_above(int64_t n) {
  for (auto& t : *proto_->mutable_graph()->mutable_initializer())
    if (elem::is_real(t.data_type()) && elements(t) > n) shape_only(t);
}

void ModelCopy::apply(const GraphEdit& edit) {
  auto& g = *proto_->mutable_graph();
  set_dims(g, edit.initializer_dims);
  copy_attributes(g, edit.attributes_from);
  for (const auto& [at, value] : edit.int_attributes) set_int_attribute(*g.mutable_node(at.first), at.second, value);
  if (!edit.dropped_nodes.empty() || !edit.renamed_reads.empty())
    drop_and_rename(g, edit.dropped_nodes, edit.renamed_reads);
}

Analysis ModelCopy::analyze(const GpuModel& gpu, const AnalyzeOptions& options) {
  return analyze_model(load_onnx_proto(proto_, path_, options.load), gpu, options);
}

std::string file_name_of(const Node& n) {
  if (n.proto && !n.proto->name().empty()) return n.proto->name();
  return n.outputs.empty() ? n.name : n.outputs[0];
}

}  // namespace tilewave
