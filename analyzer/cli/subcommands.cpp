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
#include "tilewave/lowering.h"
#include "tilewave/output_file.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave/version.h"

namespace tilewave::cli {

namespace {

// Runtime names as the help writes them: "a, b or c".
std::string or_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// --runtime's help, from the registry of runtimes: "eager (PyTorch eager), …;
// eager-folded reprints …" (the historical ones after the semicolon).
std::string runtime_help() {
  std::vector<std::string> current, historical;
  for (const RuntimeProfile* r : builtin_runtimes()) {
    if (r->historical()) historical.push_back(fmt::format("{} {}", r->name(), r->help()));
    else current.push_back(fmt::format("{} ({})", r->name(), r->help()));
  }
  std::string help = "what runs the model: " + or_list(current);
  for (const auto& h : historical) help += "; " + h;
  return help;
}

void add_gpu_options(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--gpu", o.gpu, "GPU id (a file stem in the database) or path to a GPU .json")->capture_default_str();
  cmd->add_option("--gpu-dir", o.gpu_dir, "GPU database directory (default: $TILEWAVE_GPU_DIR or the bundled one)");
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

// The execution configuration's axes beside runtime and dtype (docs/model.md
// "Execution configuration").
void add_execution_options(CLI::App* cmd, CommonOptions& o) {
  // Each flag writes its key of the configuration's JSON form: a new axis is one flag here.
  auto set = [&o](const char* key) { return [&o, key](const std::string& v) { o.execution[key] = v; }; };
  cmd->add_option_function<std::string>("--layout", set("layout"),
                                        "activation layout: nchw (PyTorch's default, and the default) or nhwc (channels_last)")
      ->check(CLI::IsMember({"nchw", "nhwc"}));
  add_on_off(cmd, "--amp", "--no-amp", [&o](bool on) { o.execution["amp"] = on; },
             "fp32 weights under torch.autocast(--dtype), as timm's benchmark.py runs them (the default for eager and "
             "inductor at fp16 or bf16)",
             "weights stored in --dtype (model.half()); the default for tensorrt and at fp32, tf32 or int8");
  add_on_off(cmd, "--graph", "--no-graph", [&o](bool on) { o.execution["launch"] = on ? "graph" : "loop"; },
             "the forward replayed as a CUDA graph (tensorrt's default)",
             "a plain Python loop, each op issued by the host (eager's and inductor's default)");
  cmd->add_option("--host", o.host, std::string("the machine issuing a --no-graph loop, the same for every GPU: a host id "
                                                "in gpu_models/hosts/, a .json, or builtin (uncalibrated starting values); "
                                                "default: ") + default_host_id());
}

void add_model_options(CLI::App* cmd, CommonOptions& o) {
  add_gpu_options(cmd, o);
  cmd->add_option("--dtype", o.dtype, "precision: fp32, tf32, fp16, bf16, int8")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16", "int8"}))
      ->capture_default_str();
  cmd->add_option("--runtime", o.runtime, runtime_help())
      ->check(CLI::IsMember(runtime_names()))
      ->capture_default_str();
  cmd->add_option("--fusion", o.fusion, "deprecated alias of --runtime: none = eager, trt = tensorrt")
      ->check(CLI::IsMember({"none", "trt"}))
      ->excludes(cmd->get_option("--runtime"));
  cmd->add_option("--input", o.inputs, "set a whole input shape, NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--attention", o.attention,
                  "fused: attention written as MatMul-Softmax-MatMul is one flash-attention kernel, as PyTorch's "
                  "scaled_dot_product_attention runs it; unfused: separate kernels, for models that compute it by hand")
      ->check(CLI::IsMember({"fused", "unfused"}))
      ->capture_default_str();
  cmd->add_flag("--allow-unmodelled", o.allow_unmodelled,
                "give totals marked partial when kernels cannot be modelled, instead of exit 1");
  add_execution_options(cmd, o);
}

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

void setup_nas(CLI::App* nas, Args& a) {
  CommonOptions& o = a.o;
  NasOptions& nas_opt = a.nas;
  nas->add_option("space", nas_opt.space, "search-space JSON (docs/nas.md)")->required();
  add_gpu_options(nas, o);
  nas->add_option("--dtype", o.dtype, "precision: fp32, tf32, fp16, bf16, int8")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16", "int8"}))
      ->capture_default_str();
  add_execution_options(nas, o);
  nas->add_option("--runtime", o.runtime, or_list(runtime_names(false)))
      ->check(CLI::IsMember(runtime_names(false)))
      ->capture_default_str();
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
  nas->add_option("--format", o.format, "csv or jsonl (JSON Lines; 'json' is its old name)")
      ->check(CLI::IsMember({"csv", "jsonl", "json"}));
  nas->add_option("-o,--output", o.output, "output file (default: stdout)");
}

// `calibrate`'s subcommands (calibrate_commands.cpp).
std::vector<Subcommand> calibrate_subcommands() {
  return {
      {"fit", "fit the GPU file's parameters to measured layers",
       [](CLI::App* c, Args& a) {
         c->add_option("measured", a.measured_files, "measured layer sets (tilewave-calibrate measure output)")->required();
         add_gpu_options(c, a.o);
         c->add_option("-o,--output", a.o.output, "GPU file to write (default: stdout)");
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
         c->add_option("-o,--output", a.o.output, "GPU file to write (default: stdout)");
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
         c->add_option("-o,--output", a.o.output, "GPU file to write (default: stdout)");
       },
       [](CLI::App*, Args& a) {
         return cmd_calibrate_fit_runtime(a.o, a.measured, a.runtime_models_dir, a.class_times, a.runtime_params);
       }},
      {"carry", "carry a calibrated GPU's parameters over to another GPU file",
       [](CLI::App* c, Args& a) {
         add_gpu_options(c, a.o);
         c->add_option("--to", a.carry_to, "target GPU id or file")->required();
         // --gpu (add_gpu_options): the calibrated donors, comma-separated, preferred first.
         c->add_option("-o,--output", a.o.output, "GPU file to write (default: stdout)");
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
         c->add_option("-o,--output", a.o.output, "GPU file to write (default: stdout)");
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
         c->add_option("--format", a.o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
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
         add_model_options(c, a.o);
         c->add_option("--batch", a.o.batch, "batch size for every graph input (default: as in the file)");
         std::vector<std::string> formats;
         for (const auto& v : analysis_views()) formats.push_back(v.format);
         c->add_option("--format", a.o.format, fmt::format("{}", fmt::join(formats, ", ")))->check(CLI::IsMember(formats));
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
         add_model_options(c, a.o);
         c->add_option("--batch", a.o.batch, "batch size (with --extract)");
         c->add_option("--format", a.o.format, "jsonl or table")->check(CLI::IsMember({"jsonl", "table"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App* c, Args& a) {
         if (!a.extract.empty() == !a.layer_set.empty()) {
           std::cerr << "tilewave layers: give either a layer-set file or --extract MODEL.onnx\n";
           return 2;
         }
         if (c->count("--format") == 0) a.o.format = "jsonl";
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
         add_model_options(c, a.o);
         c->add_option("--batch", a.o.batch, "batch size")->capture_default_str();
         c->add_option("--format", a.o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
       },
       [](CLI::App*, Args& a) { return cmd_rank(a.o, a.models, a.rank_threads, a.rank_keep_going); }},
      {"sweep", "utilization and throughput against batch size",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o);
         c->add_option("--batch", a.batches, "comma-separated batch sizes")->capture_default_str();
         c->add_option("--format", a.o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_sweep(a.o, a.model, a.batches); }},
      {"report", "write a self-contained HTML report with plots (docs/report.md)",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         c->add_option("--vs", a.report_vs, "a second ONNX file, side by side on one page: which is faster and why");
         add_model_options(c, a.o);
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
         c->add_option("--gpu", a.cmp_gpus, "GPU ids, comma-separated")->capture_default_str();
         c->add_option("--gpu-dir", a.o.gpu_dir, "GPU database directory (default: the bundled one)");
         c->add_option("--runtime", a.cmp_runtimes,
                       "runtimes, comma-separated (" + fmt::format("{}", fmt::join(runtime_names(false), ", ")) + ")")
             ->capture_default_str()
             ->check(members(runtime_names()));
         c->add_option("--dtype", a.cmp_dtypes, "dtypes, comma-separated")
             ->capture_default_str()
             ->check(members({"fp32", "tf32", "fp16", "bf16", "int8"}));
         c->add_option("--layout", a.cmp_layouts, "layouts, comma-separated (nchw, nhwc; default: each runtime's)")
             ->check(members({"nchw", "nhwc"}));
         c->add_option("--launch", a.cmp_launches, "launch modes, comma-separated (graph, loop; default: each runtime's)")
             ->check(members({"graph", "loop"}));
         CommonOptions& o = a.o;
         add_on_off(c, "--amp", "--no-amp", [&o](bool on) { o.execution["amp"] = on; },
                    "fp32 weights under autocast(--dtype) in every configuration",
                    "weights stored in --dtype in every configuration (default: each runtime's)");
         c->add_option("--host", a.o.host, std::string("the machine issuing loop launches, the same for every GPU (default: ") +
                                               default_host_id() + ")");
         c->add_option("--batch", a.cmp_batches, "batch sizes, comma-separated (default: as in the file)");
         c->add_option("--input", a.o.inputs, "set a whole input shape, NAME=1x3x224x224 (repeatable)");
         c->add_flag("--allow-unmodelled", a.o.allow_unmodelled, "give totals marked partial instead of exit 1");
         c->add_option("--format", a.o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) {
         return cmd_compare(a.o, a.models, a.cmp_gpus, a.cmp_runtimes, a.cmp_dtypes, a.cmp_batches, a.cmp_layouts,
                                 a.cmp_launches);
       }},
      {"annotate", "write the model with each node's prediction in its metadata and a line in its doc string (Netron shows both)",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o);
         c->add_option("--batch", a.o.batch, "batch size (default: as in the file)");
         c->add_option("-o,--output", a.o.output, "the annotated ONNX file")->required();
       },
       [](CLI::App*, Args& a) { return cmd_annotate(a.o, a.model); }},
      {"advise", "suggest changes, each with its gain predicted on the changed model",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file")->required();
         add_model_options(c, a.o);
         c->add_option("--batch", a.o.batch, "batch size (default: as in the file)");
         c->add_option("--format", a.o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_advise(a.o, a.model); }},
      {"check", "hold the prediction against a measured PyTorch profiler trace",
       [](CLI::App* c, Args& a) {
         c->add_option("model", a.model, "ONNX file of the network that was profiled")->required();
         c->add_option("--trace", a.trace, "Chrome trace JSON, plain or gzip (torch.profiler export_chrome_trace, tensorboard_trace_handler)")->required();
         add_model_options(c, a.o);
         c->add_option("--batch", a.o.batch, "batch size the trace ran at (default: as in the file)");
         c->add_option("--top", a.worst, "pairs shown, furthest apart first")->capture_default_str()->check(CLI::Range(0, 1000000000));
         c->add_option("--format", a.o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_check(a.o, a.model, a.trace, a.worst); }},
      {"nas", "sample a search space (onnx_models/spaces) and predict every candidate", setup_nas,
       [](CLI::App* c, Args& a) {
         if (c->count("--format") == 0) a.o.format = "csv";
         if (a.o.format == "json") note("nas --format json writes JSON Lines, which is spelled jsonl now (docs/cli.md)");
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
         c->add_option("--format", a.o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_gpus(a.o); }},
      {"params", "list every parameter of a GPU file and of a host file: unit, default, bounds, scope, owner",
       [](CLI::App* c, Args& a) {
         c->add_option("--format", a.o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_params(a.o); }},
      {"ops", "list the supported ONNX ops: opsets, fusion role, kernel per runtime",
       [](CLI::App* c, Args& a) {
         c->add_option("--format", a.o.format, "table, md or json")->check(CLI::IsMember({"table", "md", "json"}));
         c->add_option("-o,--output", a.o.output, "output file (default: stdout)");
       },
       [](CLI::App*, Args& a) { return cmd_ops(a.o); }},
      {"calibrate", "fit or validate model parameters against measurements",
       [](CLI::App* c, Args&) { c->require_subcommand(1); }, nullptr, calibrate_subcommands()},
  };
  return table;
}

}  // namespace tilewave::cli
