// Search spaces (docs/nas.md): the files, sampling, encodings, and the
// block-sum cost against the whole candidate's analysis.
#include <cmath>
#include <fstream>
#include <set>

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/error.h"
#include "tilewave/search_space.h"
#include "tilewave/space_cost.h"
#include "tilewave/pipeline.h"
#include "tilewave_onnx.pb.h"
#include "test_helpers.h"

using namespace tilewave;

namespace {

const char* const kSpaces[] = {"mobilenetv2", "regnet", "resnet"};

std::string space_path(const char* name) { return std::string(TILEWAVE_ONNX_MODELS) + "/spaces/" + name + ".json"; }


}  // namespace

TEST_CASE("a seed gives the same candidates, whatever the order they are drawn in") {
  const space::SearchSpace s = space::load_space(space_path("mobilenetv2"));
  CHECK(s.stages.size() == 7);
  CHECK(s.size() > 1e9);
  const auto a = space::sample(s, 7, 123), b = space::sample(s, 7, 123), c = space::sample(s, 8, 123);
  CHECK(space::encode(s, a) == space::encode(s, b));
  CHECK(space::encode(s, a) != space::encode(s, c));
  // Encodings round-trip, and every sampled option is one the file offers.
  for (const char* name : kSpaces) {
    const space::SearchSpace sp = space::load_space(space_path(name));
    for (uint64_t i = 0; i < 50; ++i) {
      const auto cand = space::sample(sp, 1, i);
      CHECK(space::encode(sp, space::decode(sp, space::encode(sp, cand))) == space::encode(sp, cand));
      for (size_t st = 0; st < cand.values.size(); ++st)
        for (size_t k = 0; k < cand.values[st].size(); ++k) {
          const auto& opts = sp.stages[st].choices[k].options;
          CHECK(std::find(opts.begin(), opts.end(), cand.values[st][k]) != opts.end());
        }
    }
  }
}

TEST_CASE("the repeats expected of sampling with replacement") {
  // 10 draws from 10: 10 * (1 - 0.9^10) = 6.513 distinct, 3.487 repeats.
  CHECK(space::expected_repeats(10, 10) == doctest::Approx(10 - 10 * (1 - std::pow(0.9, 10))));
  CHECK(space::expected_repeats(1, 5) == doctest::Approx(4));
  // Few draws from a huge space: about samples^2 / (2 size), kept exact by expm1/log1p.
  CHECK(space::expected_repeats(1e12, 1000) == doctest::Approx(1000.0 * 999 / 2e12).epsilon(1e-3));
  CHECK(space::expected_repeats(0, 5) == 0);
  CHECK(space::expected_repeats(100, 0) == 0);
}

TEST_CASE("a candidate's block-sum cost equals the analysis of the whole candidate, under every runtime") {
  const GpuModel gpu = load_gpu("h200", TILEWAVE_GPU_DIR);
  for (const char* name : kSpaces) {
    const space::SearchSpace s = space::load_space(space_path(name));
    for (const RuntimeProfile* runtime : builtin_runtimes())
     for (bool runtime_default : {true, false}) {
      if (std::string(runtime->name()) == "eager-folded") continue;
      // The runtime's own default configuration, and the CUDA-graph harness.
      const ExecutionConfig exec = runtime_default
                                       ? execution_from_json(nlohmann::json{{"runtime", runtime->name()}}, "test")
                                       : cuda_graph_harness(*runtime, DType::fp16);
      space::SpaceEvaluator eval(s, gpu, exec, nullptr, 2);
      for (uint64_t i = 0; i < 3; ++i) {
        const auto c = space::sample(s, 5, i);
        CAPTURE(name);
        CAPTURE(exec.name());
        CAPTURE(space::encode(s, c));
        const space::CandidateCost fast = eval.evaluate(c);
        const auto written = space::write_blocks(s, space::blocks_of(s, c), {2, s.channels, s.height, s.width});
        AnalyzeOptions options;
        options.exec = exec;
        const Analysis full = analyze_model(load_onnx_proto(written.proto, "candidate.onnx"), gpu, options);
        CHECK(fast.flops == full.total.flops);
        CHECK(fast.kernels == full.total.kernels);
        CHECK(fast.params == written.params);
        CHECK(std::abs(fast.time_us / full.total.time_us - 1) < 1e-9);
        CHECK(std::abs(fast.utilization / full.total.utilization - 1) < 1e-9);
      }
    }
  }
}

TEST_CASE("the blocks follow torchvision's: MobileNetV2's stages, RegNet's generator") {
  // MobileNetV2 itself is a point of the space: its FLOPs are torchvision's (300.8 MMACs at 224x224).
  const space::SearchSpace s = space::load_space(space_path("mobilenetv2"));
  const auto mbv2 = space::decode(s, "d1-w16-e1-k3-se0-s1_d2-w24-e6-k3-se0-s2_d3-w32-e6-k3-se0-s2_d4-w64-e6-k3-se0-s2_"
                                     "d3-w96-e6-k3-se0-s1_d3-w160-e6-k3-se0-s2_d1-w320-e6-k3-se0-s1");
  const auto written = space::write_blocks(s, space::blocks_of(s, mbv2), {1, 3, 224, 224});
  CHECK(written.params == 3504872);  // torchvision mobilenet_v2: 3,504,872 parameters
  // RegNetY-400MF: depth 16, w0 48, wa 27.89, wm 2.09, group width 8, SE (torchvision: 4,344,144 parameters).
  const std::string regnet = test::write_temp("test_regnet_space.json", R"({"name": "r", "family": "regnet",
    "stages": [{"depth": [16], "w0": [48], "wa": [27.89], "wm": [2.09], "group_width": [8], "bottleneck": [1], "se": [1]}]})");
  const space::SearchSpace r = space::load_space(regnet);
  const auto y400 = space::sample(r, 1, 0);
  CHECK(space::write_blocks(r, space::blocks_of(r, y400), {1, 3, 224, 224}).params == 4344144);
}

TEST_CASE("space files are checked: family, choices, ranges, unknown keys") {
  auto error_of = [](const std::string& text) {
    try {
      space::load_space(test::write_temp("test_space_bad.json", text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  CHECK(error_of(R"({"family": "vit", "stages": []})").find("family") != std::string::npos);
  CHECK(error_of(R"({"family": "resnet", "stages": [{"depth": [1], "width": [64], "bottleneck": [1]}]})")
            .find("missing choice 'stride'") != std::string::npos);
  CHECK(error_of(R"({"family": "resnet", "stages": [{"depth": [0], "width": [64], "bottleneck": [1], "stride": [1]}]})")
            .find("outside") != std::string::npos);
  CHECK(error_of(R"({"family": "resnet", "stages": [{"depth": [1], "width": [64], "bottleneck": [1], "stride": [1],
                     "kernel": [3]}]})")
            .find("unknown choice 'kernel'") != std::string::npos);
  CHECK(error_of(R"({"family": "resnet", "stage": []})").find("unknown field 'stage'") != std::string::npos);
  CHECK(error_of("[1,2") .find("not valid JSON") != std::string::npos);
}

TEST_CASE("encodings round-trip exactly and decode only the space's own options") {
  // Issue 20: "{:g}" kept 6 digits, so wa 27.8926315 came back as 27.8926 (a
  // different network); -0 was written "se-0", which '-' split in two.
  std::ifstream f(space_path("regnet"));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("\"wa\": [12, 16,", "\"wa\": [27.892631578947368, 16,");
  replace("\"se\": [0, 1]", "\"se\": [-0.0, 1]");
  const space::SearchSpace sp = space::space_from_text(text, "regnet_digits.json");
  int with_digits = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    const auto cand = space::sample(sp, 3, i);
    const std::string enc = space::encode(sp, cand);
    const auto back = space::decode(sp, enc);
    CHECK(back.values == cand.values);  // the same doubles, bit for bit
    CHECK(enc.find("se-") == std::string::npos);
    with_digits += enc.find("a27.89263157894737-") != std::string::npos;
  }
  CHECK(with_digits > 0);
  // A value outside the stage's options, NaN or trailing text is refused.
  const std::string good = space::encode(sp, space::sample(sp, 3, 0));
  auto with_token = [&](const std::string& token, const std::string& by) {
    std::string e = good;
    const auto at = e.find(token);
    REQUIRE(at != std::string::npos);
    const auto end = std::min(e.find('-', at + 1), e.find('_', at + 1));
    return e.replace(at, (end == std::string::npos ? e.size() : end) - at, by);
  };
  CHECK_THROWS_WITH_AS(space::decode(sp, with_token("-a", "-a13")), doctest::Contains("is not one of the space's options"),
                       InputError);
  CHECK_THROWS_WITH_AS(space::decode(sp, with_token("-a", "-anan")), doctest::Contains("is not one of the space's options"),
                       InputError);
  CHECK_THROWS_WITH_AS(space::decode(sp, with_token("-a", "-a16x")), doctest::Contains("is not a number"), InputError);
}

TEST_CASE("--unique draws distinct candidates, --enumerate each candidate once, both from (seed, index) alone") {
  const space::SearchSpace s = space::load_space(space_path("regnet"));
  const uint64_t size = uint64_t(s.size());
  REQUIRE(size == 21504);
  auto encodings = [&](const space::Sampler& sampler, uint64_t first, uint64_t step) {
    std::vector<std::string> out;
    space::Candidate c;
    for (uint64_t i = first; i < sampler.total(); i += step) {
      sampler.draw(i, c);
      CHECK(c.index == i);
      out.push_back(space::encode(s, c));
    }
    return out;
  };
  // The whole space drawn without replacement is a permutation of it.
  const space::Sampler unique(s, space::Sampling::unique, 3, size);
  const auto drawn = encodings(unique, 0, 1);
  const std::set<std::string> distinct(drawn.begin(), drawn.end());
  CHECK(distinct.size() == size);
  // Enumeration covers the same set, in another (fixed) order.
  const space::Sampler all(s, space::Sampling::enumerate, 99, 1);
  CHECK(all.total() == size);
  const auto listed = encodings(all, 0, 1);
  CHECK(std::set<std::string>(listed.begin(), listed.end()) == distinct);
  CHECK(listed != drawn);
  CHECK(listed.front() == space::encode(s, [&] { space::Candidate c; space::candidate_at(s, 0, c); return c; }()));
  // The same seed gives the same candidates, another seed others; a shard's
  // candidates are the unsharded run's at its indices.
  CHECK(encodings(space::Sampler(s, space::Sampling::unique, 3, 500), 0, 1) ==
        std::vector<std::string>(drawn.begin(), drawn.begin() + 500));
  CHECK(encodings(space::Sampler(s, space::Sampling::unique, 4, 500), 0, 1) !=
        std::vector<std::string>(drawn.begin(), drawn.begin() + 500));
  const auto shard = encodings(space::Sampler(s, space::Sampling::unique, 3, 500), 1, 3);
  for (size_t k = 0; k < shard.size(); ++k) CHECK(shard[k] == drawn[1 + 3 * k]);
  // The default draws with replacement: 20,000 of 21,504 hold repeats.
  const auto replaced = encodings(space::Sampler(s, space::Sampling::replacement, 3, 20000), 0, 1);
  CHECK(std::set<std::string>(replaced.begin(), replaced.end()).size() < 20000);
}

TEST_CASE("--unique and --enumerate refuse what they cannot give, naming the space file") {
  const space::SearchSpace regnet = space::load_space(space_path("regnet"));
  CHECK_THROWS_WITH_AS(space::Sampler(regnet, space::Sampling::unique, 1, 21505),
                       doctest::Contains("regnet.json: --unique: --samples 21505 is more than the 21504"), InputError);
  CHECK_NOTHROW(space::Sampler(regnet, space::Sampling::unique, 1, 21504));
  const space::SearchSpace mobile = space::load_space(space_path("mobilenetv2"));
  CHECK_THROWS_WITH_AS(space::Sampler(mobile, space::Sampling::enumerate, 1, 1),
                       doctest::Contains("mobilenetv2.json: --enumerate: the space holds 8.569e+13"), InputError);
  // A space too large for enumeration still samples without replacement.
  const space::Sampler unique(mobile, space::Sampling::unique, 1, 1000);
  std::set<std::string> seen;
  space::Candidate c;
  for (uint64_t i = 0; i < 1000; ++i) unique.draw(i, c), seen.insert(space::encode(mobile, c));
  CHECK(seen.size() == 1000);
}
