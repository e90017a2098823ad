// The table of `tilewave`'s subcommands (subcommands.cpp): each entry's
// name, help, options (setup) and handler (run); driver.cpp adds them to
// CLI11 and runs the one parsed. A new subcommand is one entry.
#pragma once
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"

namespace tilewave::cli {

// Every value a subcommand's options write: its setup binds them, its run reads them.
struct Args {
  CommonOptions o;
  int worst = 15;
  std::string analyze_by;  // empty: the format's own (ViewOptions::by)
  // The list defaults are the library's (run_options.h), which the Python module's share.
  std::string sweep_batches = fmt::format("{}", fmt::join(default_sweep_batches(), ","));
  std::string model, layer_set, extract, batches = sweep_batches, measured;
  std::vector<std::string> models, measured_files;
  int seed = 1;
  std::string fit_dtype = "fp16";
  double holdout = 0.2;
  int rank_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  bool rank_keep_going = false;
  std::string compare_gpus, report_batches = sweep_batches, report_vs;
  std::string cmp_batches;  // empty: the file's
  std::string trace;
  NasOptions nas;
  std::vector<std::string> merge_files;
  std::string models_dir = "onnx_models";
  double net_holdout = 0.5;
  std::string fit_net_runtime = "eager-folded";
  double kernel_match = 0.05;
  std::string kernel_times;
  std::vector<std::string> runtime_params{"launch_gap_us"};
  std::string runtime_models_dir = "onnx_models/runtime";
  std::string class_times;
  std::string carry_to;
  std::vector<std::string> bench_results;
  std::string bench_models, bench_from = "h200", bench_predictions;
  bool bench_no_fit = false;
  std::string validate_predictions;
};

// One subcommand: its name and help, the options it binds (setup) and what
// it runs once parsed (run: the exit code; null for a group of subcommands).
struct Subcommand {
  const char* name;
  const char* help;
  void (*setup)(CLI::App*, Args&);
  int (*run)(CLI::App*, Args&);
  std::vector<Subcommand> children = {};  // a group's subcommands
};

// The subcommands, in the order --help lists them.
const std::vector<Subcommand>& subcommands();

}  // namespace tilewave::cli
