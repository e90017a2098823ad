// Fitting the GPU file's parameters to measured layers, and judging the
// model on layers it was not fitted to (docs/calibration.md).
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tilewave/gpu_model.h"
#include "tilewave/kernel_cost.h"
#include "tilewave/layer_set.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"
#include "tilewave/progress.h"

namespace tilewave {

struct Measurement {
  LayerSetEntry entry;
  double measured_us = 0;
  std::string op_class;  // conv, conv_grouped, conv_depthwise, conv_transpose, gemm, eltwise, …
};

// A measured time of a calibration input, in microseconds: finite, at least
// a timer's resolution (1 ns) and at most a day, else InputError(where)
// naming `field` (docs/errors.md "Calibration inputs").
double measured_time_us(double us, const std::string& where, const char* field);

// Reads a `tilewave-calibrate measure` output; keeps lines with status ok.
std::vector<Measurement> read_measurements(const std::string& path);
// The layer class the fit groups errors by: kernel_class_name(kernel_class(layer)).
std::string op_class(const Layer& layer);

// A deterministic split: `holdout` of the indices (by seed) go to test.
struct Split {
  std::vector<size_t> train, test;
};
Split holdout_split(size_t n, double holdout, unsigned seed);

struct FitResult {
  std::map<std::string, double> params;  // fitted values of the fitted parameters
  double train_loss = 0;  // mean soft-L1 loss of the log ratio (scale 0.1)
  int evaluations = 0;
};

// The loss every fit minimises: soft-L1 of log(predicted/measured), scale 0.1.
double robust_loss(double predicted, double measured);

// Predicted time (µs) of item i under a candidate GPU model: the fit looks
// its parameters up once per candidate (a CostModel, whose `gpu` is the
// candidate), not once per item.
using PredictFn = std::function<double(const CostModel&, size_t)>;

// Fits the parameters of the given scopes: minimises the mean soft-L1 loss of
// log(predicted/measured) over `train` with NLopt within each parameter's
// bounds. The other parameters stay as in `start`.
// `progress` hears the local searches done (the start point and the restarts).
FitResult fit_scope(const GpuModel& start, const std::vector<ParamScope>& scopes, const std::vector<size_t>& train,
                    const PredictFn& predict, const std::vector<double>& measured, const ProgressFn& progress = {});

// The same for the named parameters alone.
FitResult fit_named(const GpuModel& start, const std::vector<std::string>& names, const std::vector<size_t>& train,
                    const PredictFn& predict, const std::vector<double>& measured, const ProgressFn& progress = {});

// Minimises a robust (soft-L1) loss of log(pred/measured) over `train` with
// NLopt, within each parameter's fit bounds (param_table()).
FitResult fit_parameters(const GpuModel& start, const std::vector<Measurement>& data,
                         const std::vector<size_t>& train, const ProgressFn& progress = {});

// The q-quantile with linear interpolation (q = 0.5: the median, the mean of
// the middle two for an even count).
double quantile(std::vector<double> v, double q);

struct ErrorStats {
  std::string group;
  int n = 0;
  double median_ape = 0;   // median |pred-meas|/meas
  double p90_ape = 0;
  double within_25 = 0;    // share with |error| <= 25%
  double spearman = 0;     // rank correlation of pred vs measured
  double median_log_ratio = 0;  // bias: >0 predicts too slow
};

// Per op class and overall ("all" last), on the given subset.
std::vector<ErrorStats> error_stats(const GpuModel& gpu, const std::vector<Measurement>& data,
                                    const std::vector<size_t>& subset);
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// Calls fn(object, "path:line") for every non-blank line of a JSON-lines
// measurement file; throws InputError naming the file (and line) when it
// cannot be opened or a line is not a JSON object.
void for_each_json_line(const std::string& path, const char* what,
                        const std::function<void(const nlohmann::json&, const std::string&)>& fn);

// One network timed end to end in one runtime (calibrate/measure/runtime_bench.py,
// or the older calibrate/measure/netbench).
struct NetworkRun {
  std::string name;  // as measured: "resnet50", "timm/dla34"
  std::string runtime;  // "" in the older netbench files
  Model model;       // loaded at the measured batch
  double measured_us = 0;
  int measured_kernels = -1;  // kernels per forward, when the bench counted them
};

// The lines of a network-bench file with status ok, and, when `runtime` is
// not empty, that runtime. Each network's graph is MODELS_DIR/<stem>.onnx
// ("timm/dla34" -> timm_dla34.onnx); networks without one are listed in
// `skipped`. Throws InputError naming the file and line for a bad line.
std::vector<NetworkRun> read_network_runs(const std::string& path, const std::string& models_dir,
                                          const std::string& runtime, std::vector<std::string>* skipped);

// A runtime's own parameter set fitted to whole-network latencies measured
// in that runtime (docs/calibration.md "Runtimes").
struct RuntimeFit {
  FitResult fit;  // every fitted parameter, classes and network stage together
  std::map<std::string, double> class_loss;  // train loss of each class stage
  size_t network_runs_fitted = 0;            // runs whose kernel count matched, fitted in the network stage
  // Median |error| of the fitted runs per batch, before and after.
  std::map<int64_t, std::pair<double, double>> median_error_by_batch;
};
// Summed device time of one class of a run's profiled kernels
// (calibrate/pair/class_times.py).
struct ClassTime {
  size_t run;         // index into the runs
  std::string kernel_class;
  double measured_us = 0;
  int kernels = 0;  // how many kernels of the class the profile lists
};
// The class a kernel's time is paired under (the runtime_fit vocabulary of
// docs/model.md "Kernel classes"): "library" for convolutions and GEMMs, the
// memory class otherwise (eltwise, norm, copy, fused ...).
std::string runtime_class(const Layer& layer);
// Reads class sums of the given runs; lines of other runs are ignored.
std::vector<ClassTime> read_class_times(const std::string& path, const std::vector<NetworkRun>& runs);

// From the base set (any set `gpu` holds for the runtime is ignored): first
// each class's parameters on that class's summed kernel times, when
// `class_times` is not empty; then `network_params` on whole-network latency.
RuntimeFit fit_runtime(const GpuModel& gpu, const RuntimeProfile& runtime, const std::vector<NetworkRun>& runs,
                       const std::vector<ClassTime>& class_times, const std::vector<std::string>& network_params,
                       const ProgressFn& progress = {});

// One kernel's device time inside a network run (calibrate/pair/eltwise_in_network.py).
struct KernelInNetwork {
  size_t run;        // index into the network runs
  std::string node;  // the kernel's first node
  double measured_us;
};
std::vector<KernelInNetwork> read_kernel_times(const std::string& path, const std::vector<NetworkRun>& runs);

struct NetworkFitOptions {
  unsigned seed = 1;
  double holdout = 0.5;       // share of networks (all their batches) held out
  double kernel_match = 0.05;  // runs whose kernel count is off by more are not fitted
  std::string kernel_times_path;  // named in errors about `kernels`
};
// The network-scope terms: the L2 terms on kernels timed inside the fitted
// networks (when given), then the rest on their latencies.
struct NetworkFit {
  std::map<std::string, double> params;
  std::set<std::string> held_out;
  size_t networks_fitted = 0, runs_fitted = 0, kernels_fitted = 0;
  std::vector<std::string> mismatched;  // "net@batch (predicted vs counted kernels)"
  std::optional<FitResult> kernel_stage;
  FitResult totals;
  struct BatchError {
    std::string stage, subset;  // before|after, fitted|held-out
    int64_t batch;
    int n;
    double median;
  };
  std::vector<BatchError> errors;
};
NetworkFit fit_networks(const GpuModel& gpu, const RuntimeProfile& runtime, const std::vector<NetworkRun>& runs,
                        const std::vector<KernelInNetwork>& kernels, const NetworkFitOptions& options,
                        const ProgressFn& progress = {});

}  // namespace tilewave
