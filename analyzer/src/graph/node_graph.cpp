#include "tilewave/node_graph.h"

#include <unordered_map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <fmt/format.h>

#include "tilewave/error.h"

namespace tilewave {

namespace {

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
      names += (i ? " -> " : "") + fmt::format("'{}' ({})", model.nodes[nodes[i]].name, model.nodes[nodes[i]].op_type);
    return names + (nodes.size() > 4 ? " -> ..." : "");
  }
  return "?";
}

}  // namespace

NodeGraph build_node_graph(const Model& model) {
  NodeGraph lg;
  const int n = int(model.nodes.size());
  BoostGraph graph(n);  // vertex i is model.nodes[i]; edge producer -> consumer
  lg.consumers.resize(n);
  std::unordered_map<std::string, int> producer;
  for (const auto& node : model.nodes)
    for (const auto& out : node.outputs) {
      if (out.empty()) continue;
      auto [it, fresh] = producer.emplace(out, node.index);
      if (!fresh)
        throw InputError(model.path, fmt::format("tensor '{}' is produced by both node '{}' and node '{}'", out,
                                                 model.nodes[it->second].name, node.name));
    }
  std::unordered_set<std::string> graph_inputs(model.inputs.begin(), model.inputs.end());
  for (const auto& node : model.nodes)
    for (const auto& in : node.inputs) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        boost::add_edge(it->second, node.index, graph);
        lg.consumers[it->second].push_back(node.index);
      } else if (!model.initializers.count(in) && !graph_inputs.count(in)) {
        throw InputError(model.path, fmt::format("node '{}' ({}) reads tensor '{}', which no node, initializer or "
                                                 "graph input produces",
                                                 node.name, node.op_type, in));
      }
    }
  // The one order shape inference walks too (model.h); an edge it cannot
  // respect is a cycle.
  lg.topo_order = topological_order(model);
  lg.topo_rank.resize(n);
  for (int i = 0; i < n; ++i) lg.topo_rank[lg.topo_order[i]] = i;
  for (auto [e, end] = boost::edges(graph); e != end; ++e)
    if (lg.topo_rank[boost::source(*e, graph)] >= lg.topo_rank[boost::target(*e, graph)])
      throw InputError(model.path, "the graph has a cycle: " + describe_cycle(model, graph));
  return lg;
}

}  // namespace tilewave
