// A prediction held against a measured run (`tilewave check --trace`,
// docs/report.md): the kernels of a PyTorch profiler / Chrome trace (or a
// kernel list, as calibrate/measure/run.py's kernels.jsonl rows hold it)
// paired with the predicted ones in launch order, by kind.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/run_options.h"

namespace tilewave {

struct TraceKernel {
  std::string name;
  double start_us = 0, duration_us = 0;
  // The input shapes of the op that launched it (args "Input Dims" of the
  // cpu_op with the kernel's "External id", recorded with
  // record_shapes=True), flattened into one sorted list; empty if unknown.
  std::vector<int64_t> launch_dims;
  // The kind its producer states (args "kind" of a trace tilewave predicted:
  // compute, pool, reduce, norm, copy, elementwise); empty: told by its name.
  std::string kind;
};

// One axis of the configuration a trace ran under, as the trace reveals it
// (docs/report.md "`tilewave check`", "What the trace ran"): the option that
// sets it (batch, layout, amp, dtype, runtime), its value as that option
// takes it ("16", "nhwc", "on", "fp32", "inductor") and what in the trace
// says so.
struct TraceSetting {
  std::string option, value, evidence;
};

struct MeasuredTrace {
  std::string path;
  // The axes the trace reveals (a kernel list reveals none; a trace without
  // record_shapes only its runtime); an axis it does not reveal is absent.
  std::vector<TraceSetting> configuration;
  std::vector<TraceKernel> kernels;  // GPU kernels compared, in start order
  int copies = 0;                    // memcpy / memset events, not kernels
  int kernels_in_trace = 0;          // all kernel events, every step
  int steps = 0;                     // ProfilerStep#N annotations in the trace
  std::string step;                  // the step compared when there are several, else ""
};

// Reads the JSON torch.profiler's export_chrome_trace writes (an object with
// "traceEvents", or a bare array): complete events ("ph": "X") of category
// "kernel" (any case). When a profiler schedule recorded several steps
// (ProfilerStep#N), only the last step's kernels are kept. Or a kernel list:
// an object whose "list" holds [name, microseconds] in launch order (one row
// of calibrate/measure/run.py's kernels.jsonl). InputError naming the file
// for anything else.
MeasuredTrace read_trace(const std::string& path);
// The same from a parsed document; `path` names it in errors.
MeasuredTrace trace_from_json(const nlohmann::json& doc, const std::string& path);

// What a kernel does, coarsely, from its name or its predicted problem:
// compute (convolution, GEMM, attention), pool, reduce, norm, copy, elementwise.
const char* kernel_kind(const std::string& measured_name);
const char* kernel_kind(const KernelResult& predicted);
// The class the prediction is judged by (issue 31; docs/report.md "`tilewave
// check`"): the "pairing" vocabulary of analyzer/data/kernel_names.json for a
// measured kernel (conv, conv_winograd, conv_fft, depthwise, gemm, attention,
// norm, softmax, reduction, pool, cast, transform, copy, triton,
// elementwise), and the same classes for a predicted one.
const char* pairing_class(const std::string& measured_name);
const char* pairing_class(const KernelResult& predicted);
// The sizes a compute kernel's launching op must show in its input shapes:
// a convolution's N, H, W, K, R, S, a GEMM's M, N, K (and batch); sorted.
// Empty where none are checked.
std::vector<int64_t> shape_signature(const KernelResult& predicted);

struct TracePair {
  int predicted = -1, measured = -1;  // indices; -1: no partner
  double predicted_us = 0, measured_us = 0;
  int shape_match = -1;               // 1: the launching op's shapes fit the predicted problem, 0: not, -1: unknown
};

// Paired kernels of one kind (the predicted kernel's), summed.
struct KindError {
  std::string kind;
  int pairs = 0;
  double predicted_us = 0, measured_us = 0;
};

// One class's share of a check (pairing_class): the measured kernels of the
// class and the predicted ones, those paired (by the measured kernel's
// class) and those left without a partner: measured time the prediction
// lacks (`missing`), predicted time nothing measured matches (`extra`).
// The same-class pairs are those whose predicted kernel has the class too:
// where the runtime launches kernels in another order than the prediction,
// the alignment pairs unlike neighbours (a cast with a layout transform),
// and only these say how well the class itself is costed.
struct ClassRow {
  std::string kernel_class;
  int measured = 0, predicted = 0, paired = 0, missing = 0, extra = 0, same_class_paired = 0;
  double measured_us = 0, predicted_us = 0;
  double paired_measured_us = 0, paired_predicted_us = 0;
  double same_class_measured_us = 0, same_class_predicted_us = 0;
  double missing_us = 0, extra_us = 0;
  double measured_share = 0;      // of all measured kernel time
  double paired_error = 0;        // paired_predicted_us / paired_measured_us - 1 (0 without pairs)
  double same_class_error = 0;    // the same over the same-class pairs (0 without any)
};

// An axis where the trace ran otherwise than the prediction assumed.
struct SettingMismatch {
  TraceSetting trace;     // what the trace ran, and why we think so
  std::string predicted;  // the prediction's value of the same option
};

struct TraceCheck {
  std::vector<SettingMismatch> mismatches;  // in TraceSetting's order; the check compares unlike runs if any
  std::vector<TracePair> pairs;      // in launch order, unpaired ones included
  int paired = 0;
  double predicted_device_us = 0;    // the predicted kernels' own times (launch gaps excluded)
  double measured_device_us = 0;     // the trace's kernel durations
  double median_abs_error = 0;       // over paired kernels, |pred / measured - 1|
  double paired_predicted_us = 0, paired_measured_us = 0;
  int shape_compared = 0, shape_matched = 0;  // paired compute kernels whose trace shapes were known / fit
  std::vector<KindError> by_kind;             // most measured time first
  std::vector<ClassRow> by_class;             // most measured time first, then most predicted
};

// The axes of `t.configuration` whose value differs from `a`'s.
std::vector<SettingMismatch> configuration_mismatches(const Analysis& a, const MeasuredTrace& t);

// Pairs the two sequences by dynamic programming (an edit distance in which
// kernels of one kind pair best, better still when the trace's shapes fit the
// predicted problem; compute kernels never pair with others).
TraceCheck check_against_trace(const Analysis& a, const MeasuredTrace& t);

// `tilewave check PATH --trace TRACE` as the CLI and the Python module run
// it: the trace read first (a bad trace costs no analysis), the model
// analysed with `o` and shown to `on_analysis`, then the two paired.
struct CheckRun {
  MeasuredTrace trace;
  Analysis analysis;
  TraceCheck check;
};
CheckRun check_file(const std::string& model_path, const std::string& trace_path, const RunOptions& o,
                    const std::function<void(const Analysis&)>& on_analysis = {});

}  // namespace tilewave
