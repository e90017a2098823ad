// The typed kernel graph's one reader/producer index and topological order
// (analyzer/include/tilewave/ir/kernel_graph.h).
#include <doctest/doctest.h>

#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/ir/kernel_graph.h"
#include "tilewave/lowering.h"
#include "tilewave/pipeline.h"

using namespace tilewave;

namespace {

Kernel kernel(const std::string& name, std::vector<std::string> reads, std::vector<std::string> writes) {
  Kernel k;
  k.name = name;
  for (const auto& r : reads) k.reads.push_back({r, 100});
  for (const auto& w : writes) k.writes.push_back({w, 100});
  return k;
}

}  // namespace

TEST_CASE("kernel index: each read names the last writer before it, consumers are the readers") {
  KernelGraph g;
  g.kernels = {kernel("a", {"x"}, {"t"}), kernel("b", {"t"}, {"u"}), kernel("c", {"t", "u"}, {"t"}),
               kernel("d", {"t"}, {})};
  const KernelIndex index(g);
  CHECK(index.producer(0, 0) == -1);  // the network's input
  CHECK(index.producer(1, 0) == 0);
  CHECK(index.producer(2, 0) == 0);
  CHECK(index.producer(2, 1) == 1);
  CHECK(index.producer(3, 0) == 2);  // c wrote t again, in place
  CHECK(index.consumers(0) == std::vector<int>{1, 2});
  CHECK(index.consumers(1) == std::vector<int>{2});
  CHECK(index.consumers(2) == std::vector<int>{3});
  CHECK(index.consumers(3).empty());
  CHECK(index.tensor_bytes("u") == 100);
  CHECK(index.tensor_bytes("missing") == 0);
  CHECK_FALSE(launch_order_error(g, index));
  CHECK(topological_order(g, index) == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("kernel index: a read ahead of its only writer breaks launch order, and the sort mends it") {
  KernelGraph g;
  g.kernels = {kernel("a", {"x"}, {"t"}), kernel("late", {"u"}, {"v"}), kernel("b", {"t"}, {"u"})};
  const KernelIndex index(g);
  CHECK(index.producer(1, 0) == 2);
  const auto error = launch_order_error(g, index);
  REQUIRE(error);
  CHECK(error->find("(late, ) reads u before kernel 2 (b, ) writes it") != std::string::npos);
  CHECK(topological_order(g, index) == std::vector<int>{0, 2, 1});
}

TEST_CASE("kernel index: a cycle has no topological order") {
  KernelGraph g;
  g.kernels = {kernel("a", {"v"}, {"u"}), kernel("b", {"u"}, {"v"})};
  const KernelIndex index(g);
  CHECK_THROWS_AS(topological_order(g, index), std::logic_error);
}

TEST_CASE("kernel index: every configuration's lowering of a real network is in launch order") {
  LoadOptions o;
  o.batch = 2;
  const Model m = load_onnx(test::zoo("efficientnet_b0.onnx"), o);
  for (const char* runtime : {"eager", "inductor", "tensorrt"})
    for (bool amp : {false, true})
      for (Layout layout : {Layout::nchw, Layout::nhwc}) {
        ExecutionConfig e;
        e.runtime = &runtime_named(runtime, "test");
        e.amp = amp;
        e.layout = layout;
        CAPTURE(e.name());
        const KernelGraph g = lower_model(m, e);
        const KernelIndex index(g);
        CHECK_FALSE(launch_order_error(g, index));
        const std::vector<int> order = topological_order(g, index);
        REQUIRE(order.size() == g.kernels.size());
        for (size_t i = 0; i < order.size(); ++i) CHECK(order[i] == int(i));
        // Every read the network's kernels make of a kernel-written tensor has its producer.
        int edges = 0;
        for (size_t k = 0; k < g.kernels.size(); ++k) edges += int(index.consumers(k).size());
        CHECK(edges > int(g.kernels.size()) / 2);
      }
}

TEST_CASE("kernel ops: node op types and runtime steps, spelled as every output shows them") {
  KernelOps ops;
  CHECK(ops.empty());
  CHECK(ops.text().empty());
  CHECK(ops.head().empty());
  ops.add(RuntimeStep::bias);
  ops.add("Relu");
  CHECK(ops.text() == "bias+Relu");
  CHECK(ops.head() == "bias");
  CHECK_FALSE(ops.is(RuntimeStep::bias));  // a bias with its activation is not a bias pass alone
  CHECK_FALSE(ops.is_runtime_step());
  CHECK(ops.contains("Relu"));
  CHECK_FALSE(ops.contains("bias"));  // a runtime step is not a node's op type
  const KernelOps conv("Conv");
  CHECK(conv.is("Conv"));
  CHECK_FALSE(conv.is(RuntimeStep::cast));
  CHECK_FALSE(conv.is_runtime_step());
  CHECK(KernelOps(RuntimeStep::norm_apply).is_runtime_step());
  const KernelOps attention(RuntimeStep::attention);
  CHECK(attention.text() == "Attention(MatMul+Softmax+MatMul)");
  CHECK(attention.is(RuntimeStep::attention));
  CHECK_FALSE(attention.contains("Softmax"));
  // A derived kernel carries its step and its owner's head node.
  Kernel owner = kernel("conv1", {"x"}, {"y"});
  owner.nodes = {7};
  const Kernel cast = derived_kernel(owner, "/cast", RuntimeStep::cast, Layer{}, HostCall::cast);
  CHECK(cast.name == "conv1/cast");
  CHECK(cast.ops.is(RuntimeStep::cast));
  CHECK(cast.nodes == std::vector<int>{7});
}
