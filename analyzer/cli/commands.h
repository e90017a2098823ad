// The subcommands of `tilewave`; subcommands.cpp's table wires them to CLI11. Each returns
// the process exit code and throws InputError for bad input.
#pragma once
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/run_options.h"

namespace tilewave::cli {

// A note for stderr ("tilewave: note: …"), printed once the command has
// succeeded: a failing command prints only its error line.
void note(const std::string& line);
void print_notes();

// The analysing options (RunOptions, shared with the Python module) and the CLI's own.
struct CommonOptions : RunOptions {
  std::string fusion;           // deprecated alias of --runtime (none: eager, trt: tensorrt)
  std::string format = "table";  // a --format the command's views have (view_registry.h)
  std::string output = "-";
  std::string trace_out;  // --trace-out: the predicted timeline as a Chrome trace
  // The option table's flags as given (exec_options.h), keyword -> value:
  // resolve_options sets them on these options, as the Python module's keywords are.
  nlohmann::json option_values = nlohmann::json::object();
  std::string command;     // the subcommand parsed, whose options option_values holds
  CompareAxes compare_axes;  // compare's lists of GPUs, runtimes, dtypes and layouts
  std::string invocation;  // the command line as typed, for the provenance of a file calibrate writes
  std::string made_by;     // --made-by: the command a written GPU file's provenance names instead
};

struct NasOptions {
  std::string space;          // space file
  uint64_t samples = 1000;
  uint64_t seed = 1;
  bool unique = false;        // --unique: without replacement
  bool enumerate = false;     // --enumerate: every candidate once
  std::string shard = "0/1";  // i/n: every n-th candidate from the i-th
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));  // the cores, as rank
  double min_utilization = 0;
  bool pareto = false;
  std::string export_dir;     // --export-onnx
  int top = 10;
};

// The flags as RunOptions reads them: option_values set through the option
// table, the deprecated --fusion as --runtime (with a note). Before any command runs.
void resolve_options(CommonOptions& o);

int cmd_analyze(const CommonOptions& o, const std::string& model, int worst, const std::string& by = "op");
int cmd_layers(const CommonOptions& o, const std::string& layer_set);
int cmd_extract(const CommonOptions& o, const std::string& model);
// Exit 1 with one line per model that failed, unless keep_going ranks the rest (docs/errors.md "Exit codes").
int cmd_rank(const CommonOptions& o, const std::vector<std::string>& models, int threads, bool keep_going);
int cmd_sweep(const CommonOptions& o, const std::string& model, const std::string& batches);
int cmd_gpus(const CommonOptions& o);
// Concrete changes with predicted gains (docs/report.md).
int cmd_advise(const CommonOptions& o, const std::string& model);
// The prediction against a measured PyTorch profiler trace (docs/report.md).
int cmd_check(const CommonOptions& o, const std::string& model, const std::string& trace, int rows);
// The model with each node's prediction in its doc_string (docs/report.md).
int cmd_annotate(const CommonOptions& o, const std::string& model);
// The HTML report (docs/report.md); `compare`: GPU ids, `batches`: the batch chart's sizes.
// `vs` non-empty: a second network beside the first (docs/report.md "Two networks").
int cmd_report(const CommonOptions& o, const std::string& model, const std::string& compare, const std::string& batches,
               const std::string& vs);
// The model on every combination of the listed GPUs, runtimes, dtypes and batches.
// The axes are o.compare_axes; batches a comma-separated list, empty: the file's.
int cmd_compare(const CommonOptions& o, const std::vector<std::string>& models, const std::string& batches);
int cmd_nas(const CommonOptions& o, const NasOptions& n);
int cmd_nas_merge(const CommonOptions& o, const std::vector<std::string>& files);
int cmd_ops(const CommonOptions& o);
int cmd_params(const CommonOptions& o);
// The option table (exec_options.h) in o.format (md, pyi or json).
int cmd_options(const CommonOptions& o);
int cmd_calibrate_fit(const CommonOptions& o, const std::vector<std::string>& measured, const std::string& dtype, int seed,
                      double holdout);
int cmd_calibrate_fit_networks(const CommonOptions& o, const std::string& netbench, const std::string& models_dir,
                               int seed, double holdout, double kernel_match,
                               const std::string& kernel_times);
int cmd_calibrate_fit_runtime(const CommonOptions& o, const std::string& measured, const std::string& models_dir,
                              const std::string& class_times, const std::vector<std::string>& params);
int cmd_calibrate_carry(const CommonOptions& o, const std::string& to);
int cmd_calibrate_from_benchmark(const CommonOptions& o, const std::vector<std::string>& results,
                                 const std::string& models_dir, const std::string& from, int seed,
                                 const std::string& predictions, bool fit);
int cmd_calibrate_validate(const CommonOptions& o, const std::vector<std::string>& measured, const std::string& dtype, int seed,
                           double holdout, const std::string& predictions);

}  // namespace tilewave::cli
