#include "tilewave/run_options.h"

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"

namespace tilewave {

namespace {
// The option as the caller spells it: "--batch" on the CLI, "batch" in Python.
std::string option(const RunOptions& o, const char* name) { return o.option_prefix + name; }
}  // namespace

GpuModel gpu_of(const RunOptions& o) { return load_gpu(o.gpu, o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir); }

ExecutionConfig execution_of(const RunOptions& o) {
  if (o.attention != "fused" && o.attention != "unfused")
    throw InputError(option(o, "attention"), fmt::format("attention is fused or unfused, not '{}'", o.attention));
  nlohmann::json j = o.execution;
  j["runtime"] = runtime_named(o.runtime, option(o, "runtime")).name();
  j["dtype"] = dtype_name(dtype_named(o.dtype, option(o, "dtype")));
  j["attention"] = o.attention;
  return execution_from_json(j, o.option_prefix.empty() ? "execution" : "options");
}

std::shared_ptr<const HostModel> host_of(const RunOptions& o) {
  // Graph replay needs no host.
  if (o.host.empty() && execution_of(o).launch != Launch::loop) return nullptr;
  const std::string dir = o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir;
  std::string id = o.host;
  if (id.empty()) id = gpu_of(o).host;
  return std::make_shared<const HostModel>(id.empty() ? default_host() : load_host(id, dir));
}

AnalyzeOptions analyze_options(const RunOptions& o) {
  AnalyzeOptions a;
  a.exec = execution_of(o);
  a.host = host_of(o);
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
    out.push_back(model.analyze(gpu, analyze_options(ob)));
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
          for (const auto& launch : or_default(axes.launches))
            for (int64_t b : batches) {
              RunOptions oc = o;
              oc.gpu = gpu_id, oc.runtime = runtime, oc.dtype = dtype, oc.batch = b;
              if (!layout.empty()) oc.execution["layout"] = layout;
              if (!launch.empty()) oc.execution["launch"] = launch;
              out.push_back(model.analyze(gpu_of(oc), analyze_options(oc)));
              if (each) each(out.back(), out.size() - 1);
            }
  if (out.empty()) throw InputError(model.path, "compare was given no GPU, runtime or dtype");
  return out;
}

}  // namespace tilewave
