// The result stage: the parts of an Analysis built on request (docs/model.md
// "Result parts") and the one CostModel an analysis resolves (docs/model.md "Pipeline").
#include <algorithm>

#include <doctest/doctest.h>

#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/lowering.h"
#include "tilewave/run_options.h"

using namespace tilewave;

namespace {

AnalyzeOptions options_for(const char* runtime, ResultParts parts) {
  AnalyzeOptions o;
  o.exec.runtime = find_runtime(runtime);
  o.parts = parts;
  return o;
}

// What every part of the request leaves the same: the totals, the kernels, the schedule and the notes.
void check_same_totals(const Analysis& a, const Analysis& b) {
  CHECK(a.total.time_us == b.total.time_us);
  CHECK(a.total.gpu_busy_us == b.total.gpu_busy_us);
  CHECK(a.total.flops == b.total.flops);
  CHECK(a.total.bytes == b.total.bytes);
  CHECK(a.total.dram_bytes == b.total.dram_bytes);
  CHECK(a.total.bound == b.total.bound);
  CHECK(a.total.utilization == b.total.utilization);
  CHECK(a.kernels.size() == b.kernels.size());
  CHECK(a.schedule.kernels.size() == b.schedule.kernels.size());
  CHECK(a.unmodelled == b.unmodelled);
  CHECK(a.notes == b.notes);
  CHECK(a.memory.weight_bytes == b.memory.weight_bytes);
}

}  // namespace

TEST_CASE("result parts: totals only builds no node facts and no groupings, and the totals stay the full result's") {
  const GpuModel gpu = test::gpu("h200");
  // EfficientNet-B0 has depthwise convolutions, whose op groups are named apart.
  for (const char* runtime : {"eager", "inductor", "tensorrt"}) {
    CAPTURE(runtime);
    const Analysis full = analyze_file(test::zoo("efficientnet_b0.onnx"), gpu, options_for(runtime, ResultParts{}));
    const Analysis light = analyze_file(test::zoo("efficientnet_b0.onnx"), gpu, options_for(runtime, kTotalsOnly));
    check_same_totals(full, light);
    CHECK(full.parts.node_facts);
    CHECK(full.parts.groupings);
    CHECK(int(full.nodes_fate.size()) == full.nodes);
    CHECK(full.memory.peak_activation_bytes > 0);
    CHECK_FALSE(full.by_op.empty());
    CHECK(std::any_of(full.kernels.begin(), full.kernels.end(), [](const KernelResult& r) { return r.grouped_conv; }));

    CHECK_FALSE(light.parts.node_facts);
    CHECK_FALSE(light.parts.groupings);
    CHECK(light.nodes_fate.empty());
    CHECK(light.memory.peak_activation_bytes == 0);
    CHECK(light.memory.peak_at.empty());
    CHECK(light.by_op.empty());
    CHECK(light.by_name.empty());
    CHECK(light.by_bound.empty());
    CHECK(std::none_of(light.kernels.begin(), light.kernels.end(),
                       [](const KernelResult& r) { return r.grouped_conv || !r.op_group.empty(); }));
  }
}

TEST_CASE("result parts: each part asked alone is built alone, equal to the full result's") {
  const GpuModel gpu = test::gpu("h200");
  const std::string path = test::zoo("efficientnet_b0.onnx");
  const Analysis full = analyze_file(path, gpu, options_for("eager", ResultParts{}));
  const Analysis facts = analyze_file(path, gpu, options_for("eager", ResultParts{true, false}));
  const Analysis groups = analyze_file(path, gpu, options_for("eager", ResultParts{false, true}));
  check_same_totals(full, facts);
  check_same_totals(full, groups);

  REQUIRE(facts.nodes_fate.size() == full.nodes_fate.size());
  for (size_t i = 0; i < full.nodes_fate.size(); ++i) {
    CHECK(facts.nodes_fate[i].fate == full.nodes_fate[i].fate);
    CHECK(facts.nodes_fate[i].kernels == full.nodes_fate[i].kernels);
    CHECK(facts.nodes_fate[i].time_us == full.nodes_fate[i].time_us);
    CHECK(facts.nodes_fate[i].weight_bytes == full.nodes_fate[i].weight_bytes);
  }
  CHECK(facts.memory.peak_activation_bytes == full.memory.peak_activation_bytes);
  CHECK(facts.by_op.empty());

  CHECK(groups.nodes_fate.empty());
  REQUIRE(groups.by_op.size() == full.by_op.size());
  for (size_t i = 0; i < full.by_op.size(); ++i) {
    CHECK(groups.by_op[i].name == full.by_op[i].name);
    CHECK(groups.by_op[i].time_us == full.by_op[i].time_us);
  }
  CHECK(groups.by_name.size() == full.by_name.size());
  CHECK(groups.by_bound.size() == full.by_bound.size());
  for (size_t k = 0; k < full.kernels.size(); ++k) CHECK(groups.kernels[k].op_group == full.kernels[k].op_group);
}

TEST_CASE("result parts: rank analyses its models for their totals alone") {
  RunOptions o;
  o.gpu_dir = test::gpu_dir();
  o.execution = {{"launch", "graph"}};
  const RankRun run = analyze_models({test::zoo("resnet18.onnx"), test::zoo("mobilenet_v2.onnx")}, o, 1);
  REQUIRE(run.analyses.size() == 2);
  for (const Analysis& a : run.analyses) {
    CHECK_FALSE(a.parts.node_facts);
    CHECK_FALSE(a.parts.groupings);
    CHECK(a.nodes_fate.empty());
    CHECK(a.by_op.empty());
    CHECK(a.total.time_us > 0);
  }
}

TEST_CASE("one CostModel per analysis, under every runtime and launch") {
  const GpuModel gpu = test::gpu("h200");
  const ModelFile model(test::zoo("resnet18.onnx"));
  for (const char* runtime : {"eager", "inductor", "tensorrt"})
    for (Launch launch : {Launch::graph, Launch::loop})
      for (ResultParts parts : {ResultParts{}, kTotalsOnly}) {
        CAPTURE(runtime);
        AnalyzeOptions o = options_for(runtime, parts);
        o.exec.launch = launch;
        const int64_t before = CostModel::built_on_this_thread();
        const Analysis a = model.analyze(gpu, o);
        CHECK(CostModel::built_on_this_thread() - before == 1);
        CHECK(a.total.time_us > 0);
      }
}
