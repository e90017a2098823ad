#include "commands.h"
#include "tilewave/op_registry.h"

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <mutex>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tilewave/output_file.h"
#include "tilewave/progress.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/html_report.h"
#include "tilewave/layer_set.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave/pipeline.h"

using nlohmann::json;

namespace tilewave::cli {

namespace {
std::mutex notes_mutex;
std::vector<std::string> notes;  // the CLI's pending notes, in order
}  // namespace

void note(const std::string& line) {
  std::lock_guard<std::mutex> lock(notes_mutex);
  notes.push_back(line);
}

void print_notes() {
  std::lock_guard<std::mutex> lock(notes_mutex);
  for (const auto& n : notes) {
    // "warning: …" lines keep their own label.
    if (n.rfind("warning: ", 0) == 0) fmt::print(std::cerr, "tilewave: {}\n", printable(n));
    else fmt::print(std::cerr, "tilewave: note: {}\n", printable(n));
  }
  notes.clear();
}

void resolve_options(CommonOptions& o) {
  if (!o.fusion.empty()) {
    const std::string mapped = o.fusion == "trt" ? "tensorrt" : "eager";
    note(fmt::format("--fusion is deprecated and goes in the next release; --fusion {} means --runtime {}", o.fusion,
                     mapped));
    o.runtime = mapped;
    o.fusion.clear();
  }
  for (const auto& spec : o.inputs) {
    auto [name, dims] = parse_input_spec(spec);
    o.input_shapes[name] = std::move(dims);  // the last --input for a name wins
  }
}

namespace {

// One line per cause, with its count; an error instead when the totals
// cannot stand for the model and partial answers were not asked for.
void warn_unmodelled(const Analysis& a, const CommonOptions& o, bool print = true) {
  require_complete(a, o);
  if (!print) return;
  for (const auto& n : a.notes) note(fmt::format("{}: {}", a.model_path, n));
  for (const auto& c : a.unmodelled_causes)
    note(fmt::format("warning: {}: {} kernel{} unmodelled and left out of the totals (first: {}): {}", a.model_path,
                     c.kernels, c.kernels == 1 ? "" : "s", c.first, c.reason));
}

std::vector<int64_t> parse_batches(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto d = parse_dims(part);
    if (!d || d->size() != 1) throw UsageError("--batch", fmt::format("'{}' is not a list like 1,8,64", s));
    if ((*d)[0] < 1) throw UsageError("--batch", fmt::format("batch must be positive, not {}", (*d)[0]));
    out.push_back((*d)[0]);
  }
  if (out.empty()) throw UsageError("--batch", "no batch sizes given");
  return out;
}

}  // namespace

int cmd_analyze(const CommonOptions& o, const std::string& model, int worst, const std::string& by) {
  const GpuModel gpu = gpu_of(o);
  const Analysis a = analyze_file(model, gpu, analyze_options(o));
  warn_unmodelled(a, o);
  const AnalysisView* view = find_analysis_view(o.format);
  if (!view) throw InputError("--format", fmt::format("unknown format '{}'", o.format));
  write_output(o.output, [&](std::ostream& os) { view->write(os, a, ViewOptions{worst, by}); });
  if (!o.trace_out.empty()) write_output(o.trace_out, [&](std::ostream& os) { write_chrome_trace(os, a); });
  return 0;
}

int cmd_layers(const CommonOptions& o, const std::string& path) {
  const GpuModel gpu = gpu_of(o);
  const CostModel cost_model(gpu);
  write_output(o.output, [&](std::ostream& os) {
    if (o.format == "table")
      fmt::print(os, "{:>5} {:<14} {:<6} {:>11} {:>7} {:>8} {:>6} {:>6}  {}\n", "line", "op", "dtype", "pred_us", "util",
                 "bound", "tile", "wave", "kernel");
    scan_layer_set(path, [&](const LayerSetEntry& e, const std::string& text) {
      const KernelCost c = cost_layer(e.layer, cost_model);
      if (o.format == "table") {
        fmt::print(os, "{:>5} {:<14} {:<6} {:>11.2f} {:>6.1f}% {:>8} {:>5.1f}% {:>5.1f}%  {}\n", e.line,
                   layer_kind(e.layer), dtype_name(e.layer.dtype), c.time_us, 100 * c.utilization, bound_name(c.bound),
                   100 * c.tile_eff, 100 * c.wave_eff, c.kernel);
      } else {
        os << append_fields(text, cost_fields(c)) << '\n';
      }
    });
  });
  return 0;
}

int cmd_extract(const CommonOptions& o, const std::string& model_path) {
  const AnalyzeOptions opt = analyze_options(o);
  const Model model = load_onnx(model_path, opt.load);
  const LayerGraph graph = build_layer_graph(model);
  const KernelGraph lowered = lower_model(model, graph, opt.exec);
  const std::string stem = std::filesystem::path(model_path).stem().string();
  write_output(o.output, [&](std::ostream& os) {
    for (const auto& k : lowered.kernels) {
      if (!k.layer) {
        fmt::print(std::cerr, "tilewave: warning: {}: {} ({}) is unmodelled and left out: {}\n", model_path, k.name,
                   k.ops, k.unmodelled_reason);
        continue;
      }
      json j = layer_to_json(*k.layer);
      j["model"] = stem;
      j["node"] = k.name;
      j["onnx_op"] = k.ops;
      j["model_batch"] = model.batch;  // "batch" is a GEMM field
      os << j.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    }
  });
  return 0;
}

int cmd_rank(const CommonOptions& o, const std::vector<std::string>& args, int threads) {
  Progress progress("tilewave rank");
  const RankRun run = analyze_models(args, o, threads, progress.callback());
  progress.finish();
  for (const auto& a : run.analyses) warn_unmodelled(a, o);
  write_output(o.output, [&](std::ostream& os) {
    const Ranking ranking = rank_models(run.analyses);
    if (o.format == "json") os << rank_to_json(run.analyses, ranking, run.failed).dump(2) << "\n";
    else if (o.format == "csv") write_rank_csv(os, run.analyses, ranking, run.failed);
    else write_rank_table(os, run.analyses, ranking, run.failed);
  });
  return 0;
}

int cmd_sweep(const CommonOptions& o, const std::string& model_path, const std::string& batches) {
  const std::vector<Analysis> as = analyze_batches(ModelFile(model_path), o, parse_batches(batches));
  for (size_t i = 0; i < as.size(); ++i) warn_unmodelled(as[i], o, i == 0);  // the same causes at every batch
  write_output(o.output, [&](std::ostream& os) {
    if (o.format == "json") os << sweep_to_json(as).dump(2) << "\n";
    else if (o.format == "csv") write_totals_csv(os, as);
    else write_sweep_table(os, as);
  });
  return 0;
}

int cmd_report(const CommonOptions& o, const std::string& model_path, const std::string& compare,
               const std::string& batches, const std::string& vs) {
  // --gpu a,b,c as on every command: the first is the report's GPU, the rest compared.
  const ReportRun run = analyze_for_report(model_path, vs, o, parse_batches(batches),
                                           compare.empty() ? std::vector<std::string>{} : split_list(compare, "--compare"));
  warn_unmodelled(run.first.main, o);
  write_output(o.output, [&](std::ostream& os) { write_html(os, run); });
  return 0;
}

int cmd_compare(const CommonOptions& o, const std::vector<std::string>& model_paths, const std::string& gpus,
                const std::string& runtimes, const std::string& dtypes, const std::string& batches,
                const std::string& layouts, const std::string& launches) {
  CompareAxes axes;
  axes.gpus = split_list(gpus, "--gpu");
  axes.runtimes = split_list(runtimes, "--runtime");
  axes.dtypes = split_list(dtypes, "--dtype");
  if (!layouts.empty()) axes.layouts = split_list(layouts, "--layout");
  if (!launches.empty()) axes.launches = split_list(launches, "--launch");
  if (!batches.empty()) axes.batches = parse_batches(batches);
  const CompareRun run =
      compare_models(model_paths, o, axes, [&](const Analysis& a, size_t i) { warn_unmodelled(a, o, i == 0); });
  const std::vector<Analysis>& as = run.analyses;
  const std::optional<NetworkComparison>& networks = run.networks;
  write_output(o.output, [&](std::ostream& os) {
    if (o.format == "json") os << compare_to_json(as, networks ? &*networks : nullptr).dump(2) << "\n";
    else if (o.format == "csv") write_totals_csv(os, as);
    else write_compare_table(os, as, networks ? &*networks : nullptr);
  });
  return 0;
}

int cmd_annotate(const CommonOptions& o, const std::string& model_path) {
  const Analysis a = analyze_file(model_path, gpu_of(o), analyze_options(o));
  warn_unmodelled(a, o);
  const std::string bytes = annotated_onnx(model_path, a);
  write_output(o.output, [&](std::ostream& os) { os << bytes; });
  return 0;
}

int cmd_check(const CommonOptions& o, const std::string& model_path, const std::string& trace, int rows) {
  const MeasuredTrace t = read_trace(trace);
  const Analysis a = analyze_file(model_path, gpu_of(o), analyze_options(o));
  warn_unmodelled(a, o);
  const TraceCheck c = check_against_trace(a, t);
  write_output(o.output, [&](std::ostream& os) {
    if (o.format == "json") os << check_to_json(a, t, c).dump(2) << "\n";
    else write_check_table(os, a, t, c, rows);
  });
  return 0;
}

int cmd_advise(const CommonOptions& o, const std::string& model_path) {
  const GpuModel gpu = gpu_of(o);
  const AnalyzeOptions options = analyze_options(o);
  const ModelFile model(model_path);
  const Analysis a = model.analyze(gpu, options);
  warn_unmodelled(a, o);
  const std::vector<Advice> advice = advise(model, gpu, options, a);
  write_output(o.output, [&](std::ostream& os) {
    if (o.format == "json") os << advice_to_json(a, advice).dump(2) << "\n";
    else write_advice_table(os, a, advice);
  });
  return 0;
}

int cmd_gpus(const CommonOptions& o) {
  write_output(o.output, [&](std::ostream& os) {
    const std::string dir = o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir;
    const auto ids = list_gpu_ids(dir);
    if (ids.empty()) throw InputError(dir, "no GPU files (*.json) in this directory");
    json rows = json::array();
    std::vector<GpuModel> gpus;
    size_t id_w = 2, arch_w = 4;  // the columns fit the longest id and architecture
    for (const auto& id : ids) {
      gpus.push_back(load_gpu(id, dir));
      id_w = std::max(id_w, gpus.back().id.size());
      arch_w = std::max(arch_w, gpus.back().arch.size());
    }
    if (o.format != "json")
      fmt::print(os, "{:<{}} {:<28} {:<{}} {:>4} {:>6} {:>9} {:>10} {:>10} {:>9}  {}\n", "id", id_w, "name", "arch", arch_w,
                 "SMs", "MHz", "DRAM GB/s", "fp16 TF/s", "int8 TOP/s", "fp32 TF/s", "trust (runtime sets)");
    for (const GpuModel& g : gpus) {
      auto peak = [&](DType d) { return g.precisions.count(d) ? g.precisions.at(d).peak_tflops : 0.0; };
      std::vector<std::string> runtimes;
      for (const auto& [name, set] : g.runtime_params) runtimes.push_back(name);
      if (o.format == "json") {
        rows.push_back({{"id", g.id}, {"name", g.name}, {"arch", g.arch}, {"sms", g.sms},
                        {"boost_clock_mhz", g.boost_clock_mhz}, {"dram_bandwidth_gbs", g.dram_bandwidth_gbs},
                        {"fp16_tflops", peak(DType::fp16)}, {"int8_tops", peak(DType::int8)},
                        {"fp32_tflops", peak(DType::fp32)}, {"trust", trust_name(g.trust)}, {"params", g.params},
                        {"param_origin", g.param_origin}, {"memory_type", g.memory_type},
                        {"instruction_family", g.instruction_family}, {"runtime_params", g.runtime_params}});
      } else {
        fmt::print(os, "{:<{}} {:<28.28} {:<{}} {:>4} {:>6.0f} {:>9.0f} {:>10.1f} {:>10.1f} {:>9.1f}  {}{}\n", g.id, id_w,
                   g.name, g.arch, arch_w, g.sms, g.boost_clock_mhz, g.dram_bandwidth_gbs, peak(DType::fp16), peak(DType::int8),
                   peak(DType::fp32), trust_name(g.trust),
                   runtimes.empty() ? "" : " (" + fmt::format("{}", fmt::join(runtimes, ", ")) + ")");
      }
    }
    if (o.format == "json") os << rows.dump(2) << "\n";
  });
  return 0;
}

namespace {

// What each runtime launches for an op of this fusion role (docs/model.md "Runtimes").
struct RoleKernels {
  const char* role;
  const char* eager;
  const char* inductor;
  const char* tensorrt;
};

RoleKernels role_kernels(FusionRole role) {
  switch (role) {
    case FusionRole::none: return {"none", "nothing (view or load-time value)", "nothing", "nothing"};
    case FusionRole::gemm:
      return {"gemm", "library kernel (+ bias/BN kernels)", "library kernel", "library kernel + fused epilogue"};
    case FusionRole::elementwise:
      return {"elementwise", "own kernel", "fused into a generated kernel", "epilogue of its producer, else own"};
    case FusionRole::reduction:
      return {"reduction", "own kernel", "fused into a generated kernel", "own kernel"};
    case FusionRole::opaque: break;
  }
  return {"opaque", "own kernel", "own kernel", "own kernel"};
}

}  // namespace

int cmd_ops(const CommonOptions& o) {
  write_output(o.output, [&](std::ostream& os) {
    const OpRegistry& registry = OpRegistry::builtin();
    json rows = json::array();
    if (o.format == "table")
      fmt::print(os, "{:<42} {:<8} {:<12} {}\n", "op", "opsets", "role", "eager | inductor | tensorrt");
    if (o.format == "md")
      fmt::print(os, "| op | opsets | role | eager | inductor | tensorrt |\n| --- | --- | --- | --- | --- | --- |\n");
    for (const auto& [key, rule] : registry.rules()) {
      const std::string name = key.first.empty() ? key.second : key.first + "." + key.second;
      // com.microsoft ops are versioned 1 in their own domain.
      const std::string opsets =
          key.first.empty() ? fmt::format("{}-{}", rule.since_opset, kNewestOpset) : fmt::format("{}", rule.since_opset);
      const RoleKernels k = role_kernels(rule.role);
      if (o.format == "json")
        rows.push_back({{"op", name}, {"domain", key.first}, {"opsets", opsets}, {"role", k.role},
                        {"eager", k.eager}, {"inductor", k.inductor}, {"tensorrt", k.tensorrt},
                        {"shape_function", bool(rule.shape)}, {"lowering", bool(rule.lower)}});
      else if (o.format == "md")
        fmt::print(os, "| {} | {} | {} | {} | {} | {} |\n", name, opsets, k.role, k.eager, k.inductor, k.tensorrt);
      else
        fmt::print(os, "{:<42} {:<8} {:<12} {} | {} | {}\n", name, opsets, k.role, k.eager, k.inductor, k.tensorrt);
    }
    if (o.format == "json") os << rows.dump(2) << "\n";
    else if (o.format == "table") fmt::print(os, "{} ops; docs/ops.md explains the columns\n", registry.size());
  });
  return 0;
}

}  // namespace tilewave::cli
