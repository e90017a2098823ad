// The fit recovers parameters from synthetic measurements made with known ones.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/calibration.h"
#include "tilewave/error.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/pipeline.h"
#include "tilewave/ranking.h"

using namespace tilewave;

namespace {

std::vector<Measurement> synthetic(const GpuModel& truth, int n, unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::initializer_list<int64_t> xs) { return *(xs.begin() + rng() % xs.size()); };
  std::vector<Measurement> out;
  for (int i = 0; i < n; ++i) {
    Layer l;
    switch (i % 4) {
      case 0:
        l.problem = GemmProblem{pick({64, 127, 256, 1000, 2048, 4096}), pick({64, 128, 255, 512, 3000, 4096}),
                                pick({64, 256, 1024, 4095, 4096}), 1};
        break;
      case 1: {
        ConvProblem p;
        p.N = pick({1, 8, 32});
        p.C = pick({32, 64, 256});
        p.K = pick({64, 128, 512});
        p.H = p.W = pick({7, 14, 56});
        p.R = p.S = pick({1, 3});
        p.pad = {p.R / 2, p.S / 2};
        l.problem = p;
        break;
      }
      default: {
        MemoryProblem m;
        m.op = MemoryOp::eltwise;
        m.elems = pick({1000, 100000, 1000000, 10000000, 50000000});
        m.inputs = pick({1, 2});
        l.problem = m;
      }
    }
    Measurement m;
    m.entry.layer = l;
    m.op_class = op_class(l);
    m.measured_us = cost_layer(l, truth).time_us;
    out.push_back(m);
  }
  return out;
}

}  // namespace

TEST_CASE("fit recovers known parameters from synthetic measurements") {
  GpuModel truth = test::gpu("h200");
  truth.params["tc_efficiency"] = 0.62;
  truth.params["fixed_us_gemm"] = 4.5;
  truth.params["fixed_us_memory"] = 1.5;
  truth.params["eltwise_bw_efficiency"] = 0.7;
  truth.params["misaligned_efficiency"] = 0.3;
  const auto data = synthetic(truth, 240, 7);
  const Split split = holdout_split(data.size(), 0.2, 1);
  CHECK(split.test.size() == 48);

  const GpuModel start = test::gpu("h200");
  const auto before = error_stats(start, data, split.test);
  const int64_t built_before = CostModel::built_on_this_thread();
  const FitResult fit = fit_parameters(start, data, split.train);
  // The parameters are looked up once per candidate, not once per layer.
  CHECK(CostModel::built_on_this_thread() - built_before == fit.evaluations);
  GpuModel fitted = start;
  for (const auto& [k, v] : fit.params) fitted.params[k] = v;
  const auto after = error_stats(fitted, data, split.test);

  CHECK(after.back().median_ape < 0.02);
  CHECK(after.back().median_ape < before.back().median_ape);
  CHECK(fitted.param("tc_efficiency") == doctest::Approx(0.62).epsilon(0.05));
  CHECK(fitted.param("fixed_us_gemm") == doctest::Approx(4.5).epsilon(0.1));
  CHECK(fitted.param("eltwise_bw_efficiency") == doctest::Approx(0.7).epsilon(0.05));
  CHECK(fitted.param("fixed_us_memory") == doctest::Approx(1.5).epsilon(0.1));
}

TEST_CASE("hold-out split is deterministic and disjoint") {
  const Split a = holdout_split(100, 0.2, 3), b = holdout_split(100, 0.2, 3);
  CHECK(a.test == b.test);
  CHECK(a.test.size() == 20);
  CHECK(a.train.size() == 80);
  std::vector<bool> seen(100, false);
  for (auto i : a.test) seen[i] = true;
  for (auto i : a.train) CHECK_FALSE(seen[i]);
}

TEST_CASE("Spearman rank correlation") {
  CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1.0));
  CHECK(spearman({1, 2, 3, 4}, {40, 30, 20, 10}) == doctest::Approx(-1.0));
  CHECK(spearman({1, 2, 3}, {1, 3, 2}) == doctest::Approx(0.5));
}

TEST_CASE("network runs: one runtime's ok lines, '/' in names maps to '_', bad lines name file and line") {
  const std::string dir = std::string(TILEWAVE_ONNX_MODELS) + "/runtime";
  const std::string good = test::write_temp(
      "tw_runs.jsonl",
      "{\"header\": true}\n"
      "{\"model\": \"timm/dla34\", \"runtime\": \"eager\", \"batch\": 16, \"status\": \"ok\", \"latency_ms\": 1.3}\n"
      "{\"model\": \"resnet18\", \"runtime\": \"inductor\", \"batch\": 1, \"status\": \"ok\", \"latency_ms\": 0.2}\n"
      "{\"model\": \"resnet18\", \"runtime\": \"eager\", \"batch\": 1, \"status\": \"skipped\"}\n"
      "{\"model\": \"no_such_net\", \"runtime\": \"eager\", \"batch\": 1, \"status\": \"ok\", \"latency_ms\": 0.2}\n");
  std::vector<std::string> skipped;
  const auto runs = read_network_runs(good, dir, "eager", &skipped);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].name == "timm/dla34");
  CHECK(runs[0].model.batch == 16);
  CHECK(runs[0].measured_us == doctest::Approx(1300));
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].find("no_such_net") != std::string::npos);
  const std::string bad = test::write_temp("tw_runs_bad.jsonl", "{\"model\": \"x\", \"status\": \"ok\"}\n");
  CHECK_THROWS_WITH_AS(read_network_runs(bad, dir, "", nullptr),
                       (bad + ":1: needs model (a string), batch and latency_ms (numbers)").c_str(), InputError);
  const std::string not_json = test::write_temp("tw_runs_nj.jsonl", "\n[1, 2]\n");
  CHECK_THROWS_WITH_AS(read_network_runs(not_json, dir, "", nullptr), (not_json + ":2: not a JSON object").c_str(),
                       InputError);
}

TEST_CASE("fit-runtime recovers a known launch gap, starting from the base set whatever the file holds") {
  const std::string dir = std::string(TILEWAVE_ONNX_MODELS) + "/runtime";
  GpuModel gpu = test::gpu("h200");
  const RuntimeProfile& eager = *find_runtime("eager");
  // Synthetic truth: the base set with a 3 µs launch gap. The fit starts from
  // the base set whatever eager set the file holds.
  GpuModel base = gpu;
  base.runtime_params.clear();
  GpuModel truth = base.for_runtime("eager");
  truth.params["launch_gap_us"] = 3.0;
  std::string lines;
  for (const char* net : {"resnet18", "timm_dla34", "mobilenet_v2"})
    for (int b : {1, 16}) {
      LoadOptions lo;
      lo.batch = b;
      const Model m = load_onnx(dir + "/" + net + ".onnx", lo);
      const double us = network_time_us(lower_model(m, cuda_graph_harness(eager, DType::fp16)), truth);
      lines += fmt::format("{{\"model\": \"{}\", \"runtime\": \"eager\", \"batch\": {}, \"status\": \"ok\", "
                           "\"latency_ms\": {}}}\n", net, b, us / 1e3);
    }
  const auto runs = read_network_runs(test::write_temp("tw_synth.jsonl", lines), dir, "eager", nullptr);
  REQUIRE(runs.size() == 6);
  const RuntimeFit r = fit_runtime(gpu, eager, runs, {}, {"launch_gap_us"});
  CHECK(r.fit.params.at("launch_gap_us") == doctest::Approx(3.0).epsilon(0.01));
  CHECK(fit_runtime(base, eager, runs, {}, {"launch_gap_us"}).fit.params.at("launch_gap_us") ==
        doctest::Approx(r.fit.params.at("launch_gap_us")));
  for (const auto& [b, e] : r.median_error_by_batch) CHECK(e.second < 0.01);
  CHECK(runtime_class(*lower_model(runs[0].model, cuda_graph_harness(eager, DType::fp16))
                          .kernels[2]
                          .layer) == "library");
}

TEST_CASE("kendall_tau is tau-b, as calibrate/stats.py's scipy.stats.kendalltau: ties leave the denominator") {
  // Ties in both orderings: tau-b is 0.6842105263157894 (scipy 1.10's kendalltau), where tau-a would be 0.619.
  const std::vector<double> x{1, 2, 2, 3, 4, 4, 5}, y{2, 1, 3, 3, 5, 4, 4};
  CHECK(kendall_tau(x, y) == doctest::Approx(0.6842105263157894).epsilon(1e-12));
  CHECK(kendall_tau(y, x) == doctest::Approx(0.6842105263157894).epsilon(1e-12));
  CHECK(kendall_tau({1, 2, 3}, {3, 2, 1}) == doctest::Approx(-1.0));
  CHECK(kendall_tau({1, 1, 1}, {1, 2, 3}) == 0.0);  // no order to compare: 0, where scipy says NaN
}
