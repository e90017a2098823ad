// Carry-over by what each parameter is a property of (carry_over.h;
// docs/calibration.md "Carry-over"): the values it writes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_helpers.h"
#include "tilewave/carry_over.h"
#include "tilewave/error.h"
#include "tilewave/gpu_file.h"

using namespace tilewave;

namespace {

GpuModel gpu(const std::string& id, const std::string& arch, const std::string& family, const std::string& memory,
             double bandwidth_gbs = 1000, int sms = 100, double mhz = 2000) {
  GpuModel g;
  g.id = id;
  g.arch = arch;
  g.instruction_family = family;
  g.memory_type = memory;
  g.trust = Trust::calibrated;
  g.dram_bandwidth_gbs = bandwidth_gbs;
  g.sms = sms;
  g.boost_clock_mhz = mhz;
  for (const auto& p : param_table()) g.params[p.name] = p.default_value;
  return g;
}

// Bytes of DRAM bandwidth per SM cycle: what an SM-limited rate carries by.
double per_sm_cycle(const GpuModel& g) { return g.dram_bandwidth_gbs / (g.sms * g.boost_clock_mhz); }

}  // namespace

TEST_CASE("carry-over: each owner's rule picks its donor") {
  GpuModel hbm = gpu("h200", "hopper", "wgmma-sm90", "HBM3e", 4800, 132, 1980);
  hbm.params["tc_efficiency"] = 0.91;
  hbm.params["eltwise_bw_efficiency"] = 0.70;
  hbm.params["fixed_us_memory"] = 1.3;
  hbm.params["launch_gap_us"] = 0.4;
  hbm.params["ramp_mb"] = 48;
  hbm.params["row_ns"] = 1.0;
  GpuModel gddr = gpu("rtx3090", "ampere", "mma-sm80", "GDDR6X", 936, 82, 1695);
  gddr.params["tc_efficiency"] = 0.72;
  gddr.params["eltwise_bw_efficiency"] = 0.88;
  gddr.params["fixed_us_memory"] = 2.1;
  gddr.params["gemm_bw_efficiency"] = 0.5;
  const GpuModel target = gpu("rtx5090", "blackwell-sm120", "mma-sm80", "GDDR7", 1792, 170, 2410);

  const CarryOver c = carry_over(target, {hbm, gddr});
  CHECK(c.donors == std::vector<std::string>{"h200", "rtx3090"});
  // The main loop: from the donor of the same instruction family.
  CHECK(c.params.at("tc_efficiency").value == doctest::Approx(0.72));
  CHECK(c.params.at("tc_efficiency").from == "rtx3090");
  CHECK(c.params.at("tc_efficiency").rule == "same instruction family (mma-sm80)");
  // Memory: the same family (GDDR) before the first donor; a bandwidth
  // fraction the SMs limit grows where each SM has less DRAM bandwidth, up
  // to its bound.
  CHECK(c.params.at("eltwise_bw_efficiency").from == "rtx3090");
  CHECK(c.params.at("eltwise_bw_efficiency").rule.find("same memory family (gddr") == 0);
  CHECK(c.params.at("eltwise_bw_efficiency").value == doctest::Approx(1.0));  // 0.88 x 1.54, capped
  CHECK(c.params.at("gemm_bw_efficiency").value ==
        doctest::Approx(std::min(1.0, 0.5 * per_sm_cycle(gddr) / per_sm_cycle(target))));
  CHECK(c.params.at("l2_reuse_fraction").value == doctest::Approx(gddr.params.at("l2_reuse_fraction")));  // a share
  // Launch and runtime terms: no donor of its architecture, so the first donor's.
  CHECK(c.params.at("fixed_us_memory").value == doctest::Approx(1.3));
  CHECK(c.params.at("launch_gap_us").from == "h200");
  // Scaled: a size a rate fills, with the bandwidth; a time per row, with SMs x clock.
  CHECK(c.params.at("ramp_mb").from == "rtx3090");
  CHECK(c.params.at("ramp_mb").value == doctest::Approx(gddr.params.at("ramp_mb") * 1792 / 936));
  CHECK(c.params.at("row_ns").value == doctest::Approx(1.0 * (132 * 1980.0) / (170 * 2410.0)));

  // With the H200 alone: no main-loop parameter carries across instruction families.
  const CarryOver alone = carry_over(target, {hbm});
  CHECK_FALSE(alone.params.count("tc_efficiency"));
  CHECK(alone.params.at("eltwise_bw_efficiency").value == doctest::Approx(1.0));  // 0.70 x 4.2, capped
  CHECK(alone.params.at("eltwise_bw_efficiency").rule.find("no donor of its memory family") == 0);
  for (const auto& p : param_table())
    if (p.owner == ParamOwner::architecture) CHECK_FALSE(alone.params.count(p.name));

  // The same memory type wins over the same family.
  GpuModel gddr7 = gpu("other", "ada", "mma-sm80", "GDDR7");
  gddr7.params["eltwise_bw_efficiency"] = 0.5;
  CHECK(carry_over(target, {gddr, gddr7}).params.at("eltwise_bw_efficiency").value ==
        doctest::Approx(0.5 * per_sm_cycle(gddr7) / per_sm_cycle(target)));
}

TEST_CASE("carry-over: runtime sets follow the same rules, donors must be calibrated") {
  GpuModel hbm = gpu("h200", "hopper", "wgmma-sm90", "HBM3e");
  hbm.runtime_params["eager"] = {{"fixed_us_memory", 1.29}, {"norm_bw_efficiency", 0.3}, {"tc_efficiency", 0.9},
                                 {"interval_graph_attention_low", 0.9}};
  GpuModel gddr = gpu("rtx3090", "ampere", "mma-sm80", "GDDR6X");
  gddr.runtime_params["eager"] = {{"norm_bw_efficiency", 0.45}};
  const GpuModel target = gpu("rtx4090", "ada", "mma-sm80", "GDDR6X");
  const CarryOver c = carry_over(target, {hbm, gddr});
  const auto& eager = c.runtime_params.at("eager");
  CHECK(eager.at("norm_bw_efficiency").value == doctest::Approx(0.45));  // same memory type
  CHECK(eager.at("fixed_us_memory").value == doctest::Approx(1.29));     // only the H200 has it
  CHECK_FALSE(eager.count("tc_efficiency"));                            // another instruction family
  CHECK_FALSE(eager.count("interval_graph_attention_low"));  // the H200's residuals: never carried

  GpuModel datasheet = gddr;
  datasheet.trust = Trust::datasheet;
  CHECK_THROWS_WITH_AS(carry_over(target, {datasheet}), doctest::Contains("needs a calibrated GPU file"),
                       InputError);
  CHECK_THROWS_AS(carry_over(target, {}), InputError);
  GpuModel self = target;
  self.trust = Trust::calibrated;
  CHECK_THROWS_WITH_AS(carry_over(target, {self}), doctest::Contains("other than the target"), InputError);
}

TEST_CASE("carry-over: a carried file's interval is its donor's carried_interval_*, never the donor's own") {
  GpuModel h200 = gpu("h200", "hopper", "wgmma-sm90", "HBM3e");
  h200.runtime_params["eager"] = {{"interval_graph_attention_low", 0.88},
                                  {"interval_graph_attention_high", 1.41},
                                  {"carried_interval_graph_attention_low", 0.95},
                                  {"carried_interval_graph_attention_high", 1.62},
                                  {"carried_interval_loop_gpu_attention_low", 0.0}};  // 0: not measured
  GpuModel rtx = gpu("rtx3090", "ampere", "mma-sm80", "GDDR6X");
  rtx.runtime_params["eager"] = {{"carried_interval_graph_attention_low", 0.5}};  // listed second: not taken
  const CarryOver c = carry_over(gpu("a100", "ampere", "mma-sm80", "HBM2e"), {h200, rtx});
  const auto& eager = c.runtime_params.at("eager");
  CHECK(eager.at("interval_graph_attention_low").value == doctest::Approx(0.95));
  CHECK(eager.at("interval_graph_attention_high").value == doctest::Approx(1.62));
  CHECK(eager.at("interval_graph_attention_high").from == "h200");
  CHECK(eager.at("interval_graph_attention_high").rule.find("carried_interval_graph_attention_high") !=
        std::string::npos);
  CHECK_FALSE(eager.count("interval_loop_gpu_attention_low"));  // none measured: none stated
  for (const auto& [name, p] : eager) CHECK(name.rfind("carried_interval_", 0) == std::string::npos);

  // A donor with its own interval and no carried one gives the carried file none.
  GpuModel plain = h200;
  plain.runtime_params["eager"] = {{"interval_graph_attention_low", 0.88}, {"fixed_us_memory", 1.2}};
  CHECK_FALSE(carry_over(gpu("l4", "ada", "mma-sm80", "GDDR6"), {plain}).runtime_params.at("eager").count(
      "interval_graph_attention_low"));
}

TEST_CASE("carry-over: interval names come from one place, and without_intervals drops only intervals") {
  // Every name the two helpers compose is a parameter of the table, owned by validation.
  for (const char* regime : {"graph", "loop_gpu", "loop_host"})
    for (const char* cls : {"attention", "no_attention"})
      for (const char* bound : {"low", "high"}) {
        const std::string own = interval_param(regime, cls, bound);
        const auto p = std::find_if(param_table().begin(), param_table().end(),
                                     [&](const ParamInfo& q) { return own == q.name; });
        REQUIRE(p != param_table().end());
        CHECK(p->owner == ParamOwner::validation);
        CHECK(interval_of_carried("carried_" + own) == own);
      }
  CHECK(interval_of_carried("interval_graph_attention_low").empty());
  CHECK(interval_of_carried("carried_fixed_us_memory").empty());
  CHECK(interval_of_carried("carried_").empty());

  GpuModel g = gpu("h100", "hopper", "wgmma-sm90", "HBM3");
  g.runtime_params["eager"] = {{"interval_graph_attention_low", 0.9},
                               {"carried_interval_graph_attention_high", 1.5},
                               {"fixed_us_memory", 1.2},
                               {"not_a_parameter", 3.0}};
  const GpuModel stripped = without_intervals(g);
  CHECK(stripped.runtime_params.at("eager") ==
        std::map<std::string, double>{{"fixed_us_memory", 1.2}, {"not_a_parameter", 3.0}});
}

TEST_CASE("carry-over: every parameter declares its owner once, and the bundled files name their families") {
  for (const auto& p : param_table()) CHECK(p.owner != ParamOwner::host);
  for (const char* id : {"h200", "a100", "rtx4090", "t4", "v100"}) {
    const GpuModel g = test::gpu(id);
    CAPTURE(id);
    CHECK_FALSE(g.instruction_family.empty());
  }
  CHECK(memory_family("HBM3e") == "hbm");
  CHECK(memory_family("GDDR6X") == "gddr");
  CHECK(memory_family("") == "");
}

TEST_CASE("carry-over: the file calibrate carry writes reads back to the carried values, with their origins") {
  // Frozen donor and target files (tests/data/gpus/), so a refit of gpu_models/ changes nothing here.
  const std::string fixtures = test::data("gpus");
  const GpuModel h200 = load_gpu("h200", fixtures);
  const GpuModel a100 = load_gpu("a100", fixtures);
  REQUIRE(h200.trust == Trust::calibrated);
  const CarryOver c = carry_over(a100, {h200});
  REQUIRE_FALSE(c.params.empty());
  REQUIRE_FALSE(c.runtime_params.empty());

  const nlohmann::json file = carried_gpu_file(a100, {h200}, c, "2026-01-01T00:00:00Z");
  // A folder of this run's own (mkdtemp), removed at the end.
  std::string templ = (std::filesystem::temp_directory_path() / "tilewave_carry_XXXXXX").string();
  REQUIRE(mkdtemp(templ.data()) != nullptr);
  const std::filesystem::path dir = templ;
  const std::string path = (dir / "a100_carried.json").string();
  std::ofstream(path) << file.dump(2) << "\n";
  // The architecture file is looked up beside the file, then in the database given.
  const GpuModel back = load_gpu(path, fixtures);
  std::filesystem::remove_all(dir);

  CHECK(back.trust == Trust::carried_over);
  CHECK(back.sms == a100.sms);  // the target's facts are kept
  CHECK(back.dram_bandwidth_gbs == a100.dram_bandwidth_gbs);
  for (const auto& entry : c.params) {
    const std::string name = entry.first;  // a copy: clang 14 cannot capture a structured binding
    CAPTURE(name);
    CHECK(back.params.at(name) == doctest::Approx(stored_param(entry.second.value)).epsilon(1e-12));
    CHECK(back.param_origin.at(name) == entry.second.origin());
  }
  // What no donor gave stays at the architecture's default, not at the old file's value.
  for (const auto& info : param_table())
    if (!c.params.count(info.name) && info.owner == ParamOwner::architecture) {
      CAPTURE(info.name);
      CHECK(back.params.at(info.name) == doctest::Approx(load_gpu("a100", fixtures).params.at(info.name)));
    }
  for (const auto& set : c.runtime_params) {
    const std::string runtime = set.first;
    REQUIRE(back.runtime_params.count(runtime));
    for (const auto& entry : set.second) {
      const std::string name = entry.first;
      CAPTURE(runtime);
      CAPTURE(name);
      CHECK(back.runtime_params.at(runtime).at(name) == doctest::Approx(stored_param(entry.second.value)).epsilon(1e-12));
    }
  }
  // A runtime set reads back as the runtime's parameters.
  const std::string runtime = c.runtime_params.begin()->first;
  const std::string some = c.runtime_params.begin()->second.begin()->first;
  CHECK(back.for_runtime(runtime).param(some) ==
        doctest::Approx(stored_param(c.runtime_params.begin()->second.begin()->second.value)));
  CHECK(file["carried_over"]["from"] == std::vector<std::string>{"h200"});
  CHECK(file["carried_over"]["date"] == "2026-01-01T00:00:00Z");
}
