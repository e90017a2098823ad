// tilewave: a thin driver over the analyzer library (analyzer/include).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "tilewave/error.h"
#include "tilewave/output_file.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave/version.h"

using namespace tilewave;

namespace {

void add_gpu_options(CLI::App* cmd, cli::CommonOptions& o) {
  cmd->add_option("--gpu", o.gpu, "GPU id (a file stem in the database) or path to a GPU .json")->capture_default_str();
  cmd->add_option("--gpu-dir", o.gpu_dir, "GPU database directory (default: $TILEWAVE_GPU_DIR or the bundled one)");
}

// The execution configuration's axes beside runtime and dtype (docs/model.md
// "Execution configuration").
void add_execution_options(CLI::App* cmd, cli::CommonOptions& o) {
  // Each flag writes its key of the configuration's JSON form: a new axis is one flag here.
  auto set = [&o](const char* key) { return [&o, key](const std::string& v) { o.execution[key] = v; }; };
  cmd->add_option_function<std::string>("--layout", set("layout"),
                                        "activation layout: nchw (PyTorch's default, and the default) or nhwc (channels_last)")
      ->check(CLI::IsMember({"nchw", "nhwc"}));
  cmd->add_flag_function("--amp,!--no-amp", [&o](int64_t n) { o.execution["amp"] = n > 0; },
                         "fp32 weights under torch.autocast(--dtype), as timm's benchmark.py runs them (the default for "
                         "eager and inductor at fp16 or bf16); --no-amp: weights stored in --dtype (model.half())");
  cmd->add_flag_function("--graph,!--no-graph", [&o](int64_t n) { o.execution["launch"] = n > 0 ? "graph" : "loop"; },
                         "the forward replayed as a CUDA graph (tensorrt's default); --no-graph: a plain Python loop, each "
                         "op issued by the host (eager's and inductor's default)");
  cmd->add_option("--host", o.host, "host description (id in gpu_models/hosts/ or a .json) for --no-graph "
                                    "(default: the GPU file's)");
}

void add_model_options(CLI::App* cmd, cli::CommonOptions& o) {
  add_gpu_options(cmd, o);
  cmd->add_option("--dtype", o.dtype, "precision: fp32, tf32, fp16, bf16, int8")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16", "int8"}))
      ->capture_default_str();
  cmd->add_option("--runtime", o.runtime,
                  "what runs the model: eager (PyTorch eager), inductor (torch.compile) or tensorrt (TensorRT-like); "
                  "eager-folded reprints runs 1-6 (BatchNorm folded, conv biases removed)")
      ->check(CLI::IsMember({"eager", "inductor", "tensorrt", "eager-folded"}))
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tilewave: predicts how well a neural network uses a GPU (tile, wave and roofline model)", "tilewave"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tilewave ") + version());
  cli::CommonOptions o;
  int worst = 15;
  std::string analyze_by = "op";
  // The list defaults are the library's (run_options.h), which the Python module's share.
  const std::string sweep_batches = fmt::format("{}", fmt::join(default_sweep_batches(), ","));
  const CompareAxes compare_axes;
  std::string model, layer_set, extract, batches = sweep_batches, measured;
  std::vector<std::string> models, measured_files;
  int seed = 1;
  std::string fit_dtype = "fp16";
  double holdout = 0.2;

  auto* analyze = app.add_subcommand("analyze", "predict per-kernel time and utilization of an ONNX model");
  analyze->add_option("model", model, "ONNX file")->required();
  add_model_options(analyze, o);
  analyze->add_option("--batch", o.batch, "batch size for every graph input (default: as in the file)");
  std::vector<std::string> formats;
  for (const auto& v : analysis_views()) formats.push_back(v.format);
  analyze->add_option("--format", o.format, "table, json or csv")->check(CLI::IsMember(formats));
  analyze->add_option("--top", worst, "layers shown in the table")->capture_default_str()->check(CLI::Range(0, 1000000000));
  analyze->add_option("--by", analyze_by, "the table's summary: op (convolution kinds apart), name (what each kernel "
                                          "runs, as nsys sums kernels), node (ONNX nodes with parameters and memory) or kernel (launch order)")
      ->capture_default_str()
      ->check(CLI::IsMember(table_summaries()));
  analyze->add_option("-o,--output", o.output, "output file (default: stdout)");
  analyze->add_option("--trace-out", o.trace_out,
                      "also write the predicted timeline as Chrome trace JSON (Perfetto, chrome://tracing)");

  auto* layers = app.add_subcommand("layers", "predict a layer set (JSONL), or --extract one from a model");
  layers->add_option("layer_set", layer_set, "layer-set JSONL file (docs/layerset.md)");
  layers->add_option("--extract", extract, "write the kernels of this ONNX model as a layer set");
  add_model_options(layers, o);
  layers->add_option("--batch", o.batch, "batch size (with --extract)");
  layers->add_option("--format", o.format, "jsonl or table")->check(CLI::IsMember({"jsonl", "table"}));
  layers->add_option("-o,--output", o.output, "output file (default: stdout)");

  auto* rank = app.add_subcommand("rank", "order models by predicted latency, beside the FLOPs order");
  rank->add_option("models", models, "ONNX files, folders of them, or list files (.txt/.list, one path per line)")
      ->required();
  int rank_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  rank->add_option("--threads", rank_threads, "models analysed at once (default: the cores)")->check(CLI::Range(1, 1024));
  rank->add_option("-o,--output", o.output, "output file (default: stdout)");
  add_model_options(rank, o);
  rank->add_option("--batch", o.batch, "batch size")->capture_default_str();
  rank->add_option("--format", o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));

  auto* sweep = app.add_subcommand("sweep", "utilization and throughput against batch size");
  sweep->add_option("model", model, "ONNX file")->required();
  add_model_options(sweep, o);
  sweep->add_option("--batch", batches, "comma-separated batch sizes")->capture_default_str();
  sweep->add_option("--format", o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  sweep->add_option("-o,--output", o.output, "output file (default: stdout)");

  std::string compare_gpus, report_batches = sweep_batches;
  std::string report_vs;
  auto* report = app.add_subcommand("report", "write a self-contained HTML report with plots (docs/report.md)");
  report->add_option("model", model, "ONNX file")->required();
  report->add_option("--vs", report_vs, "a second ONNX file, side by side on one page: why one uses the GPU better");
  add_model_options(report, o);
  report->add_option("--batch", o.batch, "batch size (default: as in the file)");
  report->add_option("--compare", compare_gpus, "also these GPUs, comma-separated (e.g. a100,l4); the same as "
                                                "--gpu h200,a100,l4, whose first GPU is the report's");
  report->add_option("--batches", report_batches, "batch sizes of the batch chart")->capture_default_str();
  report->add_option("-o,--output", o.output, "the HTML file")->required();

  std::string cmp_gpus = fmt::format("{}", fmt::join(compare_axes.gpus, ",")),
              cmp_runtimes = fmt::format("{}", fmt::join(compare_axes.runtimes, ",")),
              cmp_dtypes = fmt::format("{}", fmt::join(compare_axes.dtypes, ",")), cmp_batches;
  std::string cmp_layouts, cmp_launches;  // empty: each runtime's default
  auto* compare = app.add_subcommand("compare", "models side by side on several GPUs, runtimes, dtypes or batches");
  compare->add_option("models", models, "ONNX files, one or more")->required();
  compare->add_option("--gpu", cmp_gpus, "GPU ids, comma-separated")->capture_default_str();
  compare->add_option("--gpu-dir", o.gpu_dir, "GPU database directory (default: the bundled one)");
  compare->add_option("--runtime", cmp_runtimes, "runtimes, comma-separated (eager, inductor, tensorrt)")->capture_default_str();
  compare->add_option("--dtype", cmp_dtypes, "dtypes, comma-separated")->capture_default_str();
  compare->add_option("--layout", cmp_layouts, "layouts, comma-separated (nchw, nhwc; default: each runtime's)");
  compare->add_option("--launch", cmp_launches, "launch modes, comma-separated (graph, loop; default: each runtime's)");
  compare->add_flag_function("--amp,!--no-amp", [&o](int64_t n) { o.execution["amp"] = n > 0; },
                             "fp32 weights under autocast(--dtype) in every configuration");
  compare->add_option("--host", o.host, "host description for loop launches (default: each GPU file's)");
  compare->add_option("--batch", cmp_batches, "batch sizes, comma-separated (default: as in the file)");
  compare->add_option("--input", o.inputs, "set a whole input shape, NAME=1x3x224x224 (repeatable)");
  compare->add_flag("--allow-unmodelled", o.allow_unmodelled, "give totals marked partial instead of exit 1");
  compare->add_option("--format", o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  compare->add_option("-o,--output", o.output, "output file (default: stdout)");

  auto* annotate = app.add_subcommand("annotate", "write the model with each node's prediction in its metadata and a line in its doc string (Netron shows both)");
  annotate->add_option("model", model, "ONNX file")->required();
  add_model_options(annotate, o);
  annotate->add_option("--batch", o.batch, "batch size (default: as in the file)");
  annotate->add_option("-o,--output", o.output, "the annotated ONNX file")->required();

  auto* advise = app.add_subcommand("advise", "suggest changes, each with its gain predicted on the changed model");
  advise->add_option("model", model, "ONNX file")->required();
  add_model_options(advise, o);
  advise->add_option("--batch", o.batch, "batch size (default: as in the file)");
  advise->add_option("--format", o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  advise->add_option("-o,--output", o.output, "output file (default: stdout)");

  std::string trace;
  auto* check = app.add_subcommand("check", "hold the prediction against a measured PyTorch profiler trace");
  check->add_option("model", model, "ONNX file of the network that was profiled")->required();
  check->add_option("--trace", trace, "Chrome trace JSON, plain or gzip (torch.profiler export_chrome_trace, tensorboard_trace_handler)")->required();
  add_model_options(check, o);
  check->add_option("--batch", o.batch, "batch size the trace ran at (default: as in the file)");
  check->add_option("--top", worst, "pairs shown, furthest apart first")->capture_default_str()->check(CLI::Range(0, 1000000000));
  check->add_option("--format", o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  check->add_option("-o,--output", o.output, "output file (default: stdout)");

  cli::NasOptions nas_opt;
  auto* nas = app.add_subcommand("nas", "sample a search space (onnx_models/spaces) and predict every candidate");
  nas->add_option("space", nas_opt.space, "search-space JSON (docs/nas.md)")->required();
  add_gpu_options(nas, o);
  nas->add_option("--dtype", o.dtype, "precision: fp32, tf32, fp16, bf16, int8")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16", "int8"}))
      ->capture_default_str();
  add_execution_options(nas, o);
  nas->add_option("--runtime", o.runtime, "eager, inductor or tensorrt")
      ->check(CLI::IsMember({"eager", "inductor", "tensorrt"}))
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
  nas->add_option("--threads", nas_opt.threads, "worker threads")->capture_default_str()->check(CLI::Range(1, 1024));
  nas->add_option("--min-utilization", nas_opt.min_utilization, "drop candidates below this utilization (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  nas->add_flag("--pareto", nas_opt.pareto, "keep only the latency-vs-FLOPs front");
  nas->add_option("--export-onnx", nas_opt.export_dir, "write the fastest kept candidates as ONNX into this folder");
  nas->add_option("--export-top", nas_opt.top, "how many --export-onnx writes (the fastest kept)")->capture_default_str()->check(CLI::Range(1, 100000));
  nas->add_option("--format", o.format, "csv or jsonl (JSON Lines; 'json' is its old name)")
      ->check(CLI::IsMember({"csv", "jsonl", "json"}));
  nas->add_option("-o,--output", o.output, "output file (default: stdout)");
  std::vector<std::string> merge_files;
  auto* nas_merge = app.add_subcommand("nas-merge", "join the shards of a `nas` run, checking none is missing or doubled");
  nas_merge->add_option("files", merge_files, "the shards' output files")->required();
  nas_merge->add_option("-o,--output", o.output, "output file (default: stdout)");

  auto* gpus = app.add_subcommand("gpus", "list the GPU database");
  gpus->add_option("--gpu-dir", o.gpu_dir, "GPU database directory");
  gpus->add_option("--format", o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  gpus->add_option("-o,--output", o.output, "output file (default: stdout)");

  auto* ops = app.add_subcommand("ops", "list the supported ONNX ops: opsets, fusion role, kernel per runtime");
  ops->add_option("--format", o.format, "table, md or json")->check(CLI::IsMember({"table", "md", "json"}));
  ops->add_option("-o,--output", o.output, "output file (default: stdout)");

  auto* calibrate = app.add_subcommand("calibrate", "fit or validate model parameters against measurements");
  calibrate->require_subcommand(1);
  auto* fit = calibrate->add_subcommand("fit", "fit the GPU file's parameters to measured layers");
  fit->add_option("measured", measured_files, "measured layer sets (tilewave-calibrate measure output)")->required();
  add_gpu_options(fit, o);
  fit->add_option("-o,--output", o.output, "GPU file to write (default: stdout)");
  fit->add_option("--seed", seed, "random seed of the hold-out split")->capture_default_str();
  fit->add_option("--holdout", holdout, "fraction of layers held out of the fit")->capture_default_str();
  fit->add_option("--dtype", fit_dtype, "fit only layers of this precision, or 'all'")->capture_default_str();
  std::string models_dir = "onnx_models";
  double net_holdout = 0.5;
  auto* fit_net = calibrate->add_subcommand(
      "fit-networks", "fit the network-scope parameters (L2 reuse, launch gap) to measured networks");
  fit_net->add_option("measured", measured, "network measurements (calibrate/measure/netbench output)")->required();
  add_gpu_options(fit_net, o);
  fit_net->add_option("--models-dir", models_dir, "where <model>.onnx for each network is")->capture_default_str();
  std::string fit_net_runtime = "eager-folded";
  fit_net->add_option("--runtime", fit_net_runtime,
                      "the runtime the networks ran in (calibrate/measure/netbench's runs: eager-folded)")
      ->check(CLI::IsMember({"eager", "inductor", "tensorrt", "eager-folded"}))
      ->capture_default_str();
  fit_net->add_option("-o,--output", o.output, "GPU file to write (default: stdout)");
  fit_net->add_option("--seed", seed, "random seed of the hold-out split")->capture_default_str();
  fit_net->add_option("--holdout", net_holdout, "fraction of networks held out of the fit")->capture_default_str();
  double kernel_match = 0.05;
  fit_net->add_option("--kernel-match", kernel_match,
                      "fit only runs whose predicted kernel count is within this fraction of the measured one")
      ->capture_default_str();
  std::string kernel_times;
  fit_net->add_option("--kernel-times", kernel_times,
                      "kernels timed inside the networks (calibrate/pair/eltwise_in_network.py): fit the L2 terms to them");
  std::vector<std::string> runtime_params;
  std::string runtime_models_dir = "onnx_models/runtime";
  auto* fit_rt = calibrate->add_subcommand(
      "fit-runtime", "fit one runtime's own parameter set to networks measured in that runtime");
  fit_rt->add_option("measured", measured, "runtime measurements (calibrate/measure/runtime_bench.py bench.jsonl)")
      ->required();
  add_gpu_options(fit_rt, o);
  fit_rt->add_option("--runtime", o.runtime, "the runtime whose set is fitted")
      ->check(CLI::IsMember({"eager", "inductor", "tensorrt", "eager-folded"}))
      ->capture_default_str();
  std::string class_times;
  fit_rt->add_option("--class-times", class_times,
                     "per-class kernel times of the runs (calibrate/pair/class_times.py): fit each class's parameters to them first");
  runtime_params = {"launch_gap_us"};
  fit_rt->add_option("--params", runtime_params, "parameters fitted on whole-network latency (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  fit_rt->add_option("--models-dir", runtime_models_dir, "where <network>.onnx is")->capture_default_str();
  fit_rt->add_option("-o,--output", o.output, "GPU file to write (default: stdout)");
  std::string carry_to;
  auto* carry = calibrate->add_subcommand("carry", "carry a calibrated GPU's parameters over to another GPU file");
  add_gpu_options(carry, o);
  carry->add_option("--to", carry_to, "target GPU id or file")->required();
  // --gpu (add_gpu_options): the calibrated donors, comma-separated, preferred first.
  carry->add_option("-o,--output", o.output, "GPU file to write (default: stdout)");
  std::vector<std::string> bench_results;
  std::string bench_models, bench_from = "h200", bench_predictions;
  auto* from_bench = calibrate->add_subcommand(
      "from-benchmark", "fit a GPU you do not own to published step times (timm's results files)");
  from_bench->add_option("results", bench_results, "timm results CSVs (benchmark-infer-amp-<layout>-….csv)")
      ->required();
  add_gpu_options(from_bench, o);
  from_bench->add_option("--models", bench_models, "folder of the exports, with their manifest.jsonl")->required();
  from_bench->add_option("--from", bench_from, "calibrated GPUs a datasheet-only --gpu is carried from first")
      ->capture_default_str();
  from_bench->add_option("--seed", seed, "which half of the families is fitted")->capture_default_str();
  from_bench->add_option("--host", o.host, "host description the loops are issued by (default: tilewave's defaults)");
  from_bench->add_option("--predictions", bench_predictions, "also write each run's prediction (JSON Lines)");
  bool bench_no_fit = false;
  from_bench->add_flag("--no-fit", bench_no_fit,
                       "judge the GPU file as it is (carried first if datasheet-only): tables and --predictions only");
  from_bench->add_option("-o,--output", o.output, "GPU file to write (default: stdout)");
  auto* validate = calibrate->add_subcommand("validate", "prediction error per op class on measured layers");
  validate->add_option("measured", measured_files, "measured layer sets")->required();
  add_gpu_options(validate, o);
  validate->add_option("--seed", seed, "random seed of the hold-out split")->capture_default_str();
  validate->add_option("--holdout", holdout, "held-out fraction to report on (0: all layers)")->capture_default_str();
  validate->add_option("--format", o.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  validate->add_option("--dtype", fit_dtype, "only layers of this precision, or 'all'")->capture_default_str();
  std::string validate_predictions;
  validate->add_option("-o,--output", o.output, "output file (default: stdout)");
  validate->add_option("--predictions", validate_predictions, "also write the evaluated layers with pred_us (JSONL)");

  // One convention for every subcommand (docs/cli.md): a batch is a positive
  // integer, a list of them a,b,c; the help says where the rest is written.
  const CLI::Validator positive_batches(
      [](std::string& v) {
        std::stringstream ss(v);
        std::string part;
        bool any = false;
        while (std::getline(ss, part, ',')) {
          char* end = nullptr;
          const long long b = std::strtoll(part.c_str(), &end, 10);
          if (part.empty() || *end || b < 1) return "'" + v + "': a batch is a positive integer (lists: 1,8,64)";
          any = true;
        }
        return any ? std::string() : "'" + v + "' names no batch";
      },
      "BATCH");
  const std::function<void(CLI::App*)> conventions = [&](CLI::App* cmd) {
    if (auto* batch = cmd->get_option_no_throw("--batch")) batch->check(positive_batches);
    if (auto* batches = cmd->get_option_no_throw("--batches")) batches->check(positive_batches);
    cmd->footer("Conventions (docs/cli.md): -o FILE writes atomically (default stdout); --format table|json|jsonl|csv "
                "where offered; lists are a,b,c; --top counts table rows; bad usage exits 2, bad input 1.");
    for (auto* sub : cmd->get_subcommands({})) conventions(sub);
  };
  conventions(&app);
  const auto members = [](std::vector<std::string> allowed) {
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
  };
  compare->get_option("--runtime")->check(members({"eager", "inductor", "tensorrt", "eager-folded"}));
  compare->get_option("--dtype")->check(members({"fp32", "tf32", "fp16", "bf16", "int8"}));
  compare->get_option("--layout")->check(members({"nchw", "nhwc"}));
  compare->get_option("--launch")->check(members({"graph", "loop"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every error (docs/errors.md "Exit codes"): CLI11's own
    // exit() adds a second line pointing at --help.
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::cerr << "tilewave: usage error: " << printable(what) << " (--help lists the options)\n";
    return 2;
  }
  remove_temporaries_on_signals();
  {
    // Every argument is a candidate input: an output naming the same file as
    // any other argument (the model, a GPU file, a layer set) is refused.
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const auto eq = a.find('=');
      args.push_back(a.rfind("--", 0) == 0 && eq != std::string::npos ? a.substr(eq + 1) : a);
    }
    for (const std::string* out : {&o.output, &o.trace_out}) {
      auto own = std::find(args.begin(), args.end(), *out);
      if (own != args.end()) args.erase(own);  // an output's own argument
    }
    try {
      refuse_output_over_input(o.output, args);
      refuse_output_over_input(o.trace_out, args);
    } catch (const InputError& e) {
      std::cerr << "tilewave: error: " << printable(e.what()) << "\n";
      return 1;
    }
  }

  // Notes wait for the command's end (cli::note): a command that fails
  // prints its one error line and nothing before it (docs/errors.md).
  auto dispatch = [&]() -> int {
    cli::resolve_options(o);
    if (*analyze) return cli::cmd_analyze(o, model, worst, analyze_by);
    if (*layers) {
      if (!extract.empty() == !layer_set.empty()) {
        std::cerr << "tilewave layers: give either a layer-set file or --extract MODEL.onnx\n";
        return 2;
      }
      if (layers->count("--format") == 0) o.format = "jsonl";
      return extract.empty() ? cli::cmd_layers(o, layer_set) : cli::cmd_extract(o, extract);
    }
    if (*rank) return cli::cmd_rank(o, models, rank_threads);
    if (*sweep) return cli::cmd_sweep(o, model, batches);
    if (*advise) return cli::cmd_advise(o, model);
    if (*check) return cli::cmd_check(o, model, trace, worst);
    if (*annotate) return cli::cmd_annotate(o, model);
    if (*report) return cli::cmd_report(o, model, compare_gpus, report_batches, report_vs);
    if (*compare) return cli::cmd_compare(o, models, cmp_gpus, cmp_runtimes, cmp_dtypes, cmp_batches, cmp_layouts,
                                               cmp_launches);
    if (*gpus) return cli::cmd_gpus(o);
    if (*nas) {
      if (nas->count("--format") == 0) o.format = "csv";
      if (o.format == "json") cli::note("nas --format json writes JSON Lines, which is spelled jsonl now (docs/cli.md)");
      return cli::cmd_nas(o, nas_opt);
    }
    if (*nas_merge) return cli::cmd_nas_merge(o, merge_files);
    if (*ops) return cli::cmd_ops(o);
    if (*fit) return cli::cmd_calibrate_fit(o, measured_files, fit_dtype, seed, holdout);
    if (*fit_net) {
      o.runtime = fit_net_runtime;
      return cli::cmd_calibrate_fit_networks(o, measured, models_dir, seed, net_holdout, kernel_match, kernel_times);
    }
    if (*fit_rt) return cli::cmd_calibrate_fit_runtime(o, measured, runtime_models_dir, class_times, runtime_params);
    if (*carry) return cli::cmd_calibrate_carry(o, carry_to);
    if (*from_bench)
      return cli::cmd_calibrate_from_benchmark(o, bench_results, bench_models, bench_from, seed, bench_predictions,
                                               !bench_no_fit);
    if (*validate) return cli::cmd_calibrate_validate(o, measured_files, fit_dtype, seed, holdout, validate_predictions);
    return 2;
  };
  try {
    const int rc = dispatch();
    if (rc == 0) cli::print_notes();
    return rc;
  } catch (const UsageError& e) {
    std::cerr << "tilewave: usage error: " << printable(e.what()) << " (--help lists the options)\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "tilewave: error: " << printable(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Reaching this is a bug (every bad input should be an InputError), but
    // the contract still holds: one line naming the input, exit 1. The tests
    // fail on the words "internal error" (docs/errors.md).
    std::string input = model.empty() ? (layer_set.empty() ? extract : layer_set) : model;
    if (input.empty() && !models.empty()) input = models.front();
    std::cerr << "tilewave: error: " << printable(input.empty() ? o.gpu : input)
              << ": internal error, please report it: " << printable(e.what()) << "\n";
    return 1;
  }
  return 2;
}
