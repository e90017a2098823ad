#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_helpers.h"
#include "tilewave/error.h"

using namespace tilewave;
using nlohmann::json;

TEST_CASE("every GPU in the database loads with all parameters and an fp16 path") {
  const auto ids = list_gpu_ids(TILEWAVE_GPU_DIR);
  for (const char* id : {"v100", "t4", "a10", "a100", "l4", "l40s", "h100", "h100-pcie", "h200", "rtx4090"})
    CHECK(std::find(ids.begin(), ids.end(), id) != ids.end());
  for (const auto& id : ids) {
    CAPTURE(id);
    const GpuModel g = test::gpu(id);
    CHECK(g.sms > 0);
    CHECK(g.params.size() == param_table().size());
    CHECK(g.precision(DType::fp16).peak_tflops > 0);
    CHECK(g.precision(DType::fp32).unit == Unit::cuda);
    CHECK(!g.sources.empty());
  }
}

TEST_CASE("GPU file errors name the file and the problem") {
  const std::string arch = std::string(TILEWAVE_GPU_DIR) + "/arch";
  json good = {{"arch", "ampere"},          {"sms", 10}, {"boost_clock_mhz", 1000}, {"dram_bandwidth_gbs", 100},
               {"tensor_tflops", {{"fp16", 10}}}, {"cuda_core_tflops", {{"fp32", 1}}}};
  CHECK_NOTHROW(gpu_from_json(good, "x", "x.json", arch));
  json j = good;
  j.erase("sms");
  CHECK_THROWS_WITH_AS(gpu_from_json(j, "x", "x.json", arch), "x.json: missing field 'sms'", InputError);
  j = good;
  j["params"] = {{"no_such_param", 1}};
  CHECK_THROWS_WITH_AS(gpu_from_json(j, "x", "x.json", arch), "x.json: unknown model parameter 'no_such_param'",
                       InputError);
  j = good;
  j["dram_bandwidth_gbs"] = -5;
  CHECK_THROWS_AS(gpu_from_json(j, "x", "x.json", arch), InputError);
  j = good;
  j["arch"] = "no_such_arch";
  CHECK_THROWS_AS(gpu_from_json(j, "x", "x.json", arch), InputError);
  CHECK_THROWS_AS(load_gpu("no_such_gpu", TILEWAVE_GPU_DIR), InputError);
  // Trust is one of four spellings; a file that says anything else is refused, not shown unmarked.
  CHECK(gpu_from_json(good, "x", "x.json", arch).trust == Trust::datasheet);
  j = good;
  j["trust"] = "fitted-from-benchmark";
  CHECK(gpu_from_json(j, "x", "x.json", arch).trust == Trust::fitted_from_benchmark);
  j["trust"] = "Calibrated";
  CHECK_THROWS_WITH_AS(gpu_from_json(j, "x", "x.json", arch),
                       "x.json: unknown trust 'Calibrated' (calibrated, fitted-from-benchmark, carried-over, datasheet)",
                       InputError);
  CHECK_THROWS_AS(test::gpu("v100").precision(DType::int8), InputError);
}

TEST_CASE("GPU file parameters override architecture defaults") {
  const std::string arch = std::string(TILEWAVE_GPU_DIR) + "/arch";
  json j = {{"arch", "hopper"},          {"sms", 10}, {"boost_clock_mhz", 1000}, {"dram_bandwidth_gbs", 100},
            {"tensor_tflops", {{"fp16", 10}}}, {"cuda_core_tflops", {{"fp32", 1}}},
            {"params", {{"fixed_us_gemm", 7.5}}}};
  const GpuModel g = gpu_from_json(j, "x", "x.json", arch);
  CHECK(g.param("fixed_us_gemm") == 7.5);
  CHECK(g.param("eltwise_bw_efficiency") > 0);
}

TEST_CASE("a runtime's parameter set overrides the base set for that runtime only") {
  const std::string arch = std::string(TILEWAVE_GPU_DIR) + "/arch";
  json j = {{"arch", "hopper"},
            {"sms", 10},
            {"boost_clock_mhz", 1000},
            {"dram_bandwidth_gbs", 100},
            {"tensor_tflops", {{"fp16", 10}}},
            {"params", {{"fixed_us_gemm", 7.5}}},
            {"runtime_params", {{"eager", {{"params", {{"fixed_us_gemm", 2.5}}}, {"fitted_on", "test"}}}}}};
  const GpuModel g = gpu_from_json(j, "x", "x.json", arch);
  CHECK(g.param("fixed_us_gemm") == 7.5);
  CHECK(g.has_runtime_params("eager"));
  CHECK(g.for_runtime("eager").param("fixed_us_gemm") == 2.5);
  CHECK(g.for_runtime("inductor").param("fixed_us_gemm") == 7.5);
  CHECK(g.for_runtime("eager").runtime == "eager");
  j["runtime_params"]["eager"]["params"]["no_such_parameter"] = 1;
  CHECK_THROWS_WITH_AS(gpu_from_json(j, "x", "x.json", arch),
                       "x.json: runtime_params.eager: unknown model parameter 'no_such_parameter'", InputError);
}
