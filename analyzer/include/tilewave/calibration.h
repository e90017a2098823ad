// Fitting the GPU file's parameters to measured layers, and judging the
// model on layers it was not fitted to (docs/calibration.md).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tilewave/gpu_model.h"
#include "tilewave/layer_set.h"

namespace tilewave {

struct Measurement {
  LayerSetEntry entry;
  double measured_us = 0;
  std::string op_class;  // conv, conv_grouped, conv_depthwise, conv_transpose, gemm, eltwise, …
};

// Reads a `tilewave-calibrate measure` output; keeps lines with status ok.
std::vector<Measurement> read_measurements(const std::string& path);
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

// Predicted time (µs) of item i under a candidate GPU model.
using PredictFn = std::function<double(const GpuModel&, size_t)>;

// Fits the parameters of the given scopes: minimises the mean soft-L1 loss of
// log(predicted/measured) over `train` with NLopt within each parameter's
// bounds. The other parameters stay as in `start`.
FitResult fit_scope(const GpuModel& start, const std::vector<ParamScope>& scopes, const std::vector<size_t>& train,
                    const PredictFn& predict, const std::vector<double>& measured);

// Minimises a robust (soft-L1) loss of log(pred/measured) over `train` with
// NLopt, within each parameter's fit bounds (param_table()).
FitResult fit_parameters(const GpuModel& start, const std::vector<Measurement>& data,
                         const std::vector<size_t>& train);

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

}  // namespace tilewave
