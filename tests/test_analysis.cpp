// The result stage: the parts of an Analysis built on request (docs/model.md
// "Result parts") and the one CostModel an analysis resolves (docs/model.md "Pipeline").
#include <algorithm>
#include <sstream>

#include <doctest/doctest.h>

#include "onnx_builder.h"
#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/lowering.h"
#include "tilewave/report.h"
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

TEST_CASE("result parts: sweep's batches are totals alone, with the totals a whole analysis gives") {
  RunOptions o;
  o.gpu_dir = test::gpu_dir();
  const ModelFile model(test::zoo("resnet18.onnx"));
  const std::vector<Analysis> swept = analyze_batches(model, o, {1, 16});
  REQUIRE(swept.size() == 2);
  for (const Analysis& a : swept) {
    CAPTURE(a.batch);
    CHECK_FALSE(a.parts.node_facts);
    CHECK_FALSE(a.parts.groupings);
    CHECK(a.nodes_fate.empty());
    RunOptions ob = o;
    ob.batch = a.batch;
    check_same_totals(model.analyze(gpu_of(ob), analyze_options(ob)), a);
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

TEST_CASE("the 80% interval: the GPU file's percentiles of its regime and class, none when unmeasured or partial") {
  // docs/model.md "Prediction intervals".
  GpuModel gpu = test::gpu("h200");
  for (auto& [key, set] : gpu.runtime_params)  // only the pairs set below
    for (auto it = set.begin(); it != set.end();) it = it->first.rfind("interval_", 0) == 0 ? set.erase(it) : std::next(it);
  gpu.runtime_params["eager"]["interval_loop_host_no_attention_low"] = 1.1;
  gpu.runtime_params["eager"]["interval_loop_host_no_attention_high"] = 1.9;
  gpu.runtime_params["eager"]["interval_graph_no_attention_low"] = 0.8;
  gpu.runtime_params["eager"]["interval_graph_no_attention_high"] = 1.3;
  gpu.runtime_params["eager"]["interval_graph_attention_low"] = 0.7;
  gpu.runtime_params["eager"]["interval_graph_attention_high"] = 1.6;
  AnalyzeOptions o = options_for("eager", kTotalsOnly);
  o.load.batch = 1;
  o.host = std::make_shared<HostModel>(load_host(default_host_id(), test::gpu_dir()));
  const Analysis loop = analyze_file(test::zoo("resnet18.onnx"), gpu, o);
  REQUIRE(loop.total.host_bound);
  CHECK(loop.interval.regime == "loop_host");
  CHECK(loop.interval.network_class == "no_attention");
  CHECK(loop.interval.measured());
  CHECK(loop.interval.low_us == doctest::Approx(1.1 * loop.total.time_us));
  CHECK(loop.interval.high_us == doctest::Approx(1.9 * loop.total.time_us));
  // A host-bound step's percentiles hold for the host the corpus was timed with, not for another.
  AnalyzeOptions other_host = o;
  other_host.host = std::make_shared<HostModel>(builtin_host());
  const Analysis elsewhere = analyze_file(test::zoo("resnet18.onnx"), gpu, other_host);
  CHECK_FALSE(elsewhere.interval.measured());
  CHECK(elsewhere.interval.why_none.find("host builtin") != std::string::npos);

  o.exec.launch = Launch::graph;
  const Analysis graph = analyze_file(test::zoo("resnet18.onnx"), gpu, o);
  CHECK(graph.interval.regime == "graph");
  CHECK(graph.interval.low_us == doctest::Approx(0.8 * graph.total.time_us));
  CHECK(graph.interval.basis == "held-out networks");
  // A carried file's percentiles were measured on another GPU carried the same way, and it says so.
  GpuModel carried = gpu;
  carried.trust = Trust::carried_over;
  CHECK(analyze_file(test::zoo("resnet18.onnx"), carried, o).interval.basis == "networks on a GPU carried over");

  // A softmax makes a network one with attention.
  test::OnnxBuilder b(13);
  b.input("x", {4, 3, 49, 49});
  test::OnnxBuilder::attr(b.node("Softmax", {"x"}, {"y"}), "axis", int64_t(-1));
  b.output("y");
  const Analysis scores = analyze_model(b.load_batch(4), gpu, o);
  CHECK(scores.interval.network_class == "attention");
  CHECK(scores.interval.high_us == doctest::Approx(1.6 * scores.total.time_us));

  // The GPU-bound loop regime is not in the file: no interval, and the views say so.
  o.exec.launch = Launch::loop;
  o.load.batch = 256;
  const Analysis big = analyze_file(test::zoo("resnet18.onnx"), gpu, o);
  REQUIRE_FALSE(big.total.host_bound);
  CHECK(big.interval.regime == "loop_gpu");
  CHECK_FALSE(big.interval.measured());
  CHECK(big.interval.low_us == 0);
  CHECK(big.interval.why_none == "h200's file measured none under eager");
  // A GPU-bound step keeps its interval on another host.
  gpu.runtime_params["eager"]["interval_loop_gpu_no_attention_low"] = 0.9;
  gpu.runtime_params["eager"]["interval_loop_gpu_no_attention_high"] = 1.4;
  AnalyzeOptions big_elsewhere = o;
  big_elsewhere.host = std::make_shared<HostModel>(builtin_host());
  const Analysis gpu_bound = analyze_file(test::zoo("resnet18.onnx"), gpu, big_elsewhere);
  REQUIRE_FALSE(gpu_bound.total.host_bound);
  CHECK(gpu_bound.interval.high_us == doctest::Approx(1.4 * gpu_bound.total.time_us));
  // A partial answer's time is not the step's: it states none.
  const Analysis partial = analyze_file(test::data("unknown_op.onnx"), gpu, o);
  REQUIRE(partial.partial);
  CHECK_FALSE(partial.interval.measured());
  CHECK(partial.interval.why_none == "a partial answer");
  // A GPU file whose percentiles are out of order states none.
  gpu.runtime_params["eager"]["interval_loop_host_no_attention_low"] = 2.5;
  o.load.batch = 1;
  CHECK_FALSE(analyze_file(test::zoo("resnet18.onnx"), gpu, o).interval.measured());
}

TEST_CASE("result parts: a view that reads a part refuses an analysis built without it") {
  const GpuModel gpu = test::gpu("h200");
  const std::string path = test::zoo("resnet18.onnx");
  const Analysis light = analyze_file(path, gpu, options_for("eager", kTotalsOnly));
  const Analysis full = analyze_file(path, gpu, options_for("eager", ResultParts{}));
  std::ostringstream out;
  CHECK_THROWS_WITH_AS(write_json(out, light), doctest::Contains("the JSON view reads result parts"), std::logic_error);
  CHECK_THROWS_AS(write_table(out, light), std::logic_error);
  CHECK_THROWS_AS(write_csv(out, light), std::logic_error);
  CHECK_THROWS_AS(annotated_onnx(path, light), std::logic_error);
  // Node facts alone serve annotate; the CSV's kernel rows need the groupings.
  const Analysis facts = analyze_file(path, gpu, options_for("eager", ResultParts{true, false}));
  CHECK_NOTHROW(annotated_onnx(path, facts));
  CHECK_THROWS_AS(write_csv(out, facts, "node"), std::logic_error);
  CHECK_NOTHROW(write_json(out, full));
  CHECK_NOTHROW(write_table(out, full));
  CHECK_NOTHROW(write_csv(out, full, "node"));
}
