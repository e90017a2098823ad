// The fit recovers parameters from synthetic measurements made with known ones.
#include <doctest/doctest.h>

#include <random>

#include "test_helpers.h"
#include "tilewave/calibration.h"
#include "tilewave/kernel_cost.h"

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
  const FitResult fit = fit_parameters(start, data, split.train);
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
