// Calibrating a GPU from published step times (docs/calibration.md "From a
// published benchmark"): timm's results files, each model's ONNX analysed
// under the file's harness, a few physical scales fitted on half of the
// families and judged on the other half.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tilewave/exec_config.h"
#include "tilewave/gpu_model.h"
#include "tilewave/progress.h"
#include "tilewave/schedule.h"

namespace tilewave {

// One row of a timm results file joined to its exported ONNX.
struct BenchmarkRun {
  std::string source;  // the results file
  std::string model, family, kind;
  std::string onnx;    // path of the export
  int64_t img_size = 0, batch = 0;
  double measured_us = 0;  // infer_step_time, one step of `batch` images
  double gmacs = 0;        // timm's MACs per image (the FLOPs baseline); 0: the row gives none
  ExecutionConfig exec;
};

// The harness a timm results file was timed under, from its name
// (benchmark-infer-amp-nchw-pt240-cu124-rtx3090[-dynamo].csv): autocast
// fp16, NCHW or channels_last, eager or torch.compile, a plain loop.
ExecutionConfig timm_results_harness(const std::string& path);

// The rows of `csv` whose model has an export listed in
// `<models_dir>/manifest.jsonl` (one JSON object per line: model, img_size,
// family, kind, file, status "ok"). Rows without one are counted in
// `missing`. InputError naming the file and line on a malformed row.
std::vector<BenchmarkRun> read_timm_results(const std::string& csv, const std::string& models_dir,
                                            int* missing = nullptr);

// What the published times can pin down on a GPU no one here owns: one
// scale of its memory system's rates (every memory-system parameter that is
// a bandwidth fraction, in every runtime set) and one of its main loop
// (tc_efficiency). Everything else stays as the starting file has it.
struct BenchmarkScales {
  double memory_rate = 1;
  double main_loop = 1;
};
GpuModel with_scales(const GpuModel& start, const BenchmarkScales& s);

struct BenchmarkError {
  std::string source;  // results file
  std::string subset;  // "fit" or "held-out"
  std::string kind;    // cnn, hybrid, vit, or "all"
  int n = 0;
  double median = 0, p90 = 0;  // |predicted / measured - 1|
  double median_ratio = 0;     // predicted / measured
  double tau = 0, tau_gmacs = 0;
};

struct BenchmarkFit {
  BenchmarkScales scales;
  GpuModel gpu;  // the start with the scales applied
  std::vector<std::string> fit_families, held_out_families;
  std::vector<double> before_us, after_us;  // per run, in input order
  std::vector<BenchmarkError> before, after;
  int evaluations = 0;
  int failed = 0;  // runs tilewave could not analyse (left out)
  std::vector<std::string> failures;  // "model: reason", the first few
};

// Lowers every run once, fits the scales on the runs of the fit families
// (half of the families, by seed) and reports both halves, per results file
// and model kind. `host` issues the loops; `progress` hears "i of n".
// fit = false: the start judged as it is (scales 1), the same split and tables.
BenchmarkFit fit_benchmark(const GpuModel& start, const std::vector<BenchmarkRun>& runs, const HostModel& host,
                           unsigned seed, const ProgressFn& progress = {}, bool fit = true);

// The error table of given predictions (one per run) over `families`.
std::vector<BenchmarkError> benchmark_errors(const std::vector<BenchmarkRun>& runs, const std::vector<double>& pred_us,
                                             const std::vector<std::string>& families, const std::string& subset);

}  // namespace tilewave
