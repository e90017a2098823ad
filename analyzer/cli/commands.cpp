#include "commands.h"
#include "tilewave/op_registry.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <mutex>
#include <thread>
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

std::string without_file(const std::string& message, const std::string& file) {
  return message.rfind(file + ": ", 0) == 0 ? message.substr(file.size() + 2) : message;
}

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

namespace {

// rank's inputs: ONNX files, folders (their *.onnx, recursively) and list
// files (one path per line, '#' comments; relative paths from the list's
// folder), in the order given, each model once.
std::vector<std::string> expand_model_args(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    if (seen.insert(p).second) out.push_back(p);
  };
  for (const auto& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(arg, fs::directory_options::skip_permission_denied, ec))
        if (e.is_regular_file(ec) && e.path().extension() == ".onnx") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) throw InputError(arg, "folder holds no .onnx file");
      for (const auto& f : found) add(f);
    } else if (fs::path(arg).extension() == ".txt" || fs::path(arg).extension() == ".list") {
      require_regular_file(arg, "a model list");
      std::ifstream list(arg);
      if (!list) throw InputError(arg, "cannot open model list");
      std::string line;
      while (std::getline(list, line)) {
        const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
        if (b == std::string::npos || line[b] == '#') continue;
        const fs::path p = line.substr(b, e - b + 1);
        add(p.is_absolute() ? p.string() : (fs::path(arg).parent_path() / p).lexically_normal().string());
      }
    } else {
      add(arg);
    }
  }
  if (out.empty()) throw InputError("rank", "no models given");
  return out;
}

}  // namespace

int cmd_rank(const CommonOptions& o, const std::vector<std::string>& args, int threads) {
  const GpuModel gpu = gpu_of(o);
  CommonOptions with_batch = o;
  if (with_batch.batch == 0) with_batch.batch = 1;
  const AnalyzeOptions opt = analyze_options(with_batch);
  const std::vector<std::string> models = expand_model_args(args);
  // Each model on its own: a bad one becomes a failure row, never a stop.
  std::vector<std::optional<Analysis>> results(models.size());
  std::vector<std::string> reasons(models.size());
  std::atomic<size_t> next{0}, done{0};
  std::mutex internal_mutex;
  std::string internal_error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < models.size(); done.fetch_add(1)) {
      try {
        Analysis a = analyze_file(models[i], gpu, opt);
        if (!o.allow_unmodelled)
          if (auto why = incomplete_reason(a)) {
            reasons[i] = *why + " (--allow-unmodelled gives partial totals)";
            continue;
          }
        results[i] = std::move(a);
      } catch (const InputError& e) {
        reasons[i] = without_file(e.what(), models[i]);  // the row names the file already
      } catch (const std::exception& e) {
        // Not a bad input: an internal error, raised on the main thread
        // (exit 3) rather than ending the process from a worker.
        std::lock_guard<std::mutex> lock(internal_mutex);
        if (internal_error.empty()) internal_error = models[i] + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) start_or_run(pool, work);
  Progress progress("tilewave rank");
  while (done.load() < models.size()) {
    progress.update(done.load(), models.size(), "models");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& th : pool) th.join();
  progress.update(done.load(), models.size(), "models");
  progress.finish();
  if (!internal_error.empty()) throw std::runtime_error(internal_error);
  std::vector<Analysis> as;
  std::vector<RankFailure> failed;
  for (size_t i = 0; i < models.size(); ++i) {
    if (results[i]) {
      warn_unmodelled(*results[i], o);
      as.push_back(std::move(*results[i]));
    } else {
      failed.push_back({models[i], reasons[i]});
    }
  }
  if (as.empty()) throw InputError(models.front(), fmt::format("no model could be ranked; the first: {}", reasons.front()));
  write_output(o.output, [&](std::ostream& os) {
    const Ranking ranking = rank_models(as);
    if (o.format == "json") os << rank_to_json(as, ranking, failed).dump(2) << "\n";
    else if (o.format == "csv") write_rank_csv(os, as, ranking, failed);
    else write_rank_table(os, as, ranking, failed);
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

std::vector<std::string> split_list(const std::string& s, const char* what) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) out.push_back(part);
  if (out.empty()) throw UsageError(what, fmt::format("'{}' names nothing (give a comma-separated list)", s));
  return out;
}

int cmd_report(const CommonOptions& options, const std::string& model_path, const std::string& compare_list,
               const std::string& batches, const std::string& vs) {
  // --gpu a,b,c as on every command: the first is the report's GPU, the rest compared.
  CommonOptions o = options;
  std::string compare = compare_list;
  if (const auto comma = o.gpu.find(','); comma != std::string::npos) {
    compare = o.gpu.substr(comma + 1) + (compare.empty() ? "" : "," + compare);
    o.gpu = o.gpu.substr(0, comma);
  }
  const GpuModel gpu = gpu_of(o);
  const std::vector<int64_t> sweep = parse_batches(batches);
  std::vector<GpuModel> others;
  if (!compare.empty())
    for (const auto& id : split_list(compare, "--compare")) {
      CommonOptions og = o;
      og.gpu = id;
      GpuModel other = gpu_of(og);
      if (other.id != gpu.id) others.push_back(std::move(other));
    }
  const auto report_of = [&](const std::string& path, bool first) {
    const ModelFile model(path);
    ReportInput in;
    in.main = model.analyze(gpu, analyze_options(o));
    warn_unmodelled(in.main, o, first);
    in.batch_sweep = analyze_batches(model, o, sweep);
    std::sort(in.batch_sweep.begin(), in.batch_sweep.end(),
              [](const Analysis& a, const Analysis& b) { return a.batch < b.batch; });
    for (const auto& other : others) in.other_gpus.push_back(model.analyze(other, analyze_options(o)));
    return in;
  };
  const ReportInput main = report_of(model_path, true);
  if (vs.empty()) {
    write_output(o.output, [&](std::ostream& os) { write_html_report(os, main); });
    return 0;
  }
  const ReportInput second = report_of(vs, false);
  const NetworkComparison c = compare_networks(main.main, second.main);
  write_output(o.output, [&](std::ostream& os) { write_html_comparison(os, main, second, c); });
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
  std::vector<Analysis> as;
  for (const auto& model_path : model_paths)
    for (auto& a : analyze_combinations(ModelFile(model_path), o, axes,
                                        [&](const Analysis& a, size_t i) { warn_unmodelled(a, o, as.empty() && i == 0); }))
      as.push_back(std::move(a));
  std::optional<NetworkComparison> networks;
  if (model_paths.size() == 2 && as.size() == 2) networks = compare_networks(as[0], as[1]);
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
