#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <queue>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include "tilewave_onnx.pb.h"

#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/model.h"

namespace tilewave {

bool TensorInfo::fully_known() const {
  if (!has_shape) return false;
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

int64_t TensorInfo::numel() const {
  if (!fully_known()) return -1;
  int64_t n = 1;
  for (int64_t d : dims) n = saturating_mul(n, d);  // dims straight from the file, unchecked as yet
  return n;
}

bool TensorInfo::is_real() const {
  using TP = onnx::TensorProto;
  return elem_type == TP::FLOAT || elem_type == TP::FLOAT16 || elem_type == TP::BFLOAT16 || elem_type == TP::DOUBLE;
}

const TensorInfo* Model::tensor(const std::string& name) const {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

int64_t Model::numel(const std::string& name) const {
  const TensorInfo* t = tensor(name);
  return t ? t->numel() : -1;
}

bool Model::is_output(const std::string& name) const {
  if (!output_set.empty() || outputs.empty()) return output_set.count(name) > 0;
  return std::find(outputs.begin(), outputs.end(), name) != outputs.end();  // a model built by hand
}

const Node* Model::producer_of(const std::string& tensor) const {
  auto it = producer.find(tensor);
  return it == producer.end() ? nullptr : &nodes[size_t(it->second)];
}

const std::vector<TensorRead>& Model::readers_of(const std::string& tensor) const {
  static const std::vector<TensorRead> none;
  const auto it = readers.find(tensor);
  return it == readers.end() ? none : it->second;
}

std::vector<int> topological_order(const Model& model) {
  const size_t n = model.nodes.size();
  std::vector<int> pending(n, 0);  // reads of tensors another node writes, not yet placed
  for (const auto& [tensor, reads] : model.readers) {
    const auto p = model.producer.find(tensor);
    if (p == model.producer.end()) continue;
    for (const TensorRead& r : reads)
      if (r.node != p->second) ++pending[size_t(r.node)];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;  // the lowest index first: file order
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(int(i));
  std::vector<int> order;
  std::vector<bool> placed(n, false);
  while (!ready.empty()) {
    const int node = ready.top();
    ready.pop();
    order.push_back(node);
    placed[size_t(node)] = true;
    const auto& outs = model.nodes[size_t(node)].outputs;
    // Each tensor's readers once, through a set: scanning the earlier outputs
    // was quadratic in a Split of thousands (issue 32).
    std::unordered_set<std::string_view> listed;
    for (const std::string& out : outs) {
      if (out.empty() || (outs.size() > 1 && !listed.insert(out).second)) continue;
      const auto p = model.producer.find(out);
      if (p == model.producer.end() || p->second != node) continue;  // written again by a later node
      for (const TensorRead& r : model.readers_of(out))
        if (r.node != node && --pending[size_t(r.node)] == 0) ready.push(r.node);
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!placed[i]) order.push_back(int(i));
  return order;
}

int64_t Model::opset(const std::string& domain) const {
  auto it = opsets.find(domain);
  if (it == opsets.end() && domain.empty()) it = opsets.find("ai.onnx");
  return it == opsets.end() ? 0 : it->second;
}

std::optional<std::vector<int64_t>> parse_dims(const std::string& s) {
  std::vector<int64_t> dims;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    try {
      dims.push_back(std::stoll(part));
    } catch (...) {
      return std::nullopt;
    }
    if (dims.back() <= 0) return std::nullopt;
  }
  if (dims.empty()) return std::nullopt;
  return dims;
}

const onnx::AttributeProto* find_attr(const Node& n, const std::string& name) {
  for (const auto& a : n.proto->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t attr_int(const Node& n, const std::string& name, int64_t fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : fallback;
}

float attr_float(const Node& n, const std::string& name, float fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : fallback;
}

std::string attr_string(const Node& n, const std::string& name, const std::string& fallback) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> attr_ints(const Node& n, const std::string& name, std::vector<int64_t> fallback) {
  const auto* a = find_attr(n, name);
  if (!a) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> attr_floats(const Node& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

std::shared_ptr<onnx::ModelProto> read_onnx_file(const std::string& path) {
  std::error_code ec;
  require_regular_file(path, "an ONNX file");
  const auto file_bytes = std::filesystem::file_size(path, ec);
  if (!ec && file_bytes > uint64_t(kMaxModelFileBytes))
    throw InputError(path, fmt::format("file is {:.1f} GiB; an ONNX protobuf holds at most 2 GiB (larger weights "
                                       "belong in external data files)", double(file_bytes) / (1 << 30)));
  const std::string bytes = read_regular_file(path, "an ONNX file", uintmax_t(kMaxModelFileBytes));
  if (bytes.empty()) throw InputError(path, "file is empty");
  auto m = std::make_shared<onnx::ModelProto>();
  if (!m->ParseFromString(bytes)) throw InputError(path, "not an ONNX model (protobuf parse failed)");
  if (!m->has_graph() || m->graph().node_size() == 0)
    throw InputError(path, "not an ONNX model (no graph or no nodes)");
  return m;
}

namespace {

void set_shape(onnx::ValueInfoProto& v, const std::vector<int64_t>& dims) {
  auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// Overrides input shapes, then drops every recorded intermediate and output
// shape: they were written for the exporter's batch and would contradict
// the overridden one.
void apply_overrides(onnx::ModelProto& m, const LoadOptions& opt, const std::string& path,
                     std::vector<std::string>& notes) {
  auto* g = m.mutable_graph();
  std::unordered_set<std::string> inits;
  for (const auto& t : g->initializer()) inits.insert(t.name());
  std::unordered_set<std::string> seen;
  for (auto& in : *g->mutable_input()) {
    if (inits.count(in.name())) continue;
    seen.insert(in.name());
    auto it = opt.input_shapes.find(in.name());
    if (it != opt.input_shapes.end()) {
      const auto& declared = in.type().tensor_type();
      if (declared.has_shape() && declared.shape().dim_size() != int(it->second.size()))
        throw InputError(path, fmt::format("--input gives '{}' {} dimensions; the graph declares {}", in.name(),
                                           it->second.size(), declared.shape().dim_size()));
      set_shape(in, it->second);
      continue;
    }
    auto* tt = in.mutable_type()->mutable_tensor_type();
    if (!tt->has_shape() || tt->shape().dim_size() == 0) continue;  // reported later
    auto* dim0 = tt->mutable_shape()->mutable_dim(0);
    if (!opt.batch && dim0->has_dim_value()) continue;
    // A symbolic batch with no --batch is taken as 1, and said so.
    if (!opt.batch)
      notes.push_back(fmt::format("input '{}' has a symbolic batch '{}'; using 1 (set --batch N)", in.name(),
                                  dim0->dim_param()));
    dim0->clear_dim_param();
    dim0->set_dim_value(opt.batch.value_or(1));
  }
  for (const auto& [name, dims] : opt.input_shapes)
    if (!seen.count(name)) {
      std::string known;
      for (const auto& s : seen) known += (known.empty() ? "" : ", ") + s;
      throw InputError(path, fmt::format("--input names '{}', which is not a graph input (inputs: {})", name, known));
    }
  g->clear_value_info();
  for (auto& out : *g->mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
}

TensorInfo info_from_type(const onnx::TypeProto& t) {
  TensorInfo info;
  if (!t.has_tensor_type()) return info;
  info.elem_type = t.tensor_type().elem_type();
  if (!t.tensor_type().has_shape()) return info;
  info.has_shape = true;
  for (const auto& d : t.tensor_type().shape().dim())
    info.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return info;
}

void collect_tensors(Model& model) {
  const auto& g = model.proto->graph();
  for (const auto& t : g.initializer()) {
    TensorInfo info;
    info.has_shape = true;
    info.elem_type = t.data_type();
    info.dims.assign(t.dims().begin(), t.dims().end());
    // Checked here: no shape function ever sees an initializer's dims before they are used.
    if (!info.fully_known() || info.numel() > kMaxTensorElems)
      throw InputError(model.path, fmt::format("initializer '{}' has dims {}: negative, or more than 2^50 elements",
                                               t.name(), fmt::join(info.dims, "x")));
    model.tensors[t.name()] = info;
    model.initializers.insert(t.name());
  }
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (!model.initializers.count(v.name())) model.tensors[v.name()] = info_from_type(v.type());
  };
  for (const auto& v : g.input()) add(v);
  for (const auto& v : g.value_info()) add(v);
  for (const auto& v : g.output()) add(v);
  for (const auto& v : g.input())
    if (!model.initializers.count(v.name())) model.inputs.push_back(v.name());
  for (const auto& v : g.output()) {
    model.outputs.push_back(v.name());
    model.output_set.insert(v.name());
  }
}

void collect_nodes(Model& model) {
  const auto& g = model.proto->graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& p = g.node(i);
    Node n;
    n.index = i;
    n.op_type = p.op_type();
    n.domain = p.domain() == "ai.onnx" ? "" : p.domain();
    n.name = p.name().empty() ? fmt::format("{}_{}", p.op_type(), i) : p.name();
    n.inputs.assign(p.input().begin(), p.input().end());
    n.outputs.assign(p.output().begin(), p.output().end());
    n.proto = &p;
    for (const auto& out : n.outputs) {
      if (out.empty()) continue;
      auto [it, fresh] = model.producer.emplace(out, i);
      if (fresh) continue;
      // The node itself is not in model.nodes yet: one that names an output twice is its own earlier producer.
      if (it->second == i)
        throw InputError(model.path, fmt::format("node '{}' names output '{}' twice", n.name, out));
      throw InputError(model.path, fmt::format("tensor '{}' is produced by both node '{}' and node '{}'", out,
                                               model.nodes[size_t(it->second)].name, n.name));
    }
    for (size_t s = 0; s < n.inputs.size(); ++s)
      if (!n.inputs[s].empty()) model.readers[n.inputs[s]].push_back({i, int(s)});
    model.nodes.push_back(std::move(n));
  }
}

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

// Names a few nodes on a cycle so the user can find it.
std::string describe_cycle(const Model& model, const BoostGraph& g) {
  std::vector<int> component(boost::num_vertices(g));
  boost::strong_components(g, boost::make_iterator_property_map(component.begin(),
                                                                 boost::get(boost::vertex_index, g)));
  std::unordered_map<int, std::vector<int>> members;
  for (size_t v = 0; v < component.size(); ++v) members[component[v]].push_back(int(v));
  for (const auto& [c, nodes] : members) {
    bool self_loop = nodes.size() == 1 && boost::edge(nodes[0], nodes[0], g).second;
    if (nodes.size() < 2 && !self_loop) continue;
    std::string names;
    for (size_t i = 0; i < nodes.size() && i < 4; ++i)
      names += (i ? " -> " : "") + fmt::format("'{}' ({})", model.nodes[size_t(nodes[i])].name,
                                               model.nodes[size_t(nodes[i])].op_type);
    return names + (nodes.size() > 4 ? " -> ..." : "");
  }
  return "?";
}

// The first graph-input dimension that is not known, as "dimension K ('name')".
std::string unknown_dim(const onnx::ModelProto& proto, const std::string& input) {
  for (const auto& v : proto.graph().input()) {
    if (v.name() != input || !v.type().tensor_type().has_shape()) continue;
    const auto& dims = v.type().tensor_type().shape().dim();
    for (int k = 0; k < dims.size(); ++k)
      if (!dims[k].has_dim_value() || dims[k].dim_value() < 0)
        return fmt::format(" (dimension {}{})", k, dims[k].dim_param().empty() ? "" : " '" + dims[k].dim_param() + "'");
  }
  return " (no shape in the file)";
}

}  // namespace

void link_node_graph(Model& model) {
  const size_t n = model.nodes.size();
  model.consumers.assign(n, {});
  const std::unordered_set<std::string_view> graph_inputs(model.inputs.begin(), model.inputs.end());
  for (const auto& node : model.nodes)
    for (const auto& in : node.inputs) {
      if (in.empty()) continue;
      if (const auto it = model.producer.find(in); it != model.producer.end())
        model.consumers[size_t(it->second)].push_back(node.index);
      else if (!model.initializers.count(in) && !graph_inputs.count(in))
        throw InputError(model.path, fmt::format("node '{}' ({}) reads tensor '{}', which no node, initializer or "
                                                 "graph input produces",
                                                 node.name, node.op_type, in));
    }
  model.topo_order = topological_order(model);
  model.topo_rank.assign(n, 0);
  for (size_t i = 0; i < n; ++i) model.topo_rank[size_t(model.topo_order[i])] = int(i);
  for (size_t p = 0; p < n; ++p)
    for (int c : model.consumers[p])
      if (model.topo_rank[p] >= model.topo_rank[size_t(c)]) {
        BoostGraph g(n);  // vertex i is model.nodes[i]; edge producer -> consumer
        for (size_t q = 0; q < n; ++q)
          for (int r : model.consumers[q]) boost::add_edge(q, size_t(r), g);
        throw InputError(model.path, "the graph has a cycle: " + describe_cycle(model, g));
      }
}

Model read_onnx(const std::string& path, const LoadOptions& options) {
  return read_onnx_proto(read_onnx_file(path), path, options);
}

Model read_onnx_proto(std::shared_ptr<onnx::ModelProto> proto, const std::string& path, const LoadOptions& options) {
  Model model;
  model.path = path;
  model.proto = std::move(proto);
  for (const auto& op : model.proto->opset_import())
    model.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  if (options.batch && *options.batch <= 0) throw InputError("--batch", "batch must be positive");
  if (model.proto->graph().node_size() > kMaxGraphNodes)
    throw InputError(path, fmt::format("the graph has {} nodes, more than the {} tilewave accepts",
                                       model.proto->graph().node_size(), kMaxGraphNodes));
  if (model.opset() > kNewestOpset)
    model.notes.push_back(fmt::format("the file uses opset {}, newer than the {} tilewave knows; each op is read in "
                                      "its opset-{} form",
                                      model.opset(), kNewestOpset, kNewestOpset));
  apply_overrides(*model.proto, options, path, model.notes);
  collect_tensors(model);
  collect_nodes(model);
  for (const auto& in : model.inputs) {
    const TensorInfo& t = model.tensors[in];
    if (!t.fully_known())
      throw InputError(path, fmt::format("graph input '{}' has an unknown shape{}; set it with --input {}=1x3x224x224 "
                                         "(every dimension) or its batch with --batch N",
                                         in, unknown_dim(*model.proto, in), in));
  }
  for (const auto& in : model.inputs) {
    int64_t elems = 1;
    for (int64_t d : model.tensors[in].dims)
      if (__builtin_mul_overflow(elems, d, &elems) || elems > kMaxTensorElems)
        throw InputError(path, fmt::format("graph input '{}' would have more than 2^50 elements, the most tilewave "
                                           "handles in one tensor; use a smaller --batch or --input",
                                           in));
  }
  if (!model.inputs.empty()) {
    const auto& dims = model.tensors[model.inputs.front()].dims;
    model.batch = dims.empty() ? 1 : dims[0];
  }
  link_node_graph(model);
  return model;
}

}  // namespace tilewave
