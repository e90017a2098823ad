// Views that write files: the annotated ONNX keeps the model's weights and
// structure, and carries every node's prediction (docs/report.md).
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <zlib.h>
#include <onnx/onnx_pb.h>

#include "test_helpers.h"
#include "tilewave/analysis.h"
#include "tilewave/error.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave/trace_check.h"
#include "tilewave/layer_list.h"
#include "tilewave/advise.h"
#include "tilewave/search.h"
#include "tilewave/view_registry.h"
#include "tilewave_onnx.pb.h"

using namespace tilewave;

namespace {

::onnx::ModelProto parse(const std::string& bytes) {
  ::onnx::ModelProto m;
  REQUIRE(m.ParseFromString(bytes));
  return m;
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

namespace {
// A node's annotation keys (NodeProto.metadata_props, field 9: tilewave's
// schema has it, ONNX 1.12's does not), read back with tilewave's classes.
std::map<std::string, std::string> props_of(const google::protobuf::RepeatedPtrField<tilewave::onnx::StringStringEntryProto>& p) {
  std::map<std::string, std::string> out;
  for (const auto& e : p) CHECK(out.emplace(e.key(), e.value()).second);  // keys distinct, as ONNX asks
  return out;
}
}  // namespace

TEST_CASE("annotate: a copy in another folder still finds the external data, or is refused with one line") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "tw_annotate_external";
  fs::remove_all(root);
  fs::create_directories(root / "models");
  fs::create_directories(root / "elsewhere");
  const fs::path model = root / "models" / "stripped.onnx";  // its weights: "stripped.weights", beside it
  fs::copy_file(test::data("stripped.onnx"), model);
  AnalyzeOptions o;
  o.load.batch = 2;
  const Analysis a = analyze_file(model.string(), test::gpu("h200"), o);
  auto locations = [](const std::string& bytes) {
    std::set<std::string> out;
    const ::onnx::ModelProto p = parse(bytes);
    for (const auto& t : p.graph().initializer())
      for (const auto& e : t.external_data())
        if (e.key() == "location") out.insert(e.value());
    return out;
  };
  CHECK(locations(annotated_onnx(model.string(), a, (root / "models" / "a.onnx").string())) ==
        std::set<std::string>{"stripped.weights"});
  CHECK(locations(annotated_onnx(model.string(), a, "-")) == std::set<std::string>{"stripped.weights"});
  CHECK(locations(annotated_onnx(model.string(), a, (root / "a.onnx").string())) ==
        std::set<std::string>{"models/stripped.weights"});
  try {
    annotated_onnx(model.string(), a, (root / "elsewhere" / "a.onnx").string());
    FAIL("a copy that could reach the weights only through '..' was written");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("stripped.onnx") != std::string::npos);
    CHECK(what.find("only through '..'") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  fs::remove_all(root);
}

TEST_CASE("annotate: every node gets its prediction as keys and one line, weights and graph stay byte for byte") {
  const std::string path = test::data("tiny_cnn.onnx");
  AnalyzeOptions o;
  o.load.batch = 8;
  const Analysis a = analyze_file(path, test::gpu("h200"), o);
  const ::onnx::ModelProto before = parse(file_bytes(path));
  const std::string once = annotated_onnx(path, a);
  ::onnx::ModelProto after = parse(once);  // ONNX 1.12's own reader still takes the file
  REQUIRE(after.graph().node_size() == before.graph().node_size());
  REQUIRE(after.graph().initializer_size() == before.graph().initializer_size());
  for (int i = 0; i < before.graph().initializer_size(); ++i)
    CHECK(after.graph().initializer(i).SerializeAsString() == before.graph().initializer(i).SerializeAsString());
  tilewave::onnx::ModelProto ours;
  REQUIRE(ours.ParseFromString(once));
  int with_kernel = 0;
  double shares = 0;
  for (int i = 0; i < ours.graph().node_size(); ++i) {
    const auto& node = ours.graph().node(i);
    CAPTURE(node.name());
    const auto keys = props_of(node.metadata_props());
    const NodeFate& fate = a.nodes_fate[size_t(i)];
    CHECK(keys.at("tilewave.fate") == fate_name(fate.fate));
    // One short line for Netron's sidebar.
    CHECK(node.doc_string().rfind("[tilewave] h200, batch 8: ", 0) == 0);
    CHECK(node.doc_string().find('\n') == std::string::npos);
    if (fate.fate == Fate::kernel) {
      ++with_kernel;
      for (const char* k : {"time_us", "step_share", "gpu_busy_share", "utilization", "bound", "main_loss", "kernels", "runs_as",
                            "loss.tile", "loss.wave", "loss.efficiency", "loss.memory", "loss.fixed"})
        CHECK_MESSAGE(keys.count(std::string("tilewave.") + k), k);
      CHECK(std::stod(keys.at("tilewave.time_us")) == doctest::Approx(fate.time_us).epsilon(1e-3));
      CHECK(std::stod(keys.at("tilewave.utilization")) >= 0);
      CHECK(std::stod(keys.at("tilewave.utilization")) <= 1);
      double losses = 0;
      for (const char* k : {"loss.tile", "loss.wave", "loss.efficiency", "loss.memory", "loss.fixed"})
        losses += std::stod(keys.at(std::string("tilewave.") + k));
      CHECK(losses <= 1.0001);
      // What the analysis computed, not annotate's own sums (docs/report.md "tilewave annotate").
      CHECK(std::stod(keys.at("tilewave.utilization")) == doctest::Approx(fate.utilization).epsilon(1e-3));
      CHECK(std::stod(keys.at("tilewave.loss.memory")) == doctest::Approx(fate.losses.memory).epsilon(1e-3));
      CHECK(std::stod(keys.at("tilewave.step_share")) == doctest::Approx(fate.step_share).epsilon(1e-3));
      shares += std::stod(keys.at("tilewave.gpu_busy_share"));
      CHECK(node.doc_string().find(keys.at("tilewave.bound") + "-bound") != std::string::npos);
    }
    // Apart from doc strings and metadata the nodes are unchanged.
    tilewave::onnx::NodeProto n = node;
    n.clear_doc_string();
    n.clear_metadata_props();
    tilewave::onnx::NodeProto m;
    REQUIRE(m.ParseFromString(before.graph().node(i).SerializeAsString()));
    m.clear_doc_string();
    CHECK(n.SerializeAsString() == m.SerializeAsString());
  }
  CHECK(with_kernel > 0);
  CHECK(shares == doctest::Approx(1).epsilon(0.01));  // the nodes with kernels hold the network's time
  const auto model_keys = props_of(ours.metadata_props());
  CHECK(model_keys.at("tilewave.target").find("NVIDIA H200") != std::string::npos);
  CHECK(std::stod(model_keys.at("tilewave.time_us")) == doctest::Approx(a.total.time_us).epsilon(1e-3));
  CHECK(model_keys.at("tilewave.kernels") == std::to_string(a.total.kernels));

  // Annotating the annotated file replaces the annotation instead of adding one.
  const std::string tmp = test::write_temp("tw_annotated.onnx", once);
  tilewave::onnx::ModelProto twice;
  REQUIRE(twice.ParseFromString(annotated_onnx(tmp, a)));
  for (int i = 0; i < twice.graph().node_size(); ++i) {
    CHECK(twice.graph().node(i).doc_string() == ours.graph().node(i).doc_string());
    CHECK(props_of(twice.graph().node(i).metadata_props()) == props_of(ours.graph().node(i).metadata_props()));
  }
  CHECK(twice.metadata_props_size() == ours.metadata_props_size());
}

TEST_CASE("closest_name: a case slip or a typo or two finds the name meant; a tie or a stranger finds none") {
  const std::vector<std::string> gpus = {"a10", "a100", "h100", "h200", "l4", "t4"};
  CHECK(closest_name("H200", gpus) == "h200");
  CHECK(closest_name("a1000", gpus) == "a100");
  CHECK(closest_name("h300", gpus).empty());  // h100 and h200 are both one edit away
  CHECK(closest_name("x9", gpus).empty());    // an edit of a short name is not a near miss
  CHECK(closest_name("quadro", gpus).empty());
  CHECK(closest_name("analyse", {"analyze", "advise", "annotate"}) == "analyze");
  CHECK(closest_name("", gpus).empty());
}

TEST_CASE("names are shortened in the middle, on code points") {
  CHECK(middle_ellipsis("short", 10) == "short");
  CHECK(middle_ellipsis("/features/features.2/block.0/Conv", 13) == "/featu\u20260/Conv");  // 6 + 1 + 6
  CHECK(middle_ellipsis("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", 5) == "\u00e9\u00e9\u2026\u00e9\u00e9");
  CHECK(compact_name("/features/features.1/features.1.2/block/block.2/Conv") == "/features.1.2/block.2/Conv");
  CHECK(compact_name("/layer1/layer1.0/conv3/Conv/bias") == "/layer1.0/conv3/Conv/bias");
  CHECK(compact_name("plain") == "plain");
  CHECK(compact_name("a/a.b") == "a.b");
  CHECK(html_escape("<a & \"b\">") == "&lt;a &amp; &quot;b&quot;&gt;");
}

TEST_CASE("check: the H200 trace of ResNet-18 pairs every convolution with a measured convolution") {
  AnalyzeOptions o;
  o.load.batch = 1;
  o.exec = cuda_graph_harness(default_runtime(), DType::fp16);  // the trace's harness: .half(), channels_last
  const Analysis a = analyze_file(test::zoo("runtime/resnet18.onnx"), test::gpu("h200"), o);
  const MeasuredTrace t = read_trace(test::data("traces/resnet18_b1_eager_h200.trace.json"));
  CHECK(t.kernels.size() == 108);
  const TraceCheck c = check_against_trace(a, t);
  int convs = 0;
  for (const auto& p : c.pairs) {
    if (p.predicted < 0 || std::string(kernel_kind(a.kernels[size_t(p.predicted)])) != "compute") continue;
    ++convs;
    REQUIRE(p.measured >= 0);
    CHECK(std::string(kernel_kind(t.kernels[size_t(p.measured)].name)) == "compute");
  }
  CHECK(convs == 21);  // 20 convolutions and the classifier's GEMM
  // The per-kind sums split the paired totals, the most measured time first.
  int pairs = 0;
  double predicted = 0, measured = 0;
  for (size_t k = 0; k < c.by_kind.size(); ++k) {
    pairs += c.by_kind[k].pairs, predicted += c.by_kind[k].predicted_us, measured += c.by_kind[k].measured_us;
    if (k > 0) CHECK(c.by_kind[k - 1].measured_us >= c.by_kind[k].measured_us);
  }
  CHECK(pairs == c.paired);
  CHECK(predicted == doctest::Approx(c.paired_predicted_us));
  CHECK(measured == doctest::Approx(c.paired_measured_us));
  REQUIRE_FALSE(c.by_kind.empty());
  CHECK(c.by_kind.front().kind == "compute");
  CHECK(c.by_kind.front().pairs == 21);
  CHECK(c.paired >= 100);
  CHECK(c.measured_device_us == doctest::Approx(327.25).epsilon(0.001));
  CHECK(kernel_kind("triton_poi_fused_add_relu_3") == std::string("elementwise"));
  CHECK(kernel_kind("sm90_xmma_gemm_f16f16_f16f32") == std::string("compute"));
  CHECK(kernel_kind("void at::native::(anonymous namespace)::max_pool_forward_nhwc") == std::string("pool"));
}

TEST_CASE("check: a kernel list (run.py's kernels.jsonl row) is a trace, and every kernel lands in one class row") {
  AnalyzeOptions o;
  o.load.batch = 1;
  o.exec = cuda_graph_harness(default_runtime(), DType::fp16);
  const Analysis a = analyze_file(test::zoo("runtime/resnet18.onnx"), test::gpu("h200"), o);
  const MeasuredTrace from_trace = read_trace(test::data("traces/resnet18_b1_eager_h200.trace.json"));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& k : from_trace.kernels) list.push_back({k.name, k.duration_us});
  const MeasuredTrace t = trace_from_json({{"model", "resnet18"}, {"list", list}}, "row.json");
  REQUIRE(t.kernels.size() == from_trace.kernels.size());
  CHECK(t.kernels[1].start_us == doctest::Approx(t.kernels[0].duration_us));  // laid end to end
  const TraceCheck c = check_against_trace(a, t);
  int measured = 0, predicted = 0, paired = 0;
  double measured_us = 0, share = 0;
  for (const auto& r : c.by_class) {
    measured += r.measured, predicted += r.predicted, paired += r.paired;
    measured_us += r.measured_us, share += r.measured_share;
    CHECK(r.measured == r.paired + r.missing);
    CHECK(r.missing_us <= r.measured_us + 1e-9);
  }
  CHECK(measured == int(t.kernels.size()));
  CHECK(paired == c.paired);
  CHECK(predicted == std::count_if(c.pairs.begin(), c.pairs.end(), [](const TracePair& p) { return p.predicted >= 0; }));
  CHECK(measured_us == doctest::Approx(c.measured_device_us));
  CHECK(share == doctest::Approx(1.0));
  CHECK(c.by_class.front().kernel_class == "conv");  // ResNet-18's time is in its convolutions
  // Same-class pairs, recounted from the pairs: a measured kernel whose
  // partner was predicted in its own class (a cast beside a cast, not beside
  // a transform the runtime launched in the other order).
  std::map<std::string, std::pair<int, double>> same;
  for (const auto& p : c.pairs)
    if (p.measured >= 0 && p.predicted >= 0) {
      const std::string cls = pairing_class(t.kernels[size_t(p.measured)].name);
      if (cls == pairing_class(a.kernels[size_t(p.predicted)])) ++same[cls].first, same[cls].second += p.predicted_us;
    }
  int same_pairs = 0;
  for (const auto& r : c.by_class) {
    CHECK(r.same_class_paired <= r.paired);
    CHECK(r.same_class_measured_us <= r.paired_measured_us + 1e-9);
    CHECK(r.same_class_paired == same[r.kernel_class].first);
    CHECK(r.same_class_predicted_us == doctest::Approx(same[r.kernel_class].second));
    if (r.same_class_paired > 0)
      CHECK(r.same_class_error == doctest::Approx(r.same_class_predicted_us / r.same_class_measured_us - 1));
    same_pairs += r.same_class_paired;
  }
  CHECK(same_pairs > c.paired / 2);
  CHECK(c.by_class.front().same_class_paired > 0);
  CHECK(pairing_class("sm90_xmma_fprop_implicit_gemm_f16f16") == std::string("conv"));
  CHECK(pairing_class("void cudnn::winograd_nonfused::winogradForwardData4x4") == std::string("conv_winograd"));
  CHECK(pairing_class("nvjet_sm90_hsh_192x192_64x4_1x2_h_bz_coopB_TNN") == std::string("gemm"));
  CHECK(pairing_class("void cudnn::bn_fw_inf_1C11_kernel_NCHW<__half, float, true, 1>") == std::string("norm"));
  CHECK(pairing_class("conv2d_c1_k1_nhwc_specialized") == std::string("depthwise"));
  CHECK(pairing_class("triton_poi_fused_add_relu_3") == std::string("triton"));
  CHECK(pairing_class("vectorized_elementwise_kernel<8, float16_copy_kernel_cuda") == std::string("cast"));
  for (const char* bad : {R"({"list": 3})", R"({"list": []})", R"({"list": [["k", -1]]})", R"({"list": [["k"]]})",
                          R"({"list": [[1, 2.0]]})", R"({"list": [["k", 1e30]]})"})
    CHECK_THROWS_AS(trace_from_json(nlohmann::json::parse(bad), "row.json"), InputError);
}

namespace {

// A trace of one convolution as torch.profiler records it: the top-level op
// with `top_type` inputs, the library call beneath it with `call_type`, and
// one kernel called `kernel`.
nlohmann::json one_conv_trace(const char* top_type, const char* call_type, nlohmann::json strides,
                              const char* kernel) {
  auto op = [&](const char* name, double ts, const char* type) {
    return nlohmann::json{{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"ts", ts}, {"dur", 5},
                          {"args", {{"External id", 1}, {"Input Dims", {{8, 3, 32, 32}, {16, 3, 3, 3}}},
                                    {"Input Strides", {strides, {27, 9, 3, 1}}}, {"Input type", {type, type}}}}};
  };
  return {{"traceEvents",
           {op("aten::conv2d", 1, top_type), op("aten::cudnn_convolution", 2, call_type),
            {{"ph", "X"}, {"cat", "kernel"}, {"name", kernel}, {"ts", 3}, {"dur", 4}, {"args", {{"External id", 1}}}}}}};
}

std::map<std::string, std::string> settings(const MeasuredTrace& t) {
  std::map<std::string, std::string> m;
  for (const auto& s : t.configuration) m[s.option] = s.value;
  return m;
}

}  // namespace

TEST_CASE("check: a trace tells the batch, layout, precision and runtime it ran, and a differing option is a mismatch") {
  const nlohmann::json nchw = {3072, 1024, 32, 1}, nhwc = {3072, 1, 96, 3};
  using M = std::map<std::string, std::string>;
  // timm's harness: fp32 weights under autocast, NCHW, eager.
  CHECK(settings(trace_from_json(one_conv_trace("float", "c10::Half", nchw, "sm90_xmma_fprop"), "t.json")) ==
        M{{"batch", "8"}, {"layout", "nchw"}, {"dtype", "fp16"}, {"amp", "on"}, {"runtime", "eager"}});
  // model.half() in channels_last.
  CHECK(settings(trace_from_json(one_conv_trace("c10::Half", "c10::Half", nhwc, "sm90_xmma_fprop"), "t.json")) ==
        M{{"batch", "8"}, {"layout", "nhwc"}, {"dtype", "fp16"}, {"amp", "off"}, {"runtime", "eager"}});
  // fp32 PyTorch.
  CHECK(settings(trace_from_json(one_conv_trace("float", "float", nchw, "sm90_xmma_fprop"), "t.json")) ==
        M{{"batch", "8"}, {"layout", "nchw"}, {"dtype", "fp32"}, {"amp", "off"}, {"runtime", "eager"}});
  // torch.compile: autocast's casts are inside its kernels, so amp is not
  // told, and it chooses convolution layouts itself, so layout is not either.
  CHECK(settings(trace_from_json(one_conv_trace("c10::Half", "c10::Half", nhwc, "triton_poi_fused_relu_0"), "t.json")) ==
        M{{"batch", "8"}, {"dtype", "fp16"}, {"runtime", "inductor"}});
  // Strides that are neither layout, and a kernel list, tell nothing of it.
  CHECK(settings(trace_from_json(one_conv_trace("float", "float", {1, 2, 3, 4}, "k"), "t.json")).count("layout") == 0);
  CHECK(trace_from_json(nlohmann::json::parse(R"({"list": [["k", 1.0]]})"), "row.json").configuration.empty());

  AnalyzeOptions o;
  o.load.batch = 1;
  const Analysis a = analyze_file(test::data("tiny_cnn.onnx"), test::gpu("h200"), o);  // eager nchw amp fp16
  const MeasuredTrace t = trace_from_json(one_conv_trace("c10::Half", "c10::Half", nhwc, "k"), "t.json");
  std::vector<std::string> differ;
  for (const auto& m : configuration_mismatches(a, t)) differ.push_back(m.trace.option + " " + m.predicted);
  CHECK(differ == std::vector<std::string>{"batch 1", "layout nchw", "amp on"});
}

TEST_CASE("check: traces torch.profiler exported on the H200 pair every convolution and GEMM by shape") {
  // tests/data/traces/README.md: calibrate/measure/capture_trace.py, one eager forward each.
  struct Case {
    const char* model;
    int batch;
    size_t kernels;  // GPU kernels in the forward
    int copies;      // memcpy / memset events beside them
    int compute;     // convolutions and GEMMs
  };
  for (const Case& k : {Case{"resnet18", 1, 108, 0, 21}, Case{"efficientnet_b0", 1, 372, 3, 68},
                        Case{"resnet50", 16, 282, 7, 54}}) {
    CAPTURE(k.model);
    AnalyzeOptions o;
    o.load.batch = k.batch;
    o.exec = cuda_graph_harness(default_runtime(), DType::fp16);  // as the traces ran: .half(), channels_last
    const Analysis a = analyze_file(test::zoo(fmt::format("runtime/{}.onnx", k.model)), test::gpu("h200"), o);
    const MeasuredTrace t =
        read_trace(test::data(fmt::format("traces/{}_b{}_eager_h200.profiler.json.gz", k.model, k.batch)));
    CHECK(t.kernels.size() == k.kernels);
    CHECK(t.copies == k.copies);
    CHECK(t.steps == 0);
    const TraceCheck c = check_against_trace(a, t);
    // Every measured convolution and GEMM was launched by an op whose input
    // sizes the profiler recorded, and each fits the predicted problem it pairs with.
    CHECK(c.shape_compared == k.compute);
    CHECK(c.shape_matched == k.compute);
    int compute_pairs = 0;
    for (const auto& p : c.pairs)
      if (p.predicted >= 0 && p.measured >= 0 &&
          std::string(kernel_kind(a.kernels[size_t(p.predicted)])) == "compute")
        ++compute_pairs;
    CHECK(compute_pairs == k.compute);
    CHECK(c.paired >= int(k.kernels) * 9 / 10);
  }
}

TEST_CASE("check: with the shapes record_shapes=True writes, a missing convolution is found where it is missing") {
  AnalyzeOptions o;
  o.load.batch = 1;
  o.exec = cuda_graph_harness(default_runtime(), DType::fp16);  // the trace's harness: .half(), channels_last
  const Analysis a = analyze_file(test::zoo("runtime/resnet18.onnx"), test::gpu("h200"), o);
  const MeasuredTrace one = read_trace(test::data("traces/resnet18_b1_eager_h200.trace.json"));
  const TraceCheck full = check_against_trace(a, one);
  // Each measured compute kernel gets its launching op's shapes from the
  // predicted problem it pairs with; one with a unique signature is dropped.
  std::map<int, const KernelResult*> partner;  // measured index -> predicted kernel
  std::map<std::vector<int64_t>, int> signatures;
  for (const auto& p : full.pairs)
    if (p.predicted >= 0 && p.measured >= 0 && !shape_signature(a.kernels[size_t(p.predicted)]).empty()) {
      partner[p.measured] = &a.kernels[size_t(p.predicted)];
      ++signatures[shape_signature(a.kernels[size_t(p.predicted)])];
    }
  REQUIRE(partner.size() == 21);
  int dropped = -1;
  for (const auto& [j, k] : partner)
    if (signatures[shape_signature(*k)] == 1 && j > 10) {
      dropped = j;
      break;
    }
  REQUIRE(dropped >= 0);
  // The trace of the measured kernels in `order`, each compute kernel's op
  // with the shapes of the problem it paired with.
  auto trace_of = [&](const std::vector<int>& order) {
    nlohmann::json events = nlohmann::json::array();
    for (size_t at = 0; at < order.size(); ++at) {
      const int j = order[at];
      const int64_t id = int64_t(at) + 1;
      if (partner.count(j)) {
        const auto& problem = partner[j]->kernel.layer->problem;
        nlohmann::json dims;
        if (const auto* c = std::get_if<ConvProblem>(&problem))
          dims = {{c->N, c->C, c->H, c->W}, {c->K, c->C / c->groups, c->R, c->S}, nlohmann::json::array()};
        else if (const auto* g = std::get_if<GemmProblem>(&problem))
          dims = {{g->N}, {g->M, g->K}, {g->K, g->N}};
        events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::convolution"}, {"ts", double(at)},
                          {"dur", 1}, {"args", {{"External id", id}, {"Input Dims", dims}}}});
      }
      events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", one.kernels[size_t(j)].name}, {"ts", double(at)},
                        {"dur", one.kernels[size_t(j)].duration_us}, {"args", {{"External id", id}}}});
    }
    const std::string path = test::write_temp("tilewave_shapes.trace.json", nlohmann::json{{"traceEvents", events}}.dump());
    MeasuredTrace t = read_trace(path);
    std::filesystem::remove(path);
    return t;
  };
  std::vector<int> order(one.kernels.size());
  std::iota(order.begin(), order.end(), 0);
  SUBCASE("one convolution did not run") {
    std::vector<int> without = order;
    without.erase(without.begin() + dropped);
    const TraceCheck c = check_against_trace(a, trace_of(without));
    CHECK(c.shape_compared == 20);
    CHECK(c.shape_matched == 20);
    int unpaired = -1;
    for (const auto& p : c.pairs)
      if (p.predicted >= 0 && p.measured < 0 && !shape_signature(a.kernels[size_t(p.predicted)]).empty())
        unpaired = p.predicted;
    REQUIRE(unpaired >= 0);
    CHECK(&a.kernels[size_t(unpaired)] == partner[dropped]);
  }
  SUBCASE("two convolutions ran in the other order: both pairs are marked as not fitting") {
    const int next = std::next(partner.find(dropped))->first;
    REQUIRE(shape_signature(*partner[next]) != shape_signature(*partner[dropped]));
    std::vector<int> swapped = order;
    std::swap(swapped[size_t(dropped)], swapped[size_t(next)]);
    const TraceCheck c = check_against_trace(a, trace_of(swapped));
    CHECK(c.shape_compared == 21);
    CHECK(c.shape_matched == 19);
  }
}

TEST_CASE("check: a scheduled profile of several steps compares the last; Kineto's older names and gzip read too") {
  // Kineto's shape: CPU step annotations, launch calls and kernels tied by
  // args.correlation, flow and metadata events in between.
  const MeasuredTrace one = read_trace(test::data("traces/resnet18_b1_eager_h200.trace.json"));
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 0}, {"args", {{"name", "python"}}}});
  int64_t corr = 1;
  double cpu_us = 0, gpu_us = 1000;
  for (int step = 1; step <= 3; ++step) {
    const double step_start = cpu_us;
    const size_t n = step == 3 ? one.kernels.size() : 4;  // earlier steps: other work
    for (size_t k = 0; k < n; ++k, ++corr) {
      const std::string name = step == 3 ? one.kernels[k].name : "void warmup_kernel<float>()";
      const double dur = step == 3 ? one.kernels[k].duration_us : 5.0;
      events.push_back({{"ph", "X"}, {"cat", step == 2 ? "Runtime" : "cuda_runtime"}, {"name", "cudaLaunchKernel"},
                        {"ts", cpu_us}, {"dur", 3}, {"args", {{"correlation", corr}}}});
      events.push_back({{"ph", "s"}, {"id", corr}, {"cat", "ac2g"}, {"ts", cpu_us}});
      events.push_back({{"ph", "X"}, {"cat", step == 2 ? "Kernel" : "kernel"}, {"name", name}, {"ts", gpu_us},
                        {"dur", dur}, {"args", {{"correlation", corr}, {"device", 0}}}});
      cpu_us += 4, gpu_us += dur;
    }
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", fmt::format("ProfilerStep#{}", step)},
                      {"ts", step_start}, {"dur", cpu_us - step_start}});
    events.push_back({{"ph", "X"}, {"cat", "gpu_user_annotation"}, {"name", fmt::format("ProfilerStep#{}", step)},
                      {"ts", 0}, {"dur", 1e9}});
    cpu_us += 100;
  }
  const std::string text = nlohmann::json{{"schemaVersion", 1}, {"traceEvents", events}}.dump();
  const std::string plain = test::write_temp("tilewave_steps.trace.json", text);
  const std::string packed = (std::filesystem::temp_directory_path() / "tilewave_steps.trace.json.gz").string();
  gzFile gz = gzopen(packed.c_str(), "wb");
  REQUIRE(gz);
  REQUIRE(gzwrite(gz, text.data(), unsigned(text.size())) == int(text.size()));
  gzclose(gz);
  for (const std::string& path : {plain, packed}) {
    CAPTURE(path);
    const MeasuredTrace t = read_trace(path);
    CHECK(t.steps == 3);
    CHECK(t.step == "ProfilerStep#3");
    CHECK(t.kernels_in_trace == int(one.kernels.size()) + 8);
    REQUIRE(t.kernels.size() == one.kernels.size());
    for (size_t k = 0; k < t.kernels.size(); ++k) CHECK(t.kernels[k].name == one.kernels[k].name);
  }
  // A gzip file cut short is an error naming it, not a partial trace.
  const std::string whole = file_bytes(packed);
  const std::string cut = test::write_temp("tilewave_cut.trace.json.gz", whole.substr(0, whole.size() / 2));
  CHECK_THROWS_WITH_AS(read_trace(cut), doctest::Contains("gzip data is corrupt or cut short"), InputError);
  std::filesystem::remove(plain);
  std::filesystem::remove(packed);
  std::filesystem::remove(cut);
}

TEST_CASE("advise: padding 60 channels to 64 is found, re-predicted, and nothing slower is advised") {
  const nlohmann::json layers = nlohmann::json::parse(R"([
    {"op": "conv", "out": 60, "kernel": 3, "stride": 2, "act": "relu"},
    {"op": "conv", "out": 60, "kernel": 3, "act": "relu"},
    {"op": "conv", "out": 128, "kernel": 3, "stride": 2, "act": "relu"},
    {"op": "global_avg_pool"}, {"op": "linear", "out": 10}])");
  const auto written = space::network_from_layers(layers, {16, 3, 112, 112}, "test");
  const std::string path = test::write_temp("tw_advise_60.onnx", written.proto->SerializeAsString());
  AnalyzeOptions o;
  // Graph replay, channels_last: the step is the GPU's, so a faster conv is a faster step.
  o.exec = cuda_graph_harness(default_runtime(), DType::fp16);
  const GpuModel gpu = test::gpu("h200");
  const Analysis base = analyze_file(path, gpu, o);
  const std::vector<Advice> advice = advise(ModelFile(path), gpu, o, base);
  const Advice* channels = nullptr;
  for (const auto& a : advice)
    if (a.kind == "channels") channels = &a;
  REQUIRE(channels);
  CAPTURE(channels->change);
  CAPTURE(channels->detail);
  CHECK(channels->detail.find("60->64") != std::string::npos);
  CHECK(channels->change.find("2 convolutions") != std::string::npos);
  // The advice's "before" is the model as given, and its "after" is what the
  // same network written with 64 channels predicts, computed here apart from
  // advise: the gain is a re-prediction of the changed model, not a guess.
  CHECK(channels->before.time_us == doctest::Approx(base.total.time_us).epsilon(1e-12));
  nlohmann::json padded = layers;
  padded[0]["out"] = padded[1]["out"] = 64;
  const auto written64 = space::network_from_layers(padded, {16, 3, 112, 112}, "test");
  const std::string path64 = test::write_temp("tw_advise_64.onnx", written64.proto->SerializeAsString());
  const Analysis wide = analyze_file(path64, gpu, o);
  CHECK(channels->after.flops == wide.total.flops);
  CHECK(channels->after.time_us == doctest::Approx(wide.total.time_us).epsilon(1e-9));
  CHECK(wide.total.time_us < base.total.time_us);  // 64 channels really are faster here than 60
  // With a gain threshold no change reaches, nothing is advised.
  CHECK(tilewave::advise(ModelFile(path), gpu, o, base, 100.0).empty());
}

TEST_CASE("advise: the batch search reaches past B + B/4 up to the GPU's memory and names the cause of the gain") {
  const GpuModel gpu = test::gpu("h200");
  for (const bool graph : {false, true}) {
    CAPTURE(graph);
    AnalyzeOptions o;
    o.load.batch = 4;
    if (graph) o.exec = cuda_graph_harness(default_runtime(), DType::fp16);
    const ModelFile model(test::data("tiny_cnn.onnx"));
    const Analysis base = model.analyze(gpu, o);
    const std::vector<Advice> advice = advise(model, gpu, o, base);
    const auto batch = std::find_if(advice.begin(), advice.end(), [](const Advice& a) { return a.kind == "batch"; });
    REQUIRE(batch != advice.end());
    CAPTURE(batch->detail);
    // Batch 4 + max(8, 1) = 12 was the old search's end.
    CHECK(batch->change.find("instead of 4") != std::string::npos);
    const int64_t advised = std::stoll(batch->change.substr(std::string("use batch ").size()));
    CHECK(advised > 12);
    // The cause is the host's where the host bounds the step, the GPU's losses where it does not.
    CHECK(base.total.host_bound == !graph);
    CHECK(batch->detail.find(graph ? "the GPU-bound step loses less of its time to" : "host-bound") !=
          std::string::npos);
    CHECK(batch->not_fitted.empty() == base.runtime_calibrated);
  }
}

TEST_CASE("advise: padding follows a residual stream, a depthwise conv and an SE gate, and widens a concat") {
  // Stem (60) + depthwise + SE + project (60), added to the stem: all four
  // writers of the 60-channel stream, and the SE's gate conv, grow together.
  const nlohmann::json residual = nlohmann::json::parse(R"([
    {"op": "conv", "out": 60, "kernel": 3, "stride": 2, "act": "relu", "name": "stem"},
    {"op": "conv", "out": 60, "kernel": 3, "groups": 60, "act": "relu"},
    {"op": "se", "squeeze": 16},
    {"op": "conv", "out": 60, "kernel": 1, "name": "project"},
    {"op": "add", "inputs": ["stem"]},
    {"op": "conv", "out": 128, "kernel": 3, "stride": 2, "act": "relu"},
    {"op": "global_avg_pool"}, {"op": "linear", "out": 10}])");
  AnalyzeOptions o;
  // Graph replay, channels_last: the step is the GPU's, so a faster conv is a faster step.
  o.exec = cuda_graph_harness(default_runtime(), DType::fp16);
  const GpuModel gpu = test::gpu("h200");
  auto channel_advice = [&](const nlohmann::json& layers, const char* file) -> std::optional<Advice> {
    const auto written = space::network_from_layers(layers, {64, 3, 112, 112}, "test");
    const std::string path = test::write_temp(file, written.proto->SerializeAsString());
    const Analysis base = analyze_file(path, gpu, o);
    for (const auto& a : advise(ModelFile(path), gpu, o, base))
      if (a.kind == "channels") return a;
    return std::nullopt;
  };
  const auto grown = channel_advice(residual, "tw_advise_residual.onnx");
  REQUIRE(grown);
  CAPTURE(grown->detail);
  CHECK(grown->change.find("of 3 convolutions") != std::string::npos);  // stem, the SE's expanding fc, project
  CHECK(grown->detail.find("60->64") != std::string::npos);
  CHECK(grown->gain > 0.01);
  // Into a channel concat: each input's growth widens the concat's output,
  // and the conv reading it reads more channels.
  const nlohmann::json concat = nlohmann::json::parse(R"([
    {"op": "conv", "out": 64, "kernel": 3, "stride": 2, "act": "relu", "name": "x"},
    {"op": "conv", "out": 60, "kernel": 3, "act": "relu", "name": "a"},
    {"op": "conv", "out": 60, "kernel": 3, "act": "relu", "input": "x", "name": "b"},
    {"op": "concat", "inputs": ["a", "b"]},
    {"op": "conv", "out": 128, "kernel": 1, "act": "relu"},
    {"op": "global_avg_pool"}, {"op": "linear", "out": 10}])");
  const auto widened = channel_advice(concat, "tw_advise_concat.onnx");
  REQUIRE(widened);
  CAPTURE(widened->detail);
  CHECK(widened->change.find("of 2 convolutions") != std::string::npos);
  CHECK(widened->detail.find("_3 60->64") != std::string::npos);  // a
  CHECK(widened->detail.find("_5 60->64") != std::string::npos);  // b
}

TEST_CASE("every ONNX node's fate is recorded: its kernels, fused, or free") {
  for (const char* runtime : {"eager", "inductor", "tensorrt"}) {
    AnalyzeOptions o;
    o.exec.runtime = find_runtime(runtime);
    const Analysis a = analyze_file(test::zoo("efficientnet_b0.onnx"), test::gpu("h200"), o);
    REQUIRE(int(a.nodes_fate.size()) == a.nodes);
    int free = 0;
    std::vector<int> seen(a.kernels.size(), 0);
    for (const auto& f : a.nodes_fate) {
      free += f.fate == Fate::free;
      CHECK((f.fate == Fate::free) == f.kernels.empty());
      for (int k : f.kernels) {
        ++seen[size_t(k)];
        // A "kernel" node heads one of its kernels; a "fused" one heads none.
        const bool heads = std::any_of(f.kernels.begin(), f.kernels.end(), [&](int x) {
          return a.nodes_fate[size_t(a.kernels[size_t(x)].kernel.nodes.front())].name == f.name;
        });
        CHECK(heads == (f.fate == Fate::kernel));
      }
    }
    CHECK(free == a.free_nodes);
    for (size_t k = 0; k < seen.size(); ++k) CHECK(seen[k] == int(a.kernels[k].kernel.nodes.size()));
  }
}

TEST_CASE("advise: expansion + depthwise blocks fused into dense convolutions, each only if faster") {
  // MobileNetV2's activations are one node (ReLU6 as Clip); EfficientNet-B0's
  // are SiLU written as x * Sigmoid(x). Blocks with an expansion: 16 and 15.
  for (const auto& expected : {std::pair{"mobilenet_v2.onnx", "of 16 expansion + depthwise blocks"},
                                std::pair{"efficientnet_b0.onnx", "of 15 expansion + depthwise blocks"}}) {
    const std::string model = expected.first, blocks = expected.second;  // named, not bound: clang 14 captures these
    CAPTURE(model);
    AnalyzeOptions o;
    o.load.batch = 16;
    const GpuModel gpu = test::gpu("h200");
    const std::string path = test::zoo(model);
    const Analysis base = analyze_file(path, gpu, o);
    const auto advice = advise(ModelFile(path), gpu, o, base);
    const auto it = std::find_if(advice.begin(), advice.end(), [](const Advice& a) { return a.kind == "depthwise"; });
    REQUIRE(it != advice.end());
    CAPTURE(it->change);
    CHECK(it->change.find(blocks) != std::string::npos);
    // A fused block loses its depthwise conv and the activation after it.
    CHECK(it->after.kernels < it->before.kernels);
    CHECK(it->after.flops > it->before.flops);
    CHECK(it->gain > 0.01);
  }
}

TEST_CASE("loss causes are spelled once: the table, the comparison and the JSON take loss_cause_names") {
  const Analysis a = analyze_file(test::zoo("efficientnet_b0.onnx"), test::gpu("h200"), AnalyzeOptions{});
  const Analysis b = analyze_file(test::zoo("resnet18.onnx"), test::gpu("h200"), AnalyzeOptions{});
  std::ostringstream table;
  write_table(table, a);
  const NetworkComparison c = compare_networks(a, b);
  REQUIRE(c.shares.size() == std::size(kLossCauses) + 1);  // useful work, then each cause
  const nlohmann::json loss = analysis_to_json(a, false)["total"]["loss"];
  CHECK(loss.size() == std::size(kLossCauses));
  for (size_t i = 0; i < std::size(kLossCauses); ++i) {
    const LossCauseNames names = loss_cause_names(kLossCauses[i]);
    CAPTURE(names.label);
    CHECK(table.str().find(fmt::format("{} {:.1f}%", names.label, 100 * loss_share(a.total.losses, kLossCauses[i]))) !=
          std::string::npos);
    CHECK(c.shares[i + 1].cause == names.label);
    CHECK(c.shares[i + 1].a == loss_share(a.total.losses, kLossCauses[i]));
    CHECK(loss.at(names.key).get<double>() == loss_share(a.total.losses, kLossCauses[i]));
  }
}

TEST_CASE("node facts carry both shares, and the utilization and losses annotate shows, weighted by time") {
  const Analysis a = analyze_file(test::zoo("efficientnet_b0.onnx"), test::gpu("h200"), AnalyzeOptions{});
  double busy = 0, step = 0;
  for (const NodeFate& f : a.nodes_fate) {
    busy += f.gpu_busy_share, step += f.step_share;
    if (f.longest_kernel < 0) {
      CHECK(f.time_us == 0);
      continue;
    }
    double time = 0, useful = 0, memory = 0;
    for (int k : f.kernels) {
      const KernelResult& r = a.kernels[size_t(k)];
      if (!r.cost || a.nodes_fate[size_t(r.kernel.nodes.front())].name != f.name) continue;
      time += r.cost->time_us, useful += r.cost->utilization * r.cost->time_us;
      memory += r.cost->losses.memory * r.cost->time_us;
      CHECK(r.cost->time_us <= a.kernels[size_t(f.longest_kernel)].cost->time_us);
    }
    CHECK(f.time_us == doctest::Approx(time));
    CHECK(f.utilization == doctest::Approx(useful / time));
    CHECK(f.losses.memory == doctest::Approx(memory / time));
  }
  CHECK(busy == doctest::Approx(1));
  CHECK(step == doctest::Approx(a.total.gpu_busy_us / a.total.time_us));
  CHECK(step < busy);  // eager's loop at batch 1 is host-bound: the step is longer than the GPU's work
}

TEST_CASE("nas's rows stream through the view registry: its csv and jsonl entries format a row, a whole view has none") {
  space::SearchRow r;
  r.index = 7;
  r.encoding = "1-2-3";
  r.cost.time_us = 12.5;
  r.cost.kernels = 4;
  r.cost.bound = "memory";
  const ViewRegistry& views = ViewRegistry::global();
  std::string csv, jsonl;
  views.row_writer<space::SearchRow>("nas", "csv")(r, csv);
  views.row_writer<space::SearchRow>("nas", "jsonl")(r, jsonl);
  std::string expected_csv;
  nas_csv_row(r, expected_csv);
  CHECK(csv == expected_csv);
  CHECK(csv.rfind("7,1-2-3,", 0) == 0);
  const auto j = nlohmann::json::parse(jsonl);
  CHECK(j.at("index") == 7);
  CHECK(j.at("encoding") == "1-2-3");
  // A view written whole streams no rows; an unknown format is the registry's usage error.
  CHECK_THROWS_AS(views.row_writer<space::SearchRow>("analyze", "table"), std::logic_error);
  CHECK_THROWS_AS(views.row_writer<space::SearchRow>("nas", "table"), InputError);
}
