#include "commands.h"
#include "tilewave/exec_options.h"
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
#include "tilewave/view_registry.h"

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
  set_options(o, o.option_values, o.command, o.command == "compare" ? &o.compare_axes : nullptr);
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
  const Analysis a = analyze_file(model, resolve_target(o));
  warn_unmodelled(a, o);
  const ViewRegistry& views = ViewRegistry::global();
  views.find("analyze", o.format);
  // The trace first: a reader of stdout that stops early (`| head`) cannot cost it.
  if (!o.trace_out.empty()) write_output(o.trace_out, [&](std::ostream& os) { write_chrome_trace(os, a); });
  write_output(o.output, [&](std::ostream& os) {
    views.write(os, "analyze", o.format, AnalysisViewInput{a, ViewOptions{worst, by}});
  });
  return 0;
}

int cmd_layers(const CommonOptions& o, const std::string& path) {
  const GpuModel gpu = gpu_of(o);
  const CostModel cost_model(gpu);
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "layers", o.format, LayersViewInput{path, cost_model});
  });
  return 0;
}

int cmd_extract(const CommonOptions& o, const std::string& model_path) {
  const AnalyzeOptions opt = analyze_options(o);
  const Model model = load_onnx(model_path, opt.load);
  const GpuModel gpu = gpu_for(gpu_of(o), opt.exec);
  const CostModel costs(gpu);
  const KernelGraph lowered = lower_model(model, opt.exec, &costs);
  const std::string stem = std::filesystem::path(model_path).stem().string();
  write_output(o.output, [&](std::ostream& os) {
    write_extracted_layers(os, model, lowered, stem, [&](const Kernel& k) {
      fmt::print(std::cerr, "tilewave: warning: {}: {} ({}) is unmodelled and left out: {}\n", model_path, k.name,
                 k.ops.text(), k.unmodelled_reason);
    });
  });
  return 0;
}

int cmd_rank(const CommonOptions& o, const std::vector<std::string>& args, int threads, bool keep_going) {
  Progress progress("tilewave rank");
  const RankRun run = analyze_models(args, o, threads, progress.callback());
  progress.finish();
  if (!run.failed.empty() && !keep_going) {
    // A ranking without some of the models would look complete: nothing is
    // written. One line per failure, the last saying how many and what ranks the rest.
    for (size_t i = 0; i < run.failed.size(); ++i)
      std::cerr << "tilewave: error: " << printable(run.failed[i].model_path) << ": " << printable(run.failed[i].reason)
                << (i + 1 == run.failed.size() ? " (" + rank_failures_summary(run, o) + ")" : "") << "\n";
    return 1;
  }
  for (const auto& a : run.analyses) warn_unmodelled(a, o);
  const Ranking ranking = rank_models(run.analyses);
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "rank", o.format, RankViewInput{run.analyses, ranking, run.failed});
  });
  if (o.format == "csv")
    if (auto n = host_bound_note(ranking.host_bound, run.analyses.size(), "models")) note(*n);
  return 0;
}

int cmd_sweep(const CommonOptions& o, const std::string& model_path, const std::string& batches) {
  const std::vector<Analysis> as = analyze_batches(ModelFile(model_path), o, parse_batches(batches));
  for (size_t i = 0; i < as.size(); ++i) warn_unmodelled(as[i], o, i == 0);  // the same causes at every batch
  write_output(o.output,
               [&](std::ostream& os) { ViewRegistry::global().write(os, "sweep", o.format, SweepViewInput{as}); });
  if (o.format == "csv")
    for (const auto& n : notes_json(as, "batches")) note(n.get<std::string>());
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

int cmd_compare(const CommonOptions& o, const std::vector<std::string>& model_paths, const std::string& batches) {
  CompareAxes axes = o.compare_axes;
  if (!batches.empty()) axes.batches = parse_batches(batches);
  const CompareRun run =
      compare_models(model_paths, o, axes, [&](const Analysis& a, size_t i) { warn_unmodelled(a, o, i == 0); });
  const std::vector<Analysis>& as = run.analyses;
  const std::optional<NetworkComparison>& networks = run.networks;
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "compare", o.format, CompareViewInput{as, networks ? &*networks : nullptr});
  });
  if (o.format == "csv")
    for (const auto& n : notes_json(as, "rows")) note(n.get<std::string>());
  return 0;
}

int cmd_options(const CommonOptions& o) {
  write_output(o.output,
               [&](std::ostream& os) { ViewRegistry::global().write(os, "options", o.format, TablesViewInput{}); });
  return 0;
}

int cmd_annotate(const CommonOptions& o, const std::string& model_path) {
  const Analysis a = analyze_file(model_path, resolve_target(o));
  warn_unmodelled(a, o);
  const std::string bytes = annotated_onnx(model_path, a, o.output);
  write_output(o.output, [&](std::ostream& os) { os << bytes; });
  return 0;
}

int cmd_check(const CommonOptions& o, const std::string& model_path, const std::string& trace, int rows) {
  const CheckRun run = check_file(model_path, trace, o, [&](const Analysis& a) { warn_unmodelled(a, o); });
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "check", o.format, CheckViewInput{run.analysis, run.trace, run.check, rows});
  });
  return 0;
}

int cmd_advise(const CommonOptions& o, const std::string& model_path) {
  const AdviseRun run = advise_file(model_path, o, [&](const Analysis& a) { warn_unmodelled(a, o); });
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "advise", o.format, AdviceViewInput{run.analysis, run.advice});
  });
  return 0;
}

int cmd_gpus(const CommonOptions& o) {
  write_output(o.output, [&](std::ostream& os) {
    const std::vector<GpuModel> gpus = load_gpu_database(o.gpu_dir.empty() ? default_gpu_dir() : o.gpu_dir);
    ViewRegistry::global().write(os, "gpus", o.format, GpusViewInput{gpus});
  });
  return 0;
}

int cmd_params(const CommonOptions& o) {
  write_output(o.output,
               [&](std::ostream& os) { ViewRegistry::global().write(os, "params", o.format, TablesViewInput{}); });
  return 0;
}

int cmd_ops(const CommonOptions& o) {
  write_output(o.output, [&](std::ostream& os) {
    ViewRegistry::global().write(os, "ops", o.format, OpsViewInput{OpRegistry::builtin()});
  });
  return 0;
}

}  // namespace tilewave::cli
