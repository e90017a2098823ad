// The execution configuration, the layout and precision passes and the
// schedule stage (docs/model.md "Execution configuration", "Passes", "Schedule").
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/comparison.h"
#include "tilewave/error.h"
#include "tilewave/network_cost.h"
#include "tilewave/schedule.h"
#include "tilewave/pipeline.h"
#include "tilewave/run_options.h"
#include "tilewave/exec_options.h"

using namespace tilewave;

namespace {

HostModel host_with(double op_us, double latency_us, double sync_us) {
  HostModel h = builtin_host();
  for (auto& [k, v] : h.params) v = 0;
  h.params["host_op_us"] = op_us;
  h.params["launch_latency_us"] = latency_us;
  h.params["sync_us"] = sync_us;
  return h;
}

KernelGraph lower(const ExecutionConfig& e, int64_t batch = 2) {
  LoadOptions o;
  o.batch = batch;
  const Model m = load_onnx(test::data("tiny_cnn.onnx"), o);
  return lower_model(m, e);
}

int count_ops(const KernelGraph& l, const std::string& ops) {
  return int(std::count_if(l.kernels.begin(), l.kernels.end(), [&](const Kernel& k) { return k.ops.text() == ops; }));
}

}  // namespace

TEST_CASE("schedule: graph replay is the kernels back to back, each after the launch gap") {
  const std::vector<LaunchItem> items = {{5.0, HostCall::op}, {3.0, HostCall::op}, {2.0, HostCall::inner}};
  const Schedule s = schedule_step(items, Launch::graph, host_with(100, 4, 8), 0.5);
  CHECK(s.step_us == doctest::Approx(10.0 + 3 * 0.5));
  CHECK(s.gpu_busy_us == doctest::Approx(10.0));
  CHECK(s.gpu_idle_us == doctest::Approx(1.5));
  CHECK_FALSE(s.host_bound);
  CHECK(s.kernels[1].gpu_start_us == doctest::Approx(5.5 + 0.5));
}

TEST_CASE("schedule: in a plain loop a slow host sets the step, a fast one leaves it to the GPU") {
  const std::vector<LaunchItem> items(10, {2.0, HostCall::op});
  // Host 10 µs per op against 2 µs kernels: the GPU waits on every launch.
  const Schedule slow = schedule_step(items, Launch::loop, host_with(10, 4, 8), 0.5);
  CHECK(slow.host_bound);
  CHECK(slow.host_busy_us == doctest::Approx(100));
  CHECK(slow.step_us == doctest::Approx(100 + 4 + 2 + 8));  // last launch + latency + kernel + sync
  CHECK(slow.kernels[3].gpu_wait_us == doctest::Approx(8));  // 10 µs between launches, 2 µs of work
  // Host 1 µs per op: the queue fills and the GPU runs back to back.
  const Schedule fast = schedule_step(items, Launch::loop, host_with(1, 4, 8), 0.5);
  CHECK_FALSE(fast.host_bound);
  CHECK(fast.step_us == doctest::Approx(1 + 4 + 20 + 8));
  CHECK(fast.gpu_idle_us == doctest::Approx(fast.step_us - 20));
}

TEST_CASE("schedule: each view op before a kernel costs the host host_view_us, never the GPU or a replay") {
  // Two kernels, the second after a reshape and a permute (docs/model.md "Schedule").
  std::vector<LaunchItem> items = {{2.0, HostCall::op}, {2.0, HostCall::op}};
  HostModel h = host_with(10, 4, 8);
  h.params["host_view_us"] = 3;
  const Schedule without = schedule_step(items, Launch::loop, h, 0.5);
  items[1].host_views = 2;
  const Schedule with = schedule_step(items, Launch::loop, h, 0.5);
  CHECK(with.host_busy_us - without.host_busy_us == doctest::Approx(6));
  CHECK(with.kernels[1].host_start_us == doctest::Approx(without.kernels[1].host_start_us));
  CHECK(with.kernels[1].host_end_us - without.kernels[1].host_end_us == doctest::Approx(6));
  CHECK(with.gpu_busy_us == doctest::Approx(without.gpu_busy_us));
  // A CUDA graph replays kernels only: the views are gone with the host.
  CHECK(schedule_step(items, Launch::graph, h, 0.5).step_us == doctest::Approx(4.0 + 2 * 0.5));
}

TEST_CASE("execution configuration: one JSON form, parsed back; bad values name the option") {
  ExecutionConfig e;
  e.runtime = find_runtime("inductor");
  e.amp = true;
  e.layout = Layout::nchw;
  e.launch = Launch::loop;
  const ExecutionConfig back = execution_from_json(e.to_json(), "test");
  CHECK(back.name() == e.name());
  CHECK(e.name() == "inductor nchw amp-fp16 loop");
  CHECK(e.params_key() == "inductor nchw amp");
  CHECK_THROWS_WITH_AS(execution_from_json({{"layout", "nwhc"}}, "--layout"),
                       doctest::Contains("unknown layout 'nwhc'"), InputError);
  CHECK_THROWS_WITH_AS(execution_from_json({{"dtype", "int8"}, {"amp", true}}, "options"),
                       doctest::Contains("amp autocasts to fp16 or bf16"), InputError);
  CHECK_THROWS_AS(execution_from_json({{"amp", "yes"}}, "options"), InputError);
}

TEST_CASE("execution configuration: the defaults are each runtime's, as timm's harness runs PyTorch") {
  const ExecutionConfig plain = execution_from_json(nlohmann::json::object(), "options");
  CHECK(plain.name() == "eager nchw amp-fp16 loop");
  CHECK(ExecutionConfig{}.name() == plain.name());
  CHECK(execution_from_json({{"runtime", "inductor"}}, "options").name() == "inductor nchw amp-fp16 loop");
  CHECK(execution_from_json({{"runtime", "tensorrt"}}, "options").name() == "tensorrt nhwc fp16 graph");
  // fp32 is PyTorch's fp32 (TF32 convolutions), not autocast.
  CHECK(execution_from_json({{"dtype", "fp32"}}, "options").name() == "eager nchw fp32 loop");
  CHECK(execution_from_json({{"dtype", "bf16"}}, "options").name() == "eager nchw amp-bf16 loop");
  // A key given wins over the runtime's default.
  CHECK(execution_from_json({{"runtime", "tensorrt"}, {"launch", "loop"}}, "options").launch == Launch::loop);
  CHECK(execution_from_json({{"layout", "nhwc"}, {"amp", false}, {"launch", "graph"}}, "options").name() ==
        "eager nhwc fp16 graph");
  CHECK(cuda_graph_harness(default_runtime(), DType::fp16).name() == "eager nhwc fp16 graph");
}

TEST_CASE("precision pass: autocast casts every weight and the fp32 input on every forward") {
  ExecutionConfig half;
  half.amp = false;
  const KernelGraph plain = lower(half);
  ExecutionConfig amp = half;
  amp.amp = true;
  const KernelGraph cast = lower(amp);
  // tiny_cnn: two convs and a Gemm, each with a weight; the Gemm's bias is its own,
  // the first conv's input is the graph input.
  CHECK(count_ops(plain, "cast") == 0);
  CHECK(count_ops(cast, "cast") == 3 + 1 + 1);
  // BatchNorm over fp16 activations with fp32 parameters is cuDNN's one kernel.
  CHECK(count_ops(cast, "bn_prep") == 0);
  for (const auto& k : cast.kernels)
    if (k.ops.is(RuntimeStep::cast)) {
      CHECK(k.host_call == HostCall::cast);
      CHECK(k.layer->input_dtype == DType::fp32);
      CHECK(min_bytes(*k.layer) == std::get<MemoryProblem>(k.layer->problem).elems * (4 + 2));
    }
  // PyTorch's fp32 default: convolutions in TF32.
  ExecutionConfig fp32 = half;
  fp32.dtype = DType::fp32;
  for (const auto& k : lower(fp32).kernels)
    if (k.layer && std::holds_alternative<ConvProblem>(k.layer->problem)) CHECK(k.layer->dtype == DType::tf32);
}

TEST_CASE("layout pass: NCHW wraps tensor-core 3x3 convs in cuDNN's transforms, not the RGB stem") {
  ExecutionConfig nhwc;
  nhwc.layout = Layout::nhwc;
  ExecutionConfig nchw = nhwc;
  nchw.layout = Layout::nchw;
  const KernelGraph a = lower(nhwc), b = lower(nchw);
  CHECK(count_ops(a, "layout_transform") == 0);
  // tiny_cnn's second conv (16 channels, 3x3) gets input, filter and output transforms.
  CHECK(count_ops(b, "layout_transform") == 3);
  for (const auto& k : b.kernels) {
    if (k.ops.is(RuntimeStep::layout_transform)) CHECK(k.host_call == HostCall::inner);
    for (const auto& r : k.reads) CHECK((r.layout == Layout::nchw || r.name.find("#nhwc") != std::string::npos));
  }
}

TEST_CASE("analysis: a plain loop on the calibrated host says host-bound at batch 1, and keeps both timelines") {
  AnalyzeOptions o;
  o.load.batch = 1;
  o.exec.amp = true;
  o.exec.layout = Layout::nchw;
  o.exec.launch = Launch::loop;
  o.host = std::make_shared<const HostModel>(load_host("h200-vm", test::gpu_dir()));
  const Analysis a = analyze_file(test::zoo("resnet50.onnx"), test::gpu("h200"), o);
  CHECK(a.total.host_bound);
  CHECK(a.host_trust == "calibrated");
  CHECK(a.total.time_us > a.total.gpu_busy_us);
  CHECK(a.schedule.kernels.size() == size_t(a.total.kernels));
  CHECK(a.total.losses.idle > 0.5);
  double sum = a.total.utilization + a.total.losses.tile + a.total.losses.wave + a.total.losses.efficiency +
               a.total.losses.memory + a.total.losses.fixed + a.total.losses.idle;
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
  // Graph replay of the same kernels: no host, step = kernels + gaps.
  o.exec.launch = Launch::graph;
  const Analysis g = analyze_file(test::zoo("resnet50.onnx"), test::gpu("h200"), o);
  CHECK_FALSE(g.total.host_bound);
  CHECK(g.total.time_us == doctest::Approx(g.total.gpu_busy_us + g.total.kernels * g.launch_gap_us));
  CHECK(g.total.time_us < a.total.time_us);
  // What bounds the step: the host in the loop; under graph replay the
  // kernels' bound with the most device time (docs/model.md "Schedule").
  CHECK(a.total.bound == "host");
  CHECK(g.total.bound != "host");
  std::map<std::string, double> by_bound;
  for (const auto& k : g.kernels)
    if (k.cost) by_bound[bound_name(k.cost->bound)] += k.cost->time_us;
  const auto most = std::max_element(by_bound.begin(), by_bound.end(),
                                     [](const auto& x, const auto& y) { return x.second < y.second; });
  CHECK(g.total.bound == most->first);
}

TEST_CASE("step bound: the host when it issues longer than the GPU works, else the kernels' largest bound") {
  NetworkTotals t;
  CHECK(std::string(t.bound()) == "latency");  // no kernel time: fixed costs alone
  t.busy_us_by_bound[size_t(Bound::memory)] = 30;
  t.busy_us_by_bound[size_t(Bound::cuda_core)] = 20;
  t.busy_us_by_bound[size_t(Bound::compute)] = 25;
  CHECK(std::string(t.bound()) == "memory");
  NetworkTotals more;
  more.busy_us_by_bound[size_t(Bound::cuda_core)] = 40;
  t += more;  // search-space blocks add up
  CHECK(std::string(t.bound()) == "cuda-core");
  t.host_bound = true;
  CHECK(std::string(t.bound()) == "host");
  // Ties go to the earlier bound: compute before memory.
  NetworkTotals tie;
  tie.busy_us_by_bound[size_t(Bound::compute)] = tie.busy_us_by_bound[size_t(Bound::memory)] = 10;
  CHECK(std::string(tie.bound()) == "compute");
}

TEST_CASE("host descriptions: bad ids, files and values are one clear error") {
  nlohmann::json g = nlohmann::json::parse(std::ifstream(test::gpu_dir() + "/h200.json"));
  // The host is chosen per run, never by a GPU file (docs/model.md "Schedule").
  g["host"] = "h200-vm";
  CHECK_THROWS_WITH_AS(gpu_from_json(g, "h200", "h200.json", test::gpu_dir() + "/arch"),
                       doctest::Contains("does not choose the host"), InputError);
  CHECK_THROWS_WITH_AS(load_host(test::gpu_dir() + "/hosts/no_such_host.json", test::gpu_dir()),
                       doctest::Contains("no such host"), InputError);
  CHECK_THROWS_WITH_AS(load_host("no_such_host", test::gpu_dir()), doctest::Contains("no such host"), InputError);
  CHECK_THROWS_WITH_AS(load_host(test::gpu_dir() + "/h200.json", test::gpu_dir()),
                       doctest::Contains("unknown host parameter"), InputError);
  CHECK_THROWS_WITH_AS(load_host("no such", test::gpu_dir()), doctest::Contains("not a host id"), InputError);
  CHECK_THROWS_WITH_AS(load_host("/proc/self", test::gpu_dir()), doctest::Contains("not a regular file"), InputError);
  CHECK_THROWS_WITH_AS(host_from_json({{"params", {{"host_op_us", -1}}}}, "x", "x.json"),
                       doctest::Contains("host_op_us"), InputError);
  CHECK_THROWS_WITH_AS(host_from_json({{"params", {{"host_teleport_us", 1}}}}, "x", "x.json"),
                       doctest::Contains("unknown host parameter"), InputError);
  // Each value is held to host_param_table()'s bounds, the ones the host fit keeps to.
  for (const auto& p : host_param_table()) {
    CHECK_NOTHROW(host_from_json({{"params", {{p.name, p.fit_max}}}}, "x", "x.json"));
    CHECK_THROWS_WITH_AS(host_from_json({{"params", {{p.name, p.fit_max * 1.01 + 1}}}}, "x", "x.json"),
                         doctest::Contains(p.name), InputError);
  }
  for (const nlohmann::json& spread : {nlohmann::json{{"low", 1.2}, {"high", 1.5}}, nlohmann::json{{"low", 0.9}},
                                       nlohmann::json{{"low", 0.5}, {"high", 0.9}}, nlohmann::json{{"low", 1}, {"high", 1e9}},
                                       nlohmann::json("wide")})
    CHECK_THROWS_WITH_AS(host_from_json({{"machine_spread", spread}}, "x", "x.json"),
                         doctest::Contains("machine_spread"), InputError);
  CHECK(load_host("builtin", test::gpu_dir()).trust == "default");
}

TEST_CASE("schedule: a host's machine spread is the same loop issued that many times as slow") {
  HostModel host = host_with(10, 4, 8);
  host.spread_low = 0.8;
  host.spread_high = 1.5;
  // Host-bound at first, then a long kernel the host waits on.
  const std::vector<LaunchItem> items = {{2, HostCall::op}, {3, HostCall::op}, {200, HostCall::op}, {1, HostCall::op}};
  const Schedule s = schedule_step(items, Launch::loop, host, 1.0);
  HostModel slow = host_with(15, 4, 8), fast = host_with(8, 4, 8);
  CHECK(s.step_high_us == doctest::Approx(schedule_step(items, Launch::loop, slow, 1.0).step_us));
  CHECK(s.step_low_us == doctest::Approx(schedule_step(items, Launch::loop, fast, 1.0).step_us));
  CHECK(s.step_low_us < s.step_us);
  CHECK(s.step_us < s.step_high_us);
  // The timeline stays this host's.
  const Schedule alone = schedule_step(items, Launch::loop, host_with(10, 4, 8), 1.0);
  CHECK(s.step_us == alone.step_us);
  CHECK(s.host_busy_us == alone.host_busy_us);
  CHECK(s.kernels.back().gpu_end_us == alone.kernels.back().gpu_end_us);
  // Graph replay needs no host: no range.
  const Schedule g = schedule_step(items, Launch::graph, host, 1.0);
  CHECK(g.step_low_us == g.step_us);
  CHECK(g.step_high_us == g.step_us);
}

TEST_CASE("analysis: the default host's measured spread is a range around a host-bound step") {
  AnalyzeOptions o;
  o.load.batch = 1;
  o.exec.launch = Launch::loop;
  o.host = std::make_shared<const HostModel>(load_host(default_host_id(), test::gpu_dir()));
  REQUIRE(o.host->spread_high > 1);
  const Analysis a = analyze_file(test::zoo("resnet50.onnx"), test::gpu("l4"), o);
  REQUIRE(a.total.host_bound);
  CHECK(a.total.time_low_us <= a.total.time_us);
  CHECK(a.total.time_high_us > a.total.time_us);
  CHECK(a.host_spread_high == o.host->spread_high);
}

TEST_CASE("the host is one axis: compare and report give a GPU the same time in any --gpu order") {
  RunOptions o;
  o.gpu_dir = test::gpu_dir();
  o.batch = 1;  // host-bound on every GPU: the host decides the step
  const std::string model = test::zoo("resnet50.onnx");
  std::map<std::string, double> first;
  for (const std::vector<std::string>& gpus : {std::vector<std::string>{"h200", "l4", "a100"},
                                               std::vector<std::string>{"a100", "h200", "l4"}}) {
    CompareAxes axes;
    axes.gpus = gpus;
    for (const Analysis& a : compare_models({model}, o, axes).analyses) {
      CHECK(a.host_id == default_host_id());
      if (!first.count(a.gpu_id)) first[a.gpu_id] = a.total.time_us;
      CHECK(a.total.time_us == first[a.gpu_id]);
    }
    RunOptions r = o;
    r.gpu = gpus[0] + "," + gpus[1] + "," + gpus[2];
    const ReportRun report = analyze_for_report(model, "", r, {1}, {});
    CHECK(report.first.main.total.time_us == first[gpus[0]]);
    REQUIRE(report.first.other_gpus.size() == 2);
    for (const Analysis& a : report.first.other_gpus) {
      CHECK(a.host_id == default_host_id());
      CHECK(a.total.time_us == first[a.gpu_id]);
    }
    // The GPUs' verdict names the fastest first, whatever the order given.
    const Analysis* fastest = &report.first.main;
    for (const Analysis& a : report.first.other_gpus)
      if (a.total.throughput_per_s > fastest->total.throughput_per_s) fastest = &a;
    CHECK(report.first.fastest_gpu.rfind("Fastest on " + fastest->gpu_name + ": ", 0) == 0);
    size_t listed = 0;  // each GPU with its throughput
    for (size_t at = 0; (at = report.first.fastest_gpu.find(" samples/s", at)) != std::string::npos; ++at) ++listed;
    CHECK(listed == 3);
    // The throughput-vs-batch chart's line of each compared GPU: that GPU over the report's batches.
    REQUIRE(report.first.other_gpu_sweeps.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      REQUIRE(report.first.other_gpu_sweeps[i].size() == 1);
      CHECK(report.first.other_gpu_sweeps[i][0].gpu_id == report.first.other_gpus[i].gpu_id);
      CHECK(report.first.other_gpu_sweeps[i][0].total.time_us == report.first.other_gpus[i].total.time_us);
    }
  }
  // A named host applies to every GPU alike.
  o.host = "builtin";
  CompareAxes axes;
  axes.gpus = {"h200", "l4"};
  for (const Analysis& a : compare_models({model}, o, axes).analyses) CHECK(a.host_id == "builtin");
}

TEST_CASE("two networks: the comparison leads with which is faster and why, whichever uses the GPU better") {
  RunOptions o;
  o.gpu_dir = test::gpu_dir();
  CompareAxes axes;
  axes.gpus = {"h200"};
  // Batch 64: at 16 the two are within 4% of each other, and which is faster
  // turns on any change of the elementwise terms.
  axes.batches = {64};
  axes.layouts = {"nhwc"};
  o.execution["launch"] = "graph";
  o.execution["amp"] = false;
  const auto run = compare_models({test::zoo("resnet50.onnx"), test::zoo("efficientnet_b0.onnx")}, o, axes);
  REQUIRE(run.networks);
  const NetworkComparison& c = *run.networks;
  const Analysis &a = run.analyses[0], &b = run.analyses[1];
  const Analysis &fast = c.a_faster ? a : b, &slow = c.a_faster ? b : a;
  CHECK(c.a_faster == (a.total.throughput_per_s >= b.total.throughput_per_s));
  CHECK(c.throughput_ratio == doctest::Approx(fast.total.throughput_per_s / slow.total.throughput_per_s));
  CHECK(c.faster.rfind(fast.model_name + " is ", 0) == 0);
  CHECK(c.faster.find(fmt::format("{:.0f} samples/s against {:.0f}", fast.total.throughput_per_s,
                                  slow.total.throughput_per_s)) != std::string::npos);
  REQUIRE(c.findings.size() >= 2);
  // Why: what sets each step, then utilization against the FLOPs per sample.
  CHECK(c.findings[0].find("-bound") != std::string::npos);
  CHECK(c.findings[1].find("FLOPs per sample") != std::string::npos);
  // Issue 33's case: EfficientNet-B0 is the faster while ResNet-50 uses the GPU better; the FLOPs per
  // sample decide, and the finding says so instead of leading with the utilization.
  INFO(c.faster);
  REQUIRE(!c.a_faster);
  REQUIRE(c.a_better);
  CHECK(c.findings[1].find("more than makes up for it") != std::string::npos);
}

// Issue 34 item 1: the option table (exec_options.h) is the one list of
// execution options; the front ends set them through it.
TEST_CASE("the option table: its defaults are RunOptions', and every value is checked once, there") {
  const RunOptions defaults;
  for (const ExecOption& e : execution_options()) {
    RunOptions o;
    o.option_prefix = "";
    // A default the table states is the one a RunOptions has when nothing is given.
    if (e.default_value.size() > 1 && e.default_value.front() == '"') {
      const std::string v = e.default_value.substr(1, e.default_value.size() - 2);
      set_option(o, e, v);
      CHECK(execution_of(o).to_json() == execution_of(defaults).to_json());
      CHECK(o.gpu == defaults.gpu);
    }
    if (!e.choices.empty()) {
      const std::string message = e.keyword + ": unknown " + e.keyword + " 'nope'";
      CHECK_THROWS_WITH_AS(set_option(o, e, "nope"), doctest::Contains(message.c_str()), InputError);
    }
    if (e.kind == OptionKind::on_off) {
      CHECK_THROWS_AS(set_option(o, e, "yes"), InputError);
      CHECK(cli_off_flag(e) == "--no-" + e.keyword);
    }
  }
  RunOptions o;
  set_options(o, {{"graph", true}, {"amp", false}, {"layout", "nhwc"}, {"attention", "unfused"},
                  {"input", {"x=2x3x8x8"}}, {"gpu_dir", "g"}}, "analyze");
  const ExecutionConfig exec = execution_of(o);
  CHECK(exec.launch == Launch::graph);
  CHECK(!exec.amp);
  CHECK(exec.layout == Layout::nhwc);
  CHECK(!exec.fuse_attention);
  CHECK(o.input_shapes.at("x") == std::vector<int64_t>{2, 3, 8, 8});
  CHECK(o.gpu_dir == "g");
  // A command takes only its options; compare's axes are lists.
  CHECK_THROWS_AS(set_options(o, {{"input", {"x=1x3"}}}, "nas"), UsageError);
  CHECK_THROWS_AS(set_options(o, {{"gpuu", "h200"}}, "analyze"), UsageError);
  CompareAxes axes;
  set_options(o, {{"gpus", "h200,l4"}, {"layouts", {"nhwc"}}, {"graph", false}}, "compare", &axes);
  CHECK(axes.gpus == std::vector<std::string>{"h200", "l4"});
  CHECK(axes.layouts == std::vector<std::string>{"nhwc"});
  CHECK(execution_of(o).launch == Launch::loop);
  CHECK_THROWS_WITH_AS(set_options(o, {{"dtypes", "fp16,fp13"}}, "compare", &axes),
                       doctest::Contains("--dtype: unknown dtype 'fp13'"), InputError);
}
