// The table of `tilewave`'s subcommands (subcommands.h): each one's options
// and the command it runs (commands.h).
#include <functional>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "subcommands.h"
#include "tilewave/error.h"
#include "tilewave/exec_options.h"
#include "tilewave/lowering.h"
#include "tilewave/output_file.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave/version.h"
#include "tilewave/view_registry.h"

namespace tilewave::cli {

namespace {

// A list option's check: each comma-separated item one of `allowed`.
CLI::Validator members(std::vector<std::string> allowed) {
  return CLI::Validator(
      [allowed](std::string& v) {
        std::stringstream ss(v);
        std::string part;
        while (std::getline(ss, part, ','))
          if (!part.empty() && std::find(allowed.begin(), allowed.end(), part) == allowed.end())
            return "'" + part + "' is not one of " + fmt::format("{}", fmt::join(allowed, ", "));
        return std::string();
      },
      "LIST");
}

// --gpu and --gpu-dir as the option table has them, bound to o directly: for
// calibrate's commands, which read o.gpu themselves (a list for carry).
void add_gpu_options(CLI::App* cmd, CommonOptions& o) {
  for (const ExecOption& e : execution_options())
    if (e.keyword == "gpu") cmd->add_option(cli_flag(e), o.gpu, e.help)->capture_default_str();
    else if (e.keyword == "gpu_dir") cmd->add_option(cli_flag(e), o.gpu_dir, e.help);
}

// A yes/no axis as two flags that exclude each other: CLI11 prints a negated
// name's value ("--amp,--no-amp{false}") as if it were the default, which it
// is not (the runtime decides); each flag's help says what the default is.
void add_on_off(CLI::App* cmd, const std::string& on, const std::string& off, const std::function<void(bool)>& set,
                const std::string& help_on, const std::string& help_off) {
  CLI::Option* yes = cmd->add_flag_function(on, [set](int64_t) { set(true); }, help_on);
  CLI::Option* no = cmd->add_flag_function(off, [set](int64_t) { set(false); }, help_off);
  yes->excludes(no);
}

// Every entry of the option table (exec_options.h) that `command` takes, as
// flags: each writes its value into o.option_values, which resolve_options
// sets through the table as the Python module's keywords are.
void add_execution_options(CLI::App* cmd, CommonOptions& o, const std::string& command) {
  for (const ExecOption& e : execution_options()) {
    if (!takes_option(e, command)) continue;
    const std::string key = e.keyword;
    if (e.kind == OptionKind::on_off) {
      add_on_off(cmd, cli_flag(e), cli_off_flag(e), [&o, key](bool on) { o.option_values[key] = on; }, e.help,
                 e.help_off);
    } else if (e.kind == OptionKind::flag) {
      cmd->add_flag_function(cli_flag(e), [&o, key](int64_t) { o.option_values[key] = true; }, e.help);
    } else if (e.kind == OptionKind::shapes) {
      // As given, NAME=1x3x224x224 each: set_option parses them after parsing, where errors are one line.
      cmd->add_option_function<std::vector<std::string>>(
          cli_flag(e), [&o, key](const std::vector<std::string>& specs) { o.option_values[key] = specs; }, e.help);
    } else if (command == "compare" && !e.compare_keyword.empty()) {
      // An axis: a comma-separated list, each value checked as a single one is.
      const std::string axis = e.compare_keyword;
      const std::vector<std::string> given = compare_axis_default(e);
      auto* opt = cmd->add_option_function<std::string>(
          cli_flag(e), [&o, axis](const std::string& v) { o.option_values[axis] = v; },
          e.help + " (comma-separated: one row each)");
      if (!given.empty()) opt->default_str(fmt::format("{}", fmt::join(given, ",")));
      if (!e.choices.empty()) opt->check(members(e.choices));
    } else {
      auto* opt = cmd->add_option_function<std::string>(
          cli_flag(e), [&o, key](const std::string& v) { o.option_values[key] = v; }, e.help);
      if (!e.choices.empty()) opt->check(CLI::IsMember(e.choices));
      // A plain default ("h200") shows as --help shows defaults; "None" is the runtime's, said in the help.
      if (e.default_value.size() > 1 && e.default_value.front() == '"')
        opt->default_str(e.default_value.substr(1, e.default_value.size() - 2));
    }
  }
}

// --format for `command`: the names, their help and the error line from the
// view registry (view_registry.h), as every command's are.
CLI::Option* add_format_option(CLI::App* cmd, std::string& format, const std::string& command,
                               const std::vector<std::string>& aliases = {}) {
  const ViewRegistry& views = ViewRegistry::global();
  return cmd->add_option("--format", format, views.help(command))
      ->check(CLI::Validator(
          [&views, command, aliases](std::string& v) {
            if (std::find(aliases.begin(), aliases.end(), v) != aliases.end()) return std::string();
            try {
              views.find(command, v, "");
            } catch (const InputError& e) {
              const std::string what = e.what();
              return what.substr(what.find("unknown"));
            }
            return std::string();
          },
          "FORMAT"));
}

void add_model_options(CLI::App* cmd, CommonOptions& o, const std::string& command) {
  add_execution_options(cmd, o, command);
  cmd->add_option("--fusion", o.fusion, "deprecated alias of --runtime: none = eager, trt = tensorrt")
      ->check(CLI::IsMember({"none", "trt"}))
      ->excludes(cmd->get_option("--runtime"));
}

void setup_nas(CLI::App* nas, Args& a) {
  CommonOptions& o = a.o;
  NasOptions& nas_opt = a.nas;
  nas->add_option("space", nas_opt.space, "search-space JSON (docs/nas.md)")->required();
  add_execution_options(nas, o, "nas");
  nas->add_option("--batch", o.batch, "batch size (default 1)");
  auto* nas_samples = nas->add_option("--samples", nas_opt.samples, "candidates in the whole sampling")->capture_default_str()
      ->check(CLI::Range(uint64_t(1), uint64_t(1000000000000)));  // "-1" reads as 2^64-1 (issue 20)
  auto* nas_unique = nas->add_flag("--unique", nas_opt.unique,
                                   "sample without replacement: every candidate distinct (default: with replacement, "
                                   "so a candidate may come twice)");
  nas->add_flag("--enumerate", nas_opt.enumerate,
                "every candidate of the space once, in the file's order (spaces of at most 10,000,000)")
      ->excludes(nas_samples)
      ->excludes(nas_unique);
  nas->add_option("--seed", nas_opt.seed, "sampling seed: the same seed gives the same candidates")
      ->capture_default_str();
  nas->add_option("--shard", nas_opt.shard, "i/n: this run is the i-th of n parts (0-based); nas-merge joins them")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) {
            unsigned long long i = 0, n = 0;
            char extra = 0;
            const bool ok = std::sscanf(v.c_str(), "%llu/%llu%c", &i, &n, &extra) == 2 && n > 0 && i < n;
            return ok ? std::string() : "'" + v + "' is not i/n with 0 <= i < n";
          },
          "i/n"));
  nas->add_option("--threads", nas_opt.threads, "worker threads (default: the cores)")->check(CLI::Range(1, 1024));
  nas->add_option("--min-utilization", nas_opt.min_utilization, "drop candidates below this utilization (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  nas->add_flag("--pareto", nas_opt.pareto, "keep only the latency-vs-FLOPs front");
  nas->add_option("--export-onnx", nas_opt.export_dir, "write the fastest kept candidates as ONNX into this folder");
  nas->add_option("--export-top", nas_opt.top, "how many --export-onnx writes (the fastest kept)")->capture_default_str()->check(CLI::Range(1, 100000));
  add_format_option(nas, o.format, "nas", {"json"})->description(ViewRegistry::global().help("nas") +
                                                                 "; 'json' is jsonl's old name");
  nas->add_option("-o,--output", o.output, "output file (default: stdout)");
}

// A command that writes a GPU file: where, and what its provenance names as the
// command that made it. A script that runs tilewave on files in its own
// temporary folders stamps itself (--made-by), since those paths name nothing
// a reader can follow (docs/calibration.md "Provenance").
void add_gpu_file_output(CLI::App* c, CommonOptions& o) {
  c->add_option("-o,--output", o.output, "GPU file to write (default: stdout)");
  c->add_option("--made-by", o.made_by,
                "the command the written file's provenance names (default: this one, as typed)");
}

// `calibrate`'s subcommands (calibrate_commands.cpp).
std::vector<Subcommand> calibrate_subcommands() {
  return {
      {"fit", "fit the GPU file's parameters to measured layers",
       [](CLI::App* c, Args& a) {
         c->add_option("measured", a.measured_files, "measured layer sets (tilewave-calibrate measure output)")->required();
         add_gpu_options(c, a.o);
         add_gpu_file_output(c, a.o);
         c->add_option("--seed", a.seed, "random seed of the hold-out split")->capture_default_str();
         c->add_option("--holdout", a.holdout, "fraction of layers held out of the fit")->capture_default_str();
         c->add_option("--dtype", a.fit_dtype, "fit only layers of this precision, or 'all'")->capture_default_str();
       },
       [](CLI::App*, Args& a) { return cmd_calibrate_fit(a.o, a.measured_files, a.fit_dtype, a.seed, a.holdout); }},
      {"fit-networks", "fit the network-scope parameters (L2 reuse, launch gap) to measured networks",
       [](CLI::App* c, Args& a) {
         c->add_option("measured", a.measured, "network measurements (calibrate/measure/netbench output)")->required();
         add_gpu_options(c, a.o);
         c->add_option("--models-dir", a.models_dir, "where <model>.onnx for each network is")->capture_default_str();
         c->add_option("--runtime", a.fit_net_runtime,
                       "the runtime the networks ran in (calibrate/measure/netbench's runs: eager-folded)")
             ->check(CLI::IsMember(runtime_names()))
             ->capture_default_str();
         add_gpu_file_output(c, a.o);
         c->add_option("--seed", a.seed, "random seed of the hold-out split")->capture_default_str();
         c->add_option("--holdout", a.net_holdout, "fraction of networks held out of the fit")->capture_default_str();
         c->add_option("--kernel-match", a.kernel_match,
                       "fit only runs whose predicted kernel count is within this fraction of the measured one")
             ->capture_default_str();
         c->add_option("--kernel-times", a.kernel_times,
                       "kernels timed inside the networks (calibrate/pair/eltwise_in_network.py): fit the L2 terms to them");
       },
       [](CLI::App*, Args& a) {
         a.o.runtime = a.fit_net_runtime;
         return cmd_calibrate_fit_networks(a.o, a.measured, a.models_dir, a.seed, a.net_holdout, a.kernel_match,
                                                a.kernel_times);
       }},
      {"fit-runtime", "fit one runtime's own parameter set to networks measured in that runtime",
       [](CLI::App* c, Args& a) {
         c->add_option("measured", a.measured, "runtime measurements (calibrate/measure/runtime_bench.py bench.jsonl)")
             ->required();
         add_gpu_options(c, a.o);
         c->add_option("--runtime", a.o.runtime, "the runtime whose set is fitted")
             ->check(CLI::IsMember(runtime_names()))
             ->capture_default_str();
         c->add_option("--class-times", a.class_times,
                       "per-class kernel times of the runs (calibrate/pair/class_times.py): fit each class's parameters to them first");
         c->add_option("--params", a.runtime_params, "parameters fitted on whole-network latency (comma-separated)")
             ->delimiter(',')
             ->capture_default_str();
         c->add_option("--models-dir", a.runtime_models_dir, "where <network>.onnx is")->capture_default_str();
         add_gpu_file_output(c, a.o);
       },
       [](CLI::App*, Args& a) {
         return cmd_calibrate_fit_runtime(a.o, a.measured, a.runtime_models_dir, a.class_times, a.runtime_params);
       }},
      {"carry", "carry a calibrated GPU's parameters over to another GPU file",
       [](CLI::App* c, Args& a) {
         add_gpu_options(c, a.o);
         c->add_option("--to", a.carry_to, "target GPU id or file")->required();
         // --gpu (add_gpu_options): the calibrated donors, comma-separated, preferred first.
         add_gpu_file_output(c, a.o);
       },
       [](CLI::App*, Args& a) { return cmd_calibrate_carry(a.o, a.carry_to); }},
      {"from-benchmark", "fit a GPU you do not own to published step times (timm's results files)",
       [](CLI::App* c, Args& a) {
         c->add_option("results", a.bench_results, "timm results CSVs (benchmark-infer-amp-<layout>-….csv)")->required();
         add_gpu_options(c, a.o);
         c->add_option("--models", a.bench_models, "folder of the exports, with their manifest.jsonl")->required();
         c->add_option("--from", a.bench_from, "calibrated GPUs a datasheet-only --gpu is carried from first")
             ->capture_default_str();
         c->add_option("--seed", a.seed, "which half of the families is fitted")->capture_default_str();
         c->add_option("--host", a.o.host, std::string("host assumed to issue the results' loops (default: ") +
                                               default_host_id() + "; the shipped RTX files: builtin)");
         c->add_option("--predictions", a.bench_predictions, "also write each run's prediction (JSON Lines)");
         c->add_flag("--no-fit", a.bench_no_fit,
                     "judge the GPU file as it is (carried first if datasheet-only): tables and --predictions only");
         add_gpu_file_output(c, a.o);
       },
       [](CLI::App*, Args& a) {
         return cmd_calibrate_from_benchmark(a.o, a.bench_results, a.bench_models, a.bench_from, a.seed,
                                                  a.bench_predictions, !a.bench_no_fit);
       }},
      {"validate", "prediction error per op class on measured layers",
       [](CLI::App* c, Args& a) {
         c->add_option("measured", a.measured_files, "measured layer sets")->required();
         add_gpu_options(c, a.o);
         c->add_option("--seed", a.seed, "random seed of the hold-out split")->capture_default_str();
         c->add_option("--holdout", a.holdout, "held-out fraction to report on (0: all layers)")->capture_default_str();
         add_format_option(c, a.o.format, "calibrate validate");
         c->add_option("--dtype", a.fit_dtype, "only layers of this precision, or 'all'")->capture_default_str();
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
         c->add_option("--predictions", a.validate_predictions, "also write the evaluated layers with their predicted time_us (JSONL)");
       },
       [](CLI::App*, Args& a) {
         return cmd_calibrate_validate(a.o, a.measured_files, a.fit_dtype, a.seed, a.holdout, a.validate_predictions);
       }},
  };
}

}  // namespace

// The subcommands, in the order --help lists them.
const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"analyze", "predict per-kernel time and utilization of an ONNX model",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o, "analyze");
         c->add_option("--batch", a.o.batch, "batch size for every graph input (default: as in the file)");
         add_format_option(c, a.o.format, "analyze");
         c->add_option("--top", a.worst, "layers shown in the table")->capture_default_str()->check(CLI::Range(0, 1000000000));
         c->add_option("--by", a.analyze_by, "the table's summary, and the CSV's rows: op (convolution kinds apart), name "
                                             "(what each kernel runs, as nsys sums kernels), node (ONNX nodes with parameters "
                                             "and memory) or kernel (launch order); default: op for the table, kernel for CSV")
             ->check(CLI::IsMember(table_summaries()));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
         c->add_option("--trace-out", a.o.trace_out,
                       "also write the predicted timeline as Chrome trace JSON (Perfetto, chrome://tracing)");
       },
       [](CLI::App*, Args& a) { return cmd_analyze(a.o, a.model, a.worst, a.analyze_by); }},
      {"layers", "predict a layer set (JSONL), or --extract one from a model",
       [](CLI::App* c, Args& a) {
         c->add_option("layer_set", a.layer_set, "layer-set JSONL file (docs/layerset.md)");
         c->add_option("--extract", a.extract, "write the kernels of this ONNX model as a layer set");
         add_model_options(c, a.o, "layers");
         c->add_option("--batch", a.o.batch, "batch size (with --extract)");
         add_format_option(c, a.o.format, "layers");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App* c, Args& a) {
         if (!a.extract.empty() == !a.layer_set.empty()) {
           std::cerr << "tilewave layers: give either a layer-set file or --extract MODEL.onnx\n";
           return 2;
         }
         if (c->count("--format") == 0) a.o.format = ViewRegistry::global().formats("layers").front();
         return a.extract.empty() ? cmd_layers(a.o, a.layer_set) : cmd_extract(a.o, a.extract);
       }},
      {"rank", "order models by predicted latency, beside the FLOPs order",
       [](CLI::App* c, Args& a) {
         c->add_option("models", a.models, "ONNX files, folders of them, or list files (.txt/.list, one path per line)")
             ->required();
         c->add_option("--threads", a.rank_threads, "models analysed at once (default: the cores)")->check(CLI::Range(1, 1024));
         c->add_flag("--keep-going", a.rank_keep_going,
                     "rank the models that could be analysed and list the others, exit 0 (default: exit 1 if any fails)");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
         add_model_options(c, a.o, "rank");
         c->add_option("--batch", a.o.batch, "batch size")->capture_default_str();
         add_format_option(c, a.o.format, "rank");
       },
       [](CLI::App*, Args& a) { return cmd_rank(a.o, a.models, a.rank_threads, a.rank_keep_going); }},
      {"sweep", "utilization and throughput against batch size",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o, "sweep");
         c->add_option("--batch", a.batches, "comma-separated batch sizes")->capture_default_str();
         add_format_option(c, a.o.format, "sweep");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_sweep(a.o, a.model, a.batches); }},
      {"report", "write a self-contained HTML report with plots (docs/report.md)",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         c->add_option("--vs", a.report_vs, "a second ONNX file, side by side on one page: which is faster and why");
         add_model_options(c, a.o, "report");
         c->add_option("--batch", a.o.batch, "batch size (default: as in the file)");
         c->add_option("--compare", a.compare_gpus, "also these GPUs, comma-separated (e.g. a100,l4); the same as "
                                                   "--gpu h200,a100,l4, whose first GPU is the report's");
         c->add_option("--batches", a.report_batches, "batch sizes of the batch chart")->capture_default_str();
         c->add_option("-o,--output", a.o.output, "the HTML file")->required();
       },
       [](CLI::App*, Args& a) { return cmd_report(a.o, a.model, a.compare_gpus, a.report_batches, a.report_vs); }},
      {"compare", "models side by side on several GPUs, runtimes, dtypes or batches",
       [](CLI::App* c, Args& a) {
         c->add_option("models", a.models, "ONNX files, one or more")->required();
         add_execution_options(c, a.o, "compare");
         // --launch graph|loop is --graph/--no-graph's old spelling, kept for one release (issue 33).
         CommonOptions& o = a.o;
         c->add_option_function<std::string>(
               "--launch",
               [&o](const std::string& v) {
                 o.option_values["graph"] = v == "graph";
                 note(fmt::format("--launch is deprecated and goes in the next release; --launch {} means --{}", v,
                                  v == "graph" ? "graph" : "no-graph"));
               },
               "deprecated spelling of --graph (graph) and --no-graph (loop)")
             ->check(CLI::IsMember({"graph", "loop"}))
             ->excludes(c->get_option("--graph"))
             ->excludes(c->get_option("--no-graph"));
         c->add_option("--batch", a.cmp_batches, "batch sizes, comma-separated (default: as in the file)");
         add_format_option(c, a.o.format, "compare");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) {
         return cmd_compare(a.o, a.models, a.cmp_batches);
       }},
      {"annotate", "write the model with each node's prediction in its metadata and a line in its doc string (Netron shows both)",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o, "annotate");
         c->add_option("--batch", a.o.batch, "batch size (default: as in the file)");
         c->add_option("-o,--output", a.o.output, "the annotated ONNX file")->required();
       },
       [](CLI::App*, Args& a) { return cmd_annotate(a.o, a.model); }},
      {"advise", "suggest changes, each with its gain predicted on the changed model",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o, "advise");
         c->add_option("--batch", a.o.batch, "batch size (default: as in the file)");
         add_format_option(c, a.o.format, "advise");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_advise(a.o, a.model); }},
      {"check", "hold the prediction against a measured PyTorch profiler trace",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file of the network that was profiled")->required();
         c->add_option("--trace", a.trace, "Chrome trace JSON, plain or gzip (torch.profiler export_chrome_trace, tensorboard_trace_handler)")->required();
         add_model_options(c, a.o, "check");
         c->add_option("--batch", a.o.batch, "batch size the trace ran at (default: as in the file)");
         c->add_option("--top", a.worst, "pairs shown, furthest apart first")->capture_default_str()->check(CLI::Range(0, 1000000000));
         add_format_option(c, a.o.format, "check");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_check(a.o, a.model, a.trace, a.worst); }},
      {"nas", "sample a search space (onnx_models/spaces) and predict every candidate", setup_nas,
       [](CLI::App* c, Args& a) {
         if (c->count("--format") == 0) a.o.format = ViewRegistry::global().formats("nas").front();
         if (a.o.format == "json") {
           note("nas --format json writes JSON Lines, which is spelled jsonl now (docs/cli.md)");
           a.o.format = "jsonl";
         }
         return cmd_nas(a.o, a.nas);
       }},
      {"nas-merge", "join the shards of a `nas` run, checking none is missing or doubled",
       [](CLI::App* c, Args& a) {
         c->add_option("files", a.merge_files, "the shards' output files")->required();
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_nas_merge(a.o, a.merge_files); }},
      {"gpus", "list the GPU database",
       [](CLI::App* c, Args& a) {
         c->add_option("--gpu-dir", a.o.gpu_dir, "GPU database directory");
         add_format_option(c, a.o.format, "gpus");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_gpus(a.o); }},
      {"options", "list the execution options every command and the Python module take (docs/cli.md)",
       [](CLI::App* c, Args& a) {
         add_format_option(c, a.o.format, "options");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App* c, Args& a) {
         if (c->count("--format") == 0) a.o.format = ViewRegistry::global().formats("options").front();
         return cmd_options(a.o);
       }},
      {"params", "list every parameter of a GPU file and of a host file: unit, default, bounds, scope, owner",
       [](CLI::App* c, Args& a) {
         add_format_option(c, a.o.format, "params");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_params(a.o); }},
      {"ops", "list the supported ONNX ops: opsets, fusion role, kernel per runtime",
       [](CLI::App* c, Args& a) {
         add_format_option(c, a.o.format, "ops");
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_ops(a.o); }},
      {"calibrate", "fit or validate model parameters against measurements",
       [](CLI::App* c, Args&) { c->require_subcommand(1); }, nullptr, calibrate_subcommands()},
  };
  return table;
}

}  // namespace tilewave::cli
