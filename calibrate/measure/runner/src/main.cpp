// tilewave-calibrate: measures GPU kernel times for a layer set (docs/layerset.md).
//
//   tilewave-calibrate measure LAYERS.jsonl -o MEASURED.jsonl [--repeats N] [--warmup N] [--limit N]
//                      [--budget-ms X] [--conv-plans N] [--conv-tune-ms X]
//   tilewave-calibrate --self-test
//
// Exit codes: 0 success, 1 bad input / no GPU / failed self-test, 2 bad usage.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "measure.hpp"
#include "self_test.hpp"

namespace {

std::string join_args(int argc, char** argv) {
  std::string text;
  for (int i = 0; i < argc; ++i) text += (i ? " " : "") + std::string(argv[i]);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tilewave-calibrate: measure CNN layer kernel times on the GPU (cuDNN, cuBLASLt, plain kernels)"};
  tw::MeasureOptions opts;
  double budget_ms = opts.timing.budget_us / 1000.0;
  bool self_test = false;
  app.add_flag("--self-test", self_test, "check small problems against CPU references, then exit");

  CLI::App* measure = app.add_subcommand("measure", "measure every layer of a JSONL layer set");
  measure->add_option("layers", opts.layers_path, "input layer set (JSONL)")->required();
  measure->add_option("-o,--output", opts.output_path, "output JSONL (header line, then one line per layer)")
      ->required();
  measure->add_option("--repeats", opts.timing.repeats, "timed graph replays per layer (median reported)")
      ->check(CLI::Range(1, 1000));
  measure->add_option("--warmup", opts.timing.warmup, "untimed launches before timing")->check(CLI::Range(0, 1000));
  measure->add_option("--limit", opts.limit, "measure only the first N layers (0 = all)")
      ->check(CLI::NonNegativeNumber);
  measure->add_option("--budget-ms", budget_ms, "cap on timed work per layer in milliseconds")
      ->check(CLI::Range(0.1, 10000.0));
  measure->add_option("--conv-plans", opts.timing.conv_plans,
                      "conv: most cuDNN graph-API execution plans timed per problem (0 = legacy API only)")
      ->check(CLI::Range(0, 100));
  measure->add_option("--conv-tune-ms", opts.timing.conv_tune_ms,
                      "conv: no further graph-API plan is built once a problem's tuning took this long")
      ->check(CLI::Range(0.0, 100000.0));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  opts.timing.budget_us = budget_ms * 1000.0;
  opts.command = join_args(argc, argv);

  if (self_test) return tw::run_self_test(opts.timing);
  if (measure->parsed()) return tw::run_measure(opts);
  std::fprintf(stderr, "%s", app.help().c_str());
  return 2;
}
