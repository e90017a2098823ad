// docs/report.md "`tilewave check`".
#include "tilewave/trace_check.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/json_input.h"
#include "tilewave/kernel_names.h"

using nlohmann::json;

namespace tilewave {

namespace {

constexpr double kMaxKernelUs = 86400e6;
constexpr double kMinKernelUs = 1e-3;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// An integer in the event's args, or -1 where it is absent or of another
// type: "correlation" ties a kernel to its launch call, "External id" to the
// op that launched it.
int64_t int_arg(const json& e, const char* key) {
  const auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return -1;
  const auto c = args->find(key);
  return c != args->end() && c->is_number_integer() ? c->get<int64_t>() : -1;
}

// Every positive size in "Input Dims" (tensor lists nest a level deeper).
void collect_dims(const json& dims, std::vector<int64_t>& out) {
  if (dims.is_number_integer()) {
    if (dims.get<int64_t>() > 0) out.push_back(dims.get<int64_t>());
  } else if (dims.is_array()) {
    for (const auto& d : dims) collect_dims(d, out);
  }
}

// A string field, or "" where it is absent or of another type (json's
// value() would throw a type error, which is no message for a user).
std::string string_or_empty(const json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_or(const json& e, const char* key, double otherwise) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : otherwise;
}

// args "kind" when it is one of check's kinds (a predicted trace states it).
std::string stated_kind(const json& e) {
  const auto args = e.find("args");
  if (args == e.end() || !args->is_object()) return "";
  const std::string k = string_or_empty(*args, "kind");
  for (const char* known : {"compute", "pool", "reduce", "norm", "copy", "elementwise"})
    if (k == known) return k;
  return "";
}

// An op whose inputs reveal the configuration: a convolution or a matrix
// product as aten records it (docs/report.md "What the trace ran").
bool is_convolution_op(const std::string& n) {
  return n == "aten::conv2d" || n == "aten::convolution" || n == "aten::_convolution" ||
         n == "aten::cudnn_convolution" || n == "aten::conv1d" || n == "aten::conv3d";
}
bool is_matrix_op(const std::string& n) {
  return n == "aten::linear" || n == "aten::addmm" || n == "aten::mm" || n == "aten::bmm" || n == "aten::matmul" ||
         n == "aten::baddbmm";
}

struct RecordedOp {
  double ts;
  std::string name;
  const json* args;
};

// args[key][0] as integers when it is a list of `rank` integers, else empty.
std::vector<int64_t> first_input_ints(const json& args, const char* key, size_t rank) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_array() || it->empty() || !(*it)[0].is_array() || (*it)[0].size() != rank) return {};
  std::vector<int64_t> v;
  for (const auto& d : (*it)[0]) {
    if (!d.is_number_integer()) return {};
    v.push_back(d.get<int64_t>());
  }
  return v;
}

std::string first_input_type(const json& args) {
  const auto it = args.find("Input type");
  return it != args.end() && it->is_array() && !it->empty() && (*it)[0].is_string() ? (*it)[0].get<std::string>() : "";
}

std::string ints_text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

// The configuration the ops and kernels of a trace show: the batch and layout
// from the input of the first convolution, the precision from the types the
// convolutions and matrix products take, the runtime from the kernels' names.
std::vector<TraceSetting> read_configuration(std::vector<RecordedOp> ops, const std::vector<TraceKernel>& kernels) {
  std::vector<TraceSetting> out;
  const int triton = int(std::count_if(kernels.begin(), kernels.end(), [](const TraceKernel& k) {
    return k.name.rfind("triton", 0) == 0;
  }));
  std::stable_sort(ops.begin(), ops.end(), [](const RecordedOp& x, const RecordedOp& y) { return x.ts < y.ts; });
  const auto first_conv = std::find_if(ops.begin(), ops.end(), [](const RecordedOp& o) {
    return is_convolution_op(o.name) && first_input_ints(*o.args, "Input Dims", 4).size() == 4;
  });
  if (first_conv != ops.end()) {
    const auto dims = first_input_ints(*first_conv->args, "Input Dims", 4);
    if (dims[0] > 0)
      out.push_back({"batch", std::to_string(dims[0]),
                     fmt::format("the input {} of its first {}", ints_text(dims), first_conv->name)});
    const auto strides = first_input_ints(*first_conv->args, "Input Strides", 4);
    const int64_t c = dims[1], h = dims[2], w = dims[3];
    // torch.compile lays convolution inputs out channels_last itself,
    // whatever the model's layout (seen on an NCHW ResNet-18): its strides
    // tell inductor's choice, not the user's.
    if (strides.size() == 4 && c > 1 && h * w > 1 && triton == 0) {
      const char* layout = strides[1] == 1 && strides[3] == c                     ? "nhwc"
                           : strides[3] == 1 && strides[2] == w && strides[1] == h * w ? "nchw"
                                                                                    : nullptr;
      if (layout)
        out.push_back({"layout", layout,
                       fmt::format("the strides {} of its first {}'s input ({})", ints_text(strides),
                                   first_conv->name, std::string(layout) == "nhwc" ? "channels_last" : "contiguous")});
    }
  }
  int with_fp32 = 0, with_fp16 = 0, with_bf16 = 0;
  std::string fp32_op, low_op;
  for (const auto& o : ops) {
    if (!is_convolution_op(o.name) && !is_matrix_op(o.name)) continue;
    const std::string type = first_input_type(*o.args);
    if (type == "float") with_fp32 += 1, fp32_op = fp32_op.empty() ? o.name : fp32_op;
    else if (type == "c10::Half") with_fp16 += 1, low_op = low_op.empty() ? o.name : low_op;
    else if (type == "c10::BFloat16") with_bf16 += 1, low_op = low_op.empty() ? o.name : low_op;
  }
  const bool low = with_fp16 + with_bf16 > 0;
  if (low && !(with_fp16 && with_bf16)) {
    const char* dtype = with_fp16 ? "fp16" : "bf16";
    const char* type = with_fp16 ? "c10::Half" : "c10::BFloat16";
    if (with_fp32) {
      out.push_back({"dtype", dtype, fmt::format("its {} takes {} inputs", low_op, type)});
      out.push_back({"amp", "on", fmt::format("{} calls take float inputs and {} {} ones: torch.autocast casts them",
                                              with_fp32, with_fp16 + with_bf16, type)});
    } else {
      out.push_back({"dtype", dtype, fmt::format("all {} convolutions and matrix products take {} inputs",
                                                 with_fp16 + with_bf16, type)});
      // Under torch.compile autocast's casts are compiled into kernels, so
      // the ops' types alone do not tell model.half() from autocast.
      if (triton == 0)
        out.push_back({"amp", "off", "none takes float inputs: weights stored in the low precision (model.half())"});
    }
  } else if (with_fp32 && !low) {
    out.push_back({"dtype", "fp32", fmt::format("all {} convolutions and matrix products take float inputs", with_fp32)});
    out.push_back({"amp", "off", "none takes a 16-bit input: no torch.autocast"});
  }
  if (triton > 0)
    out.push_back({"runtime", "inductor", fmt::format("{} of its {} kernels are Triton's (torch.compile)", triton,
                                                      kernels.size())});
  else if (!ops.empty())
    out.push_back({"runtime", "eager", "aten ops launched its kernels and none is Triton's"});
  return out;
}

}  // namespace

MeasuredTrace read_trace(const std::string& path) { return trace_from_json(read_json_file(path, "trace", kMaxTraceBytes), path); }

namespace {

// A kernels.jsonl row: {"list": [[name, us], ...]} in launch order, the
// kernels laid end to end (the list keeps no start times).
MeasuredTrace trace_from_kernel_list(const json& list, const std::string& path) {
  if (!list.is_array()) throw InputError(path, "\"list\" is not a list of [kernel name, microseconds]");
  MeasuredTrace t;
  t.path = path;
  double start_us = 0;
  for (const auto& k : list) {
    if (!k.is_array() || k.size() != 2 || !k[0].is_string() || !k[1].is_number())
      throw InputError(path, fmt::format("kernel {} of \"list\" is not [name, microseconds]", t.kernels.size() + 1));
    const double d = k[1].get<double>();
    const std::string& name = k[0].get_ref<const std::string&>();
    if (!std::isfinite(d) || d < kMinKernelUs || d > kMaxKernelUs)
      throw InputError(path, fmt::format("kernel '{}' lasts {:g} us: not a kernel's time", name, d));
    t.kernels.push_back({name, start_us, d, {}, ""});
    start_us += d;
  }
  if (t.kernels.empty()) throw InputError(path, "\"list\" holds no kernels");
  t.kernels_in_trace = int(t.kernels.size());
  return t;
}

}  // namespace

MeasuredTrace trace_from_json(const json& doc, const std::string& path) {
  if (doc.is_object() && doc.contains("list") && !doc.contains("traceEvents"))
    return trace_from_kernel_list(doc["list"], path);
  const json* events = &doc;
  if (doc.is_object()) {
    const auto it = doc.find("traceEvents");
    if (it == doc.end()) throw InputError(path, "not a Chrome trace: no \"traceEvents\"");
    events = &*it;
  }
  if (!events->is_array()) throw InputError(path, "not a Chrome trace: \"traceEvents\" is not a list");
  MeasuredTrace t;
  t.path = path;
  struct Step {
    std::string name;
    double start_us, end_us;
  };
  std::vector<Step> steps;
  std::unordered_map<int64_t, double> launch_us;  // correlation -> CPU launch time
  std::unordered_map<int64_t, std::vector<int64_t>> op_dims;  // External id -> the op's sorted input sizes
  std::vector<RecordedOp> ops;                                 // convolutions and matrix products, for read_configuration
  std::vector<int64_t> kernel_correlation, kernel_external_id;
  for (const auto& e : *events) {
    if (!e.is_object() || string_or_empty(e, "ph") != "X") continue;
    // Older Kineto writes "Kernel" and "Runtime", newer "kernel" and "cuda_runtime".
    const std::string cat = lower(string_or_empty(e, "cat"));
    if (cat == "gpu_memcpy" || cat == "gpu_memset") ++t.copies;
    const auto name = e.find("name");
    if (cat != "kernel") {
      if (name == e.end() || !name->is_string()) continue;
      const std::string& n = name->get_ref<const std::string&>();
      const double ts = number_or(e, "ts", NAN), dur = number_or(e, "dur", NAN);
      if (!std::isfinite(ts) || !std::isfinite(dur)) continue;
      if (n.rfind("ProfilerStep#", 0) == 0 && cat != "gpu_user_annotation") steps.push_back({n, ts, ts + dur});
      if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") {
        const int64_t corr = int_arg(e, "correlation");
        if (corr >= 0) launch_us[corr] = ts;
      }
      if (cat == "cpu_op" || cat == "operator") {
        const auto args = e.find("args");
        const int64_t id = int_arg(e, "External id");
        if (args != e.end() && args->is_object() && (is_convolution_op(n) || is_matrix_op(n)))
          ops.push_back({ts, n, &*args});
        if (id >= 0 && args != e.end() && args->is_object() && args->contains("Input Dims")) {
          std::vector<int64_t> dims;
          collect_dims(args->at("Input Dims"), dims);
          std::sort(dims.begin(), dims.end());
          op_dims[id] = std::move(dims);
        }
      }
      continue;
    }
    const auto ts = e.find("ts"), dur = e.find("dur");
    if (ts == e.end() || dur == e.end() || name == e.end() || !ts->is_number() || !dur->is_number() ||
        !name->is_string())
      throw InputError(path, "a kernel event lacks a numeric \"ts\" or \"dur\", or a \"name\"");
    const double d = dur->get<double>();
    if (!std::isfinite(d) || d < 0 || !std::isfinite(ts->get<double>()))
      throw InputError(path, fmt::format("kernel '{}' has a negative or non-finite duration", name->get<std::string>()));
    // Below a profiler's 1 ns resolution a duration is no measurement, and
    // every relative error against it is infinite (issue 20: 1e-310 us).
    if (d < kMinKernelUs)
      throw InputError(path, fmt::format("kernel '{}' lasts {:g} us, below a profiler's 1 ns resolution",
                                         name->get<std::string>(), d));
    // A day of one kernel is no profile of a forward; such sums would overflow.
    if (d > kMaxKernelUs)
      throw InputError(path, fmt::format("kernel '{}' lasts {:g} us, more than a day", name->get<std::string>(), d));
    t.kernels.push_back({name->get<std::string>(), ts->get<double>(), d, {}, stated_kind(e)});
    kernel_correlation.push_back(int_arg(e, "correlation"));
    kernel_external_id.push_back(int_arg(e, "External id"));
  }
  // Shapes once every op is read: Kineto writes kernels before or after their ops.
  for (size_t k = 0; k < t.kernels.size(); ++k)
    if (const auto it = op_dims.find(kernel_external_id[k]); it != op_dims.end()) t.kernels[k].launch_dims = it->second;
  if (t.kernels.empty()) throw InputError(path, "no GPU kernel events (\"cat\": \"kernel\"): was CUDA profiled?");
  t.kernels_in_trace = int(t.kernels.size());
  t.steps = int(steps.size());
  t.configuration = read_configuration(std::move(ops), t.kernels);
  // A schedule that records several steps gives several forwards: the last
  // step is compared, its kernels found through the calls that launched them.
  if (steps.size() > 1) {
    const Step& last = *std::max_element(steps.begin(), steps.end(),
                                         [](const Step& x, const Step& y) { return x.start_us < y.start_us; });
    std::vector<TraceKernel> in_step;
    for (size_t k = 0; k < t.kernels.size(); ++k) {
      const auto launch = launch_us.find(kernel_correlation[k]);
      if (launch != launch_us.end() && launch->second >= last.start_us && launch->second <= last.end_us)
        in_step.push_back(t.kernels[k]);
    }
    if (in_step.empty())
      throw InputError(path, fmt::format("the trace holds {} profiler steps, but no kernel's launch (args.correlation "
                                         "against a cuda_runtime event) falls in the last, {}",
                                         steps.size(), last.name));
    t.kernels = std::move(in_step);
    t.step = last.name;
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const TraceKernel& x, const TraceKernel& y) { return x.start_us < y.start_us; });
  return t;
}

const char* kernel_kind(const std::string& name) { return kernel_class_of_name(name, "check").c_str(); }

const char* kernel_kind(const KernelResult& r) {
  if (!r.kernel.layer) return r.kernel.compute ? "compute" : "elementwise";
  // The check vocabulary of docs/model.md "Kernel classes", as a spelling of the kernel's class.
  const KernelClass c = kernel_class(*r.kernel.layer);
  if (is_library(c)) return "compute";
  if (r.kernel.ops.is(RuntimeStep::bn_prep) || r.kernel.ops.is(RuntimeStep::bias) ||
      r.kernel.ops.is(RuntimeStep::norm_params) || r.kernel.ops.is(RuntimeStep::norm_apply))
    return "norm";
  switch (c) {
    case KernelClass::pool: return "pool";
    case KernelClass::reduce:
    case KernelClass::row_norm: return "reduce";
    case KernelClass::norm: return "norm";
    case KernelClass::copy:
    case KernelClass::transform: return "copy";
    default: return "elementwise";
  }
}

const char* pairing_class(const std::string& name) { return kernel_class_of_name(name, "pairing").c_str(); }

const char* pairing_class(const KernelResult& r) {
  if (r.kernel.ops.is(RuntimeStep::cast)) return "cast";
  if (r.kernel.ops.is(RuntimeStep::layout_transform)) return "transform";
  if (r.kernel.ops.is(RuntimeStep::norm_params) || r.kernel.ops.is(RuntimeStep::norm_apply)) return "norm";
  if (!r.kernel.layer) return r.kernel.compute ? "gemm" : "elementwise";
  const bool direct = r.cost && r.cost->path == CostPath::direct_conv;
  switch (kernel_class(*r.kernel.layer)) {
    case KernelClass::conv:
    case KernelClass::conv_grouped:
    case KernelClass::conv_depthwise:
    case KernelClass::conv_transpose: return direct ? "depthwise" : "conv";
    case KernelClass::gemm: return "gemm";
    case KernelClass::attention: return "attention";
    case KernelClass::norm: return "norm";
    case KernelClass::row_norm: return r.kernel.ops.contains("Softmax") ? "softmax" : "norm";
    case KernelClass::pool: return "pool";
    case KernelClass::reduce: return "reduction";
    case KernelClass::copy: return "copy";
    case KernelClass::transform: return "transform";
    case KernelClass::fused: return "triton";
    default: return "elementwise";
  }
}

std::vector<int64_t> shape_signature(const KernelResult& r) {
  std::vector<int64_t> s;
  if (!r.kernel.layer) return s;
  const auto& p = r.kernel.layer->problem;
  if (const auto* c = std::get_if<ConvProblem>(&p)) {
    if (c->transposed) return s;
    s = {c->N, c->H, c->W, c->K, c->R, c->S};
  } else if (const auto* g = std::get_if<GemmProblem>(&p)) {
    s = {g->M, g->N, g->K};
    if (g->batch > 1) s.push_back(g->batch);
  }
  std::sort(s.begin(), s.end());
  return s;
}

CheckRun check_file(const std::string& model_path, const std::string& trace_path, const RunOptions& o,
                    const std::function<void(const Analysis&)>& on_analysis) {
  CheckRun run{read_trace(trace_path), analyze_file(model_path, resolve_target(o)), {}};
  if (on_analysis) on_analysis(run.analysis);
  run.check = check_against_trace(run.analysis, run.trace);
  return run;
}

std::vector<SettingMismatch> configuration_mismatches(const Analysis& a, const MeasuredTrace& t) {
  std::vector<SettingMismatch> out;
  for (const TraceSetting& s : t.configuration) {
    std::string predicted;
    if (s.option == "batch") predicted = std::to_string(a.batch);
    else if (s.option == "layout") predicted = layout_name(a.exec.layout);
    else if (s.option == "amp") predicted = a.exec.amp ? "on" : "off";
    else if (s.option == "dtype") predicted = dtype_name(a.dtype);
    else if (s.option == "runtime") predicted = a.runtime;
    if (predicted != s.value) out.push_back({s, predicted});
  }
  return out;
}

TraceCheck check_against_trace(const Analysis& a, const MeasuredTrace& t) {
  std::vector<int> pred;  // costed kernels only
  for (size_t i = 0; i < a.kernels.size(); ++i)
    if (a.kernels[i].cost) pred.push_back(int(i));
  const size_t n = pred.size(), m = t.kernels.size();
  // Kinds and pairing classes as small integers: the alignment compares them (n+1)(m+1) times.
  std::vector<std::string> labels;
  auto label_id = [&](const std::string& s) {
    const auto it = std::find(labels.begin(), labels.end(), s);
    if (it != labels.end()) return int(it - labels.begin());
    labels.push_back(s);
    return int(labels.size()) - 1;
  };
  const int compute = label_id("compute");
  std::vector<int> pk(n), mk(m), pc(n), mc(m);  // pairing classes: one more point for a pair of one class
  for (size_t i = 0; i < n; ++i) {
    pk[i] = label_id(kernel_kind(a.kernels[size_t(pred[i])]));
    pc[i] = label_id(pairing_class(a.kernels[size_t(pred[i])]));
  }
  for (size_t j = 0; j < m; ++j) {
    mk[j] = label_id(t.kernels[j].kind.empty() ? kernel_kind(t.kernels[j].name) : t.kernels[j].kind.c_str());
    mc[j] = label_id(pairing_class(t.kernels[j].name));
  }
  std::vector<std::vector<int64_t>> signature(n);
  for (size_t i = 0; i < n; ++i) signature[i] = shape_signature(a.kernels[size_t(pred[i])]);
  // -1: not comparable; else whether every predicted size is among the launching op's.
  auto shape_fit = [&](size_t i, size_t j) {
    const auto& dims = t.kernels[j].launch_dims;
    if (signature[i].empty() || dims.empty()) return -1;
    return int(std::includes(dims.begin(), dims.end(), signature[i].begin(), signature[i].end()));
  };
  // Scores: same kind 3 (5 with fitting shapes, 2 with others), two memory
  // kinds 1, compute with memory never, one more for one pairing class; a
  // gap costs 1.
  auto score = [&](size_t i, size_t j) {
    const int same_class = pc[i] == mc[j];
    if (pk[i] == mk[j]) {
      const int fit = shape_fit(i, j);
      return (fit < 0 ? 3 : fit ? 5 : 2) + same_class;
    }
    if (pk[i] == compute || mk[j] == compute) return -1000;
    return 1 + same_class;
  };
  // The table has (n+1)(m+1) cells: one forward of a CNN is far below the
  // cap; a trace of many forwards is not what `check` pairs.
  constexpr double kMaxCells = 5e7;
  if (double(n + 1) * double(m + 1) > kMaxCells)
    throw InputError(t.path, fmt::format("{} measured and {} predicted kernels are too many to pair (at most {:g} "
                                         "pairs); profile one forward of the model", m, n, kMaxCells));
  std::vector<int> best((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> int& { return best[i * (m + 1) + j]; };
  for (size_t i = 1; i <= n; ++i) at(i, 0) = -int(i);
  for (size_t j = 1; j <= m; ++j) at(0, j) = -int(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j)
      at(i, j) = std::max({at(i - 1, j - 1) + score(i - 1, j - 1), at(i - 1, j) - 1, at(i, j - 1) - 1});
  TraceCheck c;
  // A kernel's cost is its device time alone; the launch gap is the schedule's.
  auto device_us = [&](size_t i) { return std::max(0.0, a.kernels[size_t(pred[i])].cost->time_us); };
  std::vector<size_t> position(a.kernels.size());  // a costed kernel's index among pred
  for (size_t i = 0; i < n; ++i) position[size_t(pred[i])] = i;
  std::vector<TracePair> reversed;
  for (size_t i = n, j = m; i > 0 || j > 0;) {
    if (i > 0 && j > 0 && at(i, j) == at(i - 1, j - 1) + score(i - 1, j - 1)) {
      reversed.push_back({pred[i - 1], int(j - 1), device_us(i - 1), t.kernels[j - 1].duration_us,
                          shape_fit(i - 1, j - 1)});
      --i, --j;
    } else if (i > 0 && (j == 0 || at(i, j) == at(i - 1, j) - 1)) {
      reversed.push_back({pred[i - 1], -1, device_us(i - 1), 0, -1});
      --i;
    } else {
      reversed.push_back({-1, int(j - 1), 0, t.kernels[j - 1].duration_us, -1});
      --j;
    }
  }
  c.pairs.assign(reversed.rbegin(), reversed.rend());
  std::vector<double> errors;
  for (const auto& p : c.pairs) {
    c.predicted_device_us += p.predicted_us;
    c.measured_device_us += p.measured_us;
    if (p.predicted >= 0 && p.measured >= 0) {
      ++c.paired;
      c.paired_predicted_us += p.predicted_us, c.paired_measured_us += p.measured_us;
      c.shape_compared += p.shape_match >= 0;
      c.shape_matched += p.shape_match == 1;
      const std::string& kind = labels[size_t(pk[position[size_t(p.predicted)]])];
      auto k = std::find_if(c.by_kind.begin(), c.by_kind.end(), [&](const KindError& e) { return e.kind == kind; });
      if (k == c.by_kind.end()) k = c.by_kind.insert(c.by_kind.end(), KindError{kind});
      ++k->pairs;
      k->predicted_us += p.predicted_us, k->measured_us += p.measured_us;
      if (p.measured_us > 0) errors.push_back(std::fabs(p.predicted_us / p.measured_us - 1));
    }
  }
  std::stable_sort(c.by_kind.begin(), c.by_kind.end(),
                   [](const KindError& x, const KindError& y) { return x.measured_us > y.measured_us; });
  auto row = [&](const std::string& cls) -> ClassRow& {
    auto r = std::find_if(c.by_class.begin(), c.by_class.end(), [&](const ClassRow& x) { return x.kernel_class == cls; });
    return r != c.by_class.end() ? *r : c.by_class.emplace_back(ClassRow{cls});
  };
  for (const auto& p : c.pairs) {
    if (p.measured >= 0) {
      const int cls = mc[size_t(p.measured)];
      ClassRow& r = row(labels[size_t(cls)]);
      ++r.measured, r.measured_us += p.measured_us;
      if (p.predicted >= 0) {
        ++r.paired, r.paired_measured_us += p.measured_us, r.paired_predicted_us += p.predicted_us;
        if (cls == pc[position[size_t(p.predicted)]])
          ++r.same_class_paired, r.same_class_measured_us += p.measured_us,
              r.same_class_predicted_us += p.predicted_us;
      } else {
        ++r.missing, r.missing_us += p.measured_us;
      }
    }
    if (p.predicted >= 0) {
      ClassRow& r = row(labels[size_t(pc[position[size_t(p.predicted)]])]);
      ++r.predicted, r.predicted_us += p.predicted_us;
      if (p.measured < 0) ++r.extra, r.extra_us += p.predicted_us;
    }
  }
  for (ClassRow& r : c.by_class) {
    r.measured_share = c.measured_device_us > 0 ? r.measured_us / c.measured_device_us : 0;
    r.paired_error = r.paired_measured_us > 0 ? r.paired_predicted_us / r.paired_measured_us - 1 : 0;
    r.same_class_error =
        r.same_class_measured_us > 0 ? r.same_class_predicted_us / r.same_class_measured_us - 1 : 0;
  }
  std::stable_sort(c.by_class.begin(), c.by_class.end(), [](const ClassRow& x, const ClassRow& y) {
    return x.measured_us != y.measured_us ? x.measured_us > y.measured_us : x.predicted_us > y.predicted_us;
  });
  if (!errors.empty()) {
    std::nth_element(errors.begin(), errors.begin() + long(errors.size() / 2), errors.end());
    c.median_abs_error = errors[errors.size() / 2];
  }
  c.mismatches = configuration_mismatches(a, t);
  return c;
}

}  // namespace tilewave
