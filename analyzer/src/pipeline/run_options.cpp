#include "tilewave/run_options.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"

namespace tilewave {

namespace {
// The option as the caller spells it: "--batch" on the CLI, "batch" in Python.
std::string option(const RunOptions& o, const char* name) { return o.option_prefix + name; }
}  // namespace

GpuModel gpu_of(const RunOptions& o) { return load_gpu(o.gpu, o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir); }

ExecutionConfig execution_of(const RunOptions& o) {
  // The front ends checked each value against the option table (set_option);
  // execution_from_json checks what a caller of the library set by hand.
  nlohmann::json j = o.execution;
  j["runtime"] = runtime_named(o.runtime, option(o, "runtime")).name();
  j["dtype"] = dtype_name(dtype_named(o.dtype, option(o, "dtype")));
  j["attention"] = o.attention;
  return execution_from_json(j, o.option_prefix.empty() ? "execution" : "options");
}

HostModel host_named(const RunOptions& o) {
  return load_host(o.host.empty() ? default_host_id() : o.host, o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir);
}

std::shared_ptr<const HostModel> host_of(const RunOptions& o, const ExecutionConfig& exec) {
  // Graph replay needs no host.
  if (o.host.empty() && exec.launch != Launch::loop) return nullptr;
  return std::make_shared<const HostModel>(host_named(o));
}

AnalyzeOptions analyze_options(const RunOptions& o) {
  AnalyzeOptions a;
  a.exec = execution_of(o);
  a.host = host_of(o, a.exec);
  if (o.batch > 0) a.load.batch = o.batch;
  else if (o.batch < 0) throw InputError(option(o, "batch"), fmt::format("batch must be positive, not {}", o.batch));
  for (const auto& [name, dims] : o.input_shapes) {
    if (dims.empty()) throw InputError(option(o, "input"), fmt::format("input '{}' has no dimensions", name));
    for (int64_t d : dims)
      if (d < 1) throw InputError(option(o, "input"), fmt::format("input '{}': every dimension must be positive", name));
  }
  a.load.input_shapes = o.input_shapes;
  return a;
}

Target resolve_target(const RunOptions& o) { return {gpu_of(o), analyze_options(o)}; }

std::pair<std::string, std::vector<int64_t>> parse_input_spec(const std::string& spec) {
  const auto eq = spec.find('=');
  auto dims = eq == std::string::npos ? std::nullopt : parse_dims(spec.substr(eq + 1));
  if (!dims) throw InputError("--input", fmt::format("'{}' is not NAME=1x3x224x224", spec));
  return {spec.substr(0, eq), *dims};
}

void require_complete(const Analysis& a, const RunOptions& o) {
  if (o.allow_unmodelled) return;
  if (auto why = incomplete_reason(a))
    throw InputError(a.model_path, *why + (o.option_prefix.empty() ? " (allow_unmodelled=True gives partial totals)"
                                                                   : " (--allow-unmodelled gives partial totals)"));
}

std::vector<int64_t> default_sweep_batches() { return {1, 2, 4, 8, 16, 32, 64, 128, 256}; }

std::vector<Analysis> analyze_batches(const ModelFile& model, const RunOptions& o, const std::vector<int64_t>& batches) {
  if (batches.empty()) throw InputError(option(o, "batch"), "no batch sizes given");
  const GpuModel gpu = gpu_of(o);
  std::vector<Analysis> out;
  for (int64_t b : batches) {
    // 0 would mean "as in the file" here, a batch nobody listed.
    if (b < 1) throw InputError(option(o, "batch"), fmt::format("batch must be positive, not {}", b));
    RunOptions ob = o;
    ob.batch = b;
    AnalyzeOptions options = analyze_options(ob);
    options.parts = kTotalsOnly;  // sweep's views and the report's batch chart read each batch's totals
    out.push_back(model.analyze(gpu, options));
  }
  return out;
}

std::vector<Analysis> analyze_combinations(const ModelFile& model, const RunOptions& o, const CompareAxes& axes,
                                           const std::function<void(const Analysis&, size_t)>& each) {
  // Not given: each runtime's own default (one combination with the key unset).
  auto or_default = [](const std::vector<std::string>& v) { return v.empty() ? std::vector<std::string>{""} : v; };
  for (int64_t b : axes.batches)
    if (b < 1) throw InputError(option(o, "batch"), fmt::format("batch must be positive, not {}", b));
  const std::vector<int64_t> batches = axes.batches.empty() ? std::vector<int64_t>{0} : axes.batches;
  std::vector<Analysis> out;
  for (const auto& gpu_id : axes.gpus)
    for (const auto& runtime : axes.runtimes)
      for (const auto& dtype : axes.dtypes)
        for (const auto& layout : or_default(axes.layouts))
          for (int64_t b : batches) {
            RunOptions oc = o;
            oc.gpu = gpu_id, oc.runtime = runtime, oc.dtype = dtype, oc.batch = b;
            if (!layout.empty()) oc.execution["layout"] = layout;
            const Target t = resolve_target(oc);
            out.push_back(model.analyze(t.gpu, t.options));
            if (each) each(out.back(), out.size() - 1);
          }
  if (out.empty()) throw InputError(model.path, "compare was given no GPU, runtime or dtype");
  return out;
}

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

RankRun analyze_models(const std::vector<std::string>& args, const RunOptions& o, int threads,
                       const ProgressFn& progress) {
  const GpuModel gpu = gpu_of(o);
  RunOptions with_batch = o;
  if (with_batch.batch == 0) with_batch.batch = 1;
  AnalyzeOptions opt = analyze_options(with_batch);
  opt.parts = kTotalsOnly;  // a ranking reads each model's totals (docs/model.md "Result parts")
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
            reasons[i] = *why + (o.option_prefix.empty() ? " (allow_unmodelled=True gives partial totals)"
                                                         : " (--allow-unmodelled gives partial totals)");
            continue;
          }
        results[i] = std::move(a);
      } catch (const InputError& e) {
        reasons[i] = without_file(e.what(), models[i]);  // the row names the file already
      } catch (const std::exception& e) {
        // Not a bad input: an internal error, raised on the calling thread
        // rather than ending the process from a worker.
        std::lock_guard<std::mutex> lock(internal_mutex);
        if (internal_error.empty()) internal_error = models[i] + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) start_or_run(pool, work);
  while (done.load() < models.size()) {
    if (progress) progress(done.load(), models.size(), "models");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (auto& th : pool) th.join();
  if (progress) progress(done.load(), models.size(), "models");
  if (!internal_error.empty()) throw std::runtime_error(internal_error);
  RankRun run;
  for (size_t i = 0; i < models.size(); ++i) {
    if (results[i]) run.analyses.push_back(std::move(*results[i]));
    else run.failed.push_back({models[i], reasons[i]});
  }
  if (run.analyses.empty())
    throw InputError(models.front(), fmt::format("no model could be ranked; the first: {}", reasons.front()));
  return run;
}

std::string rank_failures_summary(const RankRun& run, const RunOptions& o) {
  if (run.failed.empty()) return "";
  return fmt::format("{} of {} models failed; {} ranks the rest", run.failed.size(),
                     run.failed.size() + run.analyses.size(),
                     o.option_prefix.empty() ? "keep_going=True" : "--keep-going");
}

CompareRun compare_models(const std::vector<std::string>& model_paths, const RunOptions& o, const CompareAxes& axes,
                          const std::function<void(const Analysis&, size_t)>& each) {
  CompareRun run;
  for (const auto& path : model_paths)
    for (auto& a : analyze_combinations(ModelFile(path), o, axes, [&](const Analysis& a, size_t i) {
           if (each) each(a, run.analyses.size() + i);
         }))
      run.analyses.push_back(std::move(a));
  if (model_paths.size() == 2 && run.analyses.size() == 2)
    run.networks = compare_networks(run.analyses[0], run.analyses[1]);
  return run;
}

std::vector<std::string> split_list(const std::string& s, const std::string& what) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string part; std::getline(ss, part, ',');)
    if (!part.empty()) out.push_back(part);
  if (out.empty()) throw UsageError(what, fmt::format("'{}' names nothing (give a comma-separated list)", s));
  return out;
}

ReportRun analyze_for_report(const std::string& model_path, const std::string& vs, const RunOptions& options,
                             const std::vector<int64_t>& batches, const std::vector<std::string>& compare) {
  // A GPU list, as on every command: the first is the report's GPU, the rest compared.
  RunOptions o = options;
  std::vector<std::string> compared;
  if (const auto comma = o.gpu.find(','); comma != std::string::npos) {
    compared = split_list(o.gpu.substr(comma + 1), option(o, "gpu"));
    o.gpu = o.gpu.substr(0, comma);
  }
  compared.insert(compared.end(), compare.begin(), compare.end());
  const GpuModel gpu = gpu_of(o);
  std::vector<std::pair<RunOptions, GpuModel>> others;  // o on each compared GPU but the report's own
  for (const auto& id : compared) {
    RunOptions og = o;
    og.gpu = id;
    GpuModel other = gpu_of(og);
    if (other.id != gpu.id) others.emplace_back(std::move(og), std::move(other));
  }
  const auto sweep = [&](const ModelFile& model, const RunOptions& on) {
    std::vector<Analysis> s = analyze_batches(model, on, batches);
    std::sort(s.begin(), s.end(), [](const Analysis& a, const Analysis& b) { return a.batch < b.batch; });
    return s;
  };
  const auto report_of = [&](const std::string& path) {
    const ModelFile model(path);
    ReportInput in;
    in.main = model.analyze(gpu, analyze_options(o));
    require_complete(in.main, o);
    in.batch_sweep = sweep(model, o);
    for (const auto& [og, other] : others) {
      in.other_gpus.push_back(model.analyze(other, analyze_options(o)));
      in.other_gpu_sweeps.push_back(sweep(model, og));
    }
    std::vector<const Analysis*> runs = {&in.main};
    for (const auto& x : in.other_gpus) runs.push_back(&x);
    in.fastest_gpu = fastest_gpu(runs);
    return in;
  };
  ReportRun run;
  run.first = report_of(model_path);
  if (!vs.empty()) {
    run.second = report_of(vs);
    run.comparison = compare_networks(run.first.main, run.second->main);
  }
  return run;
}

}  // namespace tilewave
