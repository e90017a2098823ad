// Loading, shape inference, overrides and every error path of stage 1-2.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "onnx_builder.h"
#include "test_helpers.h"
#include "tilewave/error.h"
#include "tilewave/model.h"
#include "tilewave/pipeline.h"

using namespace tilewave;

namespace {
Model load(const std::string& file, LoadOptions o = {}) { return load_onnx(test::data(file), o); }
std::vector<int64_t> dims(const Model& m, const std::string& tensor) { return m.tensor(tensor)->dims; }
}  // namespace

TEST_CASE("a symbolic batch defaults to 1 with a note; --batch sets it and every shape is known") {
  const Model one = load("tiny_cnn.onnx");
  CHECK(one.batch == 1);
  REQUIRE(one.notes.size() == 1);
  CHECK(one.notes[0].find("symbolic batch") != std::string::npos);
  LoadOptions o;
  o.batch = 4;
  const Model m = load("tiny_cnn.onnx", o);
  CHECK(m.batch == 4);
  CHECK(dims(m, m.inputs[0]) == std::vector<int64_t>{4, 3, 32, 32});
  CHECK(dims(m, m.outputs[0]) == std::vector<int64_t>{4, 10});
  for (const auto& n : m.nodes)
    for (const auto& out : n.outputs) CHECK(m.tensor(out)->fully_known());
}

TEST_CASE("--batch overrides a fixed batch too, and --input sets a whole shape") {
  const Model fixed = load("tiny_cnn_fixed.onnx");
  CHECK(fixed.batch == 2);
  LoadOptions o;
  o.batch = 16;
  CHECK(load("tiny_cnn_fixed.onnx", o).batch == 16);
  LoadOptions in;
  in.input_shapes["x"] = {8, 3, 64, 64};
  const Model m = load("tiny_cnn.onnx", in);
  CHECK(m.batch == 8);
  CHECK(dims(m, m.outputs[0]) == std::vector<int64_t>{8, 10});
  LoadOptions bad;
  bad.input_shapes["nope"] = {1, 3, 32, 32};
  CHECK_THROWS_AS(load("tiny_cnn.onnx", bad), InputError);
}

TEST_CASE("weights stored in absent external files are not needed") {
  LoadOptions o;
  o.batch = 2;
  const Model m = load("stripped.onnx", o);
  CHECK(dims(m, m.outputs[0]) == std::vector<int64_t>{2, 10});
}

TEST_CASE("readers: each node input is a reader of its tensor, by slot, in file order; an omitted input reads nothing") {
  for (const char* file : {"shuffle.onnx", "tiny_cnn.onnx"}) {
    CAPTURE(file);
    const Model m = load(file);
    size_t inputs = 0, reads = 0;
    for (const auto& n : m.nodes)
      for (size_t s = 0; s < n.inputs.size(); ++s) {
        if (n.inputs[s].empty()) continue;
        ++inputs;
        const auto& readers = m.readers_of(n.inputs[s]);
        CHECK(std::any_of(readers.begin(), readers.end(),
                          [&](const TensorRead& r) { return r.node == n.index && r.slot == int(s); }));
      }
    for (const auto& [tensor, readers] : m.readers) {
      reads += readers.size();
      for (size_t k = 1; k < readers.size(); ++k)
        CHECK(std::make_pair(readers[k - 1].node, readers[k - 1].slot) < std::make_pair(readers[k].node, readers[k].slot));
    }
    CHECK(reads == inputs);
    CHECK(m.readers_of("").empty());
    CHECK(m.readers_of(m.outputs[0]).empty());
  }
}

TEST_CASE("ShuffleNet's channel shuffle resolves through Shape->Gather->Div->Concat->Reshape") {
  LoadOptions o;
  o.batch = 3;
  const Model m = load("shuffle.onnx", o);
  for (const auto& n : m.nodes)
    for (const auto& out : n.outputs) {
      CAPTURE(out);
      CHECK(m.tensor(out)->fully_known());
    }
  CHECK(dims(m, m.outputs[0]) == std::vector<int64_t>{3, 24, 28, 28});
}

TEST_CASE("every unseen validation model loads with all shapes known") {
  int models = 0;
  for (const char* set : {"heldout_variants", "heldout_variants_more", "heldout_largest", "heldout_segmentation"})
    for (const auto& entry : std::filesystem::directory_iterator(test::zoo(set))) {
      if (entry.path().extension() != ".onnx") continue;
      CAPTURE(entry.path().string());
      LoadOptions o;
      o.batch = 16;
      const Model m = load_onnx(entry.path().string(), o);
      for (const auto& n : m.nodes)
        for (const auto& out : n.outputs) CHECK(m.tensor(out)->fully_known());
      ++models;
    }
  CHECK(models == 46);
}

TEST_CASE("every bundled model analyses at several batch sizes with all shapes known") {
  for (const char* name : {"resnet50", "shufflenet_v2_x1_0", "densenet121", "inception_v3", "convnext_tiny",
                           "efficientnet_b0", "mobilenet_v3_small", "googlenet", "regnet_y_400mf"})
    for (int64_t b : {1, 7, 64}) {
      CAPTURE(name);
      CAPTURE(b);
      LoadOptions o;
      o.batch = b;
      const Model m = load_onnx(test::zoo(std::string(name) + ".onnx"), o);
      CHECK(m.batch == b);
      for (const auto& n : m.nodes)
        for (const auto& out : n.outputs) CHECK(m.tensor(out)->fully_known());
    }
}

TEST_CASE("bad files give one clear error naming the file") {
  auto message = [](const std::string& file) {
    try {
      LoadOptions o;
      o.batch = 1;
      load_onnx(test::data(file), o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("not_onnx.onnx").find("not an ONNX model") != std::string::npos);
  CHECK(message("truncated.onnx").find("not an ONNX model") != std::string::npos);
  CHECK(message("no_such_file.onnx").find("no such file") != std::string::npos);
  CHECK(message("cycle.onnx").find("cycle") != std::string::npos);
  CHECK(message("dangling.onnx").find("ghost") != std::string::npos);
  CHECK(message("unknown_shape.onnx").find("unknown shape") != std::string::npos);
  for (const char* f : {"not_onnx.onnx", "cycle.onnx", "dangling.onnx", "unknown_shape.onnx"})
    CHECK(message(f).find(test::data(f)) == 0);
}

TEST_CASE("loading links the node graph: producers sort before consumers") {
  LoadOptions o;
  o.batch = 1;
  const Model m = load("tiny_cnn.onnx", o);
  REQUIRE(m.topo_order.size() == m.nodes.size());
  size_t edges = 0;
  for (const auto& n : m.nodes)
    for (int c : m.consumers_of(n.index)) {
      CHECK(m.topo_rank[size_t(n.index)] < m.topo_rank[size_t(c)]);
      ++edges;
    }
  CHECK(edges > 0);
}

TEST_CASE("dimension strings parse strictly") {
  CHECK(parse_dims("1x3x224x224") == std::vector<int64_t>{1, 3, 224, 224});
  CHECK_FALSE(parse_dims("1x3xx4").has_value());
  CHECK_FALSE(parse_dims("0x3").has_value());
  CHECK_FALSE(parse_dims("-1x3").has_value());
  CHECK_FALSE(parse_dims("").has_value());
}

namespace {

// A model of nodes (reads, writes) in the given file order; "x" is its input.
Model wired(const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>>& nodes) {
  Model m;
  m.path = "wired.onnx";
  m.inputs = {"x"};
  for (const auto& [reads, writes] : nodes) {
    Node n;
    n.index = int(m.nodes.size());
    n.name = "n" + std::to_string(n.index);
    n.op_type = "Relu";
    n.inputs = reads;
    n.outputs = writes;
    for (const auto& w : writes) m.producer[w] = n.index;
    for (size_t s = 0; s < reads.size(); ++s) m.readers[reads[s]].push_back({n.index, int(s)});
    m.nodes.push_back(n);
  }
  return m;
}

// The same, its node graph linked as the loader links it.
Model linked(Model m) {
  link_node_graph(m);
  return m;
}

}  // namespace

TEST_CASE("one topological order: producers first, file order among ready nodes, a cycle last; loading links it") {
  // n0 reads what n1 writes; n3 reads n0's and n2's outputs.
  const Model out_of_order = wired({{{"a"}, {"b"}}, {{"x"}, {"a"}}, {{"x"}, {"c"}}, {{"b", "c"}, {"d"}}});
  CHECK(topological_order(out_of_order) == std::vector<int>{1, 0, 2, 3});
  const Model graph = linked(out_of_order);
  CHECK(graph.topo_order == topological_order(out_of_order));
  CHECK(graph.topo_rank[1] == 0);
  CHECK(graph.consumers_of(1) == std::vector<int>{0});
  CHECK(graph.consumers_of(0) == std::vector<int>{3});
  // A file already in order keeps it.
  const Model in_order = load("tiny_cnn.onnx");
  std::vector<int> file_order(in_order.nodes.size());
  for (size_t i = 0; i < file_order.size(); ++i) file_order[i] = int(i);
  CHECK(topological_order(in_order) == file_order);
  CHECK(in_order.topo_order == file_order);
  // n1 and n2 read each other's output: they come last, in file order, and the node graph names the cycle.
  const Model cycle = wired({{{"x"}, {"a"}}, {{"a", "f"}, {"e"}}, {{"e"}, {"f"}}, {{"a"}, {"g"}}});
  CHECK(topological_order(cycle) == std::vector<int>{0, 3, 1, 2});
  CHECK_THROWS_WITH_AS(linked(cycle), doctest::Contains("the graph has a cycle"), InputError);
  // A node reading its own output is a cycle too; a node writing one tensor twice counts its readers once.
  CHECK_THROWS_WITH_AS(linked(wired({{{"x", "a"}, {"a"}}})), doctest::Contains("cycle"), InputError);
  CHECK(topological_order(wired({{{"x"}, {"a", "a"}}, {{"a"}, {"b"}}})) == std::vector<int>{0, 1});
}

TEST_CASE("a tensor written twice is refused, by two nodes or by one naming it twice") {
  // The one-node case once read the node's own entry before it was stored (a fuzz finding).
  test::OnnxBuilder one(13);
  one.input("x", {1, 4});
  one.node("Split", {"x"}, {"y", "y"});
  one.output("y");
  CHECK_THROWS_WITH_AS(one.load(), doctest::Contains("node 'y' names output 'y' twice"), InputError);
  test::OnnxBuilder two(13);
  two.input("x", {1, 4});
  two.node("Relu", {"x"}, {"y"}).set_name("first");
  two.node("Relu", {"x"}, {"y"}).set_name("second");
  two.output("y");
  CHECK_THROWS_WITH_AS(two.load(), doctest::Contains("produced by both node 'first' and node 'second'"), InputError);
}
