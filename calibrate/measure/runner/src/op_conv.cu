// conv and conv_transpose, NHWC. conv runs through two cuDNN paths, each
// autotuned: the graph (backend) API, as PyTorch 2.x via cudnn-frontend (engine
// heuristics, then the best-ranked execution plans timed), and the legacy
// cudnnConvolutionForward (cudnnFindConvolutionForwardAlgorithmEx, its first
// picks re-timed on the real launch path); measure_layer times both and keeps
// the faster. conv_transpose: legacy cudnnConvolutionBackwardData only.
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "conv_backend.hpp"
#include "cudnn_desc.hpp"
#include "layer.hpp"
#include "op_runner.hpp"
#include "ops.hpp"
#include "timing.hpp"

namespace tw {

namespace {

const char* const kFwdAlgoNames[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                     "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
const char* const kBwdDataAlgoNames[] = {"BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_FFT",
                                         "BWD_DATA_FFT_TILING", "BWD_DATA_WINOGRAD",
                                         "BWD_DATA_WINOGRAD_NONFUSED"};

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA";
  }
  return "?";
}

struct ConvTypes {
  cudnnDataType_t data;     // x, w and y
  cudnnDataType_t compute;  // accumulation
  cudnnMathType_t math;     // what cudnnFind may use
  bool allow_tensor_core;   // graph API: engines noted TENSOR_CORE allowed
};

// fp32 uses CUDNN_FMA_MATH so no TF32 tensor-core kernel can be picked, and the
// graph API drops engines noted TENSOR_CORE (on float data those run TF32);
// tf32 uses CUDNN_TENSOR_OP_MATH on fp32 data, which permits TF32 kernels, and
// keeps TENSOR_CORE engines (as PyTorch with allow_tf32).
ConvTypes conv_types(DType t) {
  switch (t) {
    case DType::fp32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, false};
    case DType::tf32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, true};
    case DType::fp16: return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, true};
    case DType::bf16: return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, true};
    case DType::int8: return {CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH, true};
  }
  return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, false};
}

std::string legacy_name(const ConvAlgo& a, bool transpose) {
  const int count = transpose ? static_cast<int>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
                              : static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  if (a.algo < 0 || a.algo >= count) return "ALGO_" + std::to_string(a.algo);
  return std::string(transpose ? kBwdDataAlgoNames[a.algo] : kFwdAlgoNames[a.algo]) + "/" + math_name(a.math);
}

struct ConvShape {
  int64_t N, C, H, W, K, R, S, groups;
  std::array<int64_t, 2> stride, pad, dilation;
};

ConvShape read_shape(const Layer& l) {
  ConvShape s{l.get("N"), l.get("C"), l.get("H"), l.get("W"), l.get("K"), l.get("R"), l.get("S"),
              l.get_or("groups", 1), l.pair_or("stride", {1, 1}), l.pair_or("pad", {0, 0}),
              l.pair_or("dilation", {1, 1})};
  return s;
}

int to_int(int64_t v) {
  if (v > INT_MAX) throw LayerError("dimension " + std::to_string(v) + " exceeds cuDNN's int range");
  return static_cast<int>(v);
}

void set_nhwc(const TensorDesc& d, cudnnDataType_t type, int64_t n, int64_t c, int64_t h, int64_t w) {
  TW_CUDNN(cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NHWC, type, to_int(n), to_int(c), to_int(h),
                                      to_int(w)));
}

void check_types_supported(const ConvShape& s, DType dtype, bool transpose) {
  if (s.C % s.groups || s.K % s.groups) throw LayerError("groups must divide C and K");
  if (dtype != DType::int8) return;
  if (transpose) throw Unsupported("cuDNN backward-data has no int8 configuration");
  if ((s.C / s.groups) % 4 || (s.K / s.groups) % 4)
    throw Unsupported("cuDNN int8 convolution needs C/groups and K/groups multiples of 4");
}

// cudnnFind's successful entries, fastest first (find sorts by its own timing).
template <class Perf>
std::vector<ConvAlgo> successful(const Perf* perf, int count) {
  std::vector<ConvAlgo> found;
  std::string statuses;
  for (int i = 0; i < count; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS)
      found.push_back({static_cast<int>(perf[i].algo), perf[i].mathType, perf[i].memory});
    else
      statuses += std::string(statuses.empty() ? "" : ", ") + cudnnGetErrorString(perf[i].status);
  }
  if (found.empty()) throw Unsupported("cudnnFind: no algorithm ran (" + statuses + ")");
  return found;
}

// cudnnFind's first few picks are re-timed by us (see tune_legacy).
constexpr size_t kConvCandidates = 4;

bool debug_autotune() {
  static const bool on = std::getenv("TW_DEBUG_AUTOTUNE") != nullptr;
  return on;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string error_text(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
  return "";
}

// conv: two paths, the cuDNN graph API (index 0, "backend") and the legacy API
// (index 1, "legacy"); each is autotuned, and measure_layer times both in full.
// conv_transpose: the legacy API only.
class ConvRunner : public OpRunner {
 public:
  ConvRunner(Context& ctx, const Layer& layer, bool transpose);
  void select_algorithm() override;
  void launch(int copy) override;
  std::string algo_name() const override;
  std::vector<RunPath> paths() const override;
  void use_path(size_t index) override;

 private:
  std::vector<ConvAlgo> find_forward();
  std::vector<ConvAlgo> find_backward_data();
  std::vector<ConvAlgo> candidates(const std::vector<ConvAlgo>& found);
  bool workspace_bytes(ConvAlgo& c);
  ConvAlgo tune_legacy();
  std::shared_ptr<const BackendConvPlan> tune_backend(std::string* note);
  void build_variant_packs();

  bool transpose_;
  ConvTypes types_;
  std::string cache_key_;
  std::string graph_api_off_;  // why this conv has no graph-API path (empty: it has one)
  BackendConvProblem problem_{};
  TensorDesc in_desc_, out_desc_;
  FilterDesc filter_desc_;
  ConvDesc conv_desc_;
  size_t in_ = 0, filter_ = 0, out_ = 0;  // tensor indices
  ConvChoice choice_;
  ConvAlgo algo_;                          // legacy algorithm launch() runs
  const BackendConvPlan* plan_ = nullptr;  // when set, launch() runs this plan instead
  std::vector<BackendDesc> packs_;         // graph-API variant pack per buffer copy
};

ConvRunner::ConvRunner(Context& ctx, const Layer& layer, bool transpose)
    : OpRunner(ctx), transpose_(transpose), types_(conv_types(layer.dtype)) {
  const ConvShape s = read_shape(layer);
  check_types_supported(s, layer.dtype, transpose);
  cache_key_ = std::string(transpose ? "convT" : "conv") + "|" + dtype_name(layer.dtype);
  for (int64_t v : {s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.groups, s.stride[0], s.stride[1], s.pad[0],
                    s.pad[1], s.dilation[0], s.dilation[1]})
    cache_key_ += "|" + std::to_string(v);
  if (layer.dtype == DType::int8) graph_api_off_ = "int8 convolutions stay on the legacy API";
  else if (ctx.timing.conv_plans <= 0) graph_api_off_ = "graph API off (--conv-plans 0)";

  TW_CUDNN(cudnnSetConvolution2dDescriptor(conv_desc_.get(), to_int(s.pad[0]), to_int(s.pad[1]),
                                           to_int(s.stride[0]), to_int(s.stride[1]), to_int(s.dilation[0]),
                                           to_int(s.dilation[1]), CUDNN_CROSS_CORRELATION, types_.compute));
  TW_CUDNN(cudnnSetConvolutionGroupCount(conv_desc_.get(), to_int(s.groups)));
  TW_CUDNN(cudnnSetConvolutionMathType(conv_desc_.get(), types_.math));

  const Storage st = storage_of(layer.dtype);
  if (!transpose) {
    // y = conv(x, w): x N×C×H×W, w K×(C/g)×R×S, y N×K×P×Q.
    set_nhwc(in_desc_, types_.data, s.N, s.C, s.H, s.W);
    TW_CUDNN(cudnnSetFilter4dDescriptor(filter_desc_.get(), types_.data, CUDNN_TENSOR_NHWC, to_int(s.K),
                                        to_int(s.C / s.groups), to_int(s.R), to_int(s.S)));
    int n, k, p, q;
    TW_CUDNN(cudnnGetConvolution2dForwardOutputDim(conv_desc_.get(), in_desc_.get(), filter_desc_.get(), &n,
                                                   &k, &p, &q));
    if (p < 1 || q < 1) throw LayerError("convolution output is empty");
    set_nhwc(out_desc_, types_.data, n, k, p, q);
    in_ = add_tensor(s.N * s.C * s.H * s.W, st, false);
    filter_ = add_tensor(s.K * (s.C / s.groups) * s.R * s.S, st, false);
    out_ = add_tensor(int64_t(n) * k * p * q, st, true);
    problem_ = {s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.groups, p, q, s.stride, s.pad, s.dilation,
                types_.data, types_.compute, types_.allow_tensor_core};
    return;
  }
  // Transposed conv = backward-data of the conv mapping the K-channel output
  // (dx, N×K×Ho×Wo) to the C-channel input (dy, N×C×H×W); filter C×(K/g)×R×S.
  const int64_t out_h = (s.H - 1) * s.stride[0] - 2 * s.pad[0] + s.dilation[0] * (s.R - 1) + 1;
  const int64_t out_w = (s.W - 1) * s.stride[1] - 2 * s.pad[1] + s.dilation[1] * (s.S - 1) + 1;
  if (out_h < 1 || out_w < 1) throw LayerError("transposed convolution output is empty");
  set_nhwc(in_desc_, types_.data, s.N, s.C, s.H, s.W);
  set_nhwc(out_desc_, types_.data, s.N, s.K, out_h, out_w);
  TW_CUDNN(cudnnSetFilter4dDescriptor(filter_desc_.get(), types_.data, CUDNN_TENSOR_NHWC, to_int(s.C),
                                      to_int(s.K / s.groups), to_int(s.R), to_int(s.S)));
  int n, c, h, w;
  TW_CUDNN(cudnnGetConvolution2dForwardOutputDim(conv_desc_.get(), out_desc_.get(), filter_desc_.get(), &n, &c,
                                                 &h, &w));
  if (n != s.N || c != s.C || h != s.H || w != s.W)
    throw LayerError("transposed convolution shapes do not round-trip through cuDNN");
  in_ = add_tensor(s.N * s.C * s.H * s.W, st, false);
  filter_ = add_tensor(s.C * (s.K / s.groups) * s.R * s.S, st, false);
  out_ = add_tensor(s.N * s.K * out_h * out_w, st, true);
}

std::vector<ConvAlgo> ConvRunner::find_forward() {
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int count = 0;
  TW_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(
      ctx_.cudnn, in_desc_.get(), buffer(0, in_), filter_desc_.get(), buffer(0, filter_), conv_desc_.get(),
      out_desc_.get(), buffer(0, out_), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf,
      ctx_.cudnn_workspace->data(), ctx_.cudnn_workspace->bytes()));
  return successful(perf, count);
}

std::vector<ConvAlgo> ConvRunner::find_backward_data() {
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int count = 0;
  TW_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
      ctx_.cudnn, filter_desc_.get(), buffer(0, filter_), in_desc_.get(), buffer(0, in_), conv_desc_.get(),
      out_desc_.get(), buffer(0, out_), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf,
      ctx_.cudnn_workspace->data(), ctx_.cudnn_workspace->bytes()));
  return successful(perf, count);
}

// Workspace the algorithm needs under c.math; false if it cannot run or needs too much.
bool ConvRunner::workspace_bytes(ConvAlgo& c) {
  if (cudnnSetConvolutionMathType(conv_desc_.get(), c.math) != CUDNN_STATUS_SUCCESS) return false;
  cudnnStatus_t st =
      transpose_ ? cudnnGetConvolutionBackwardDataWorkspaceSize(
                       ctx_.cudnn, filter_desc_.get(), in_desc_.get(), conv_desc_.get(), out_desc_.get(),
                       static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), &c.workspace_bytes)
                 : cudnnGetConvolutionForwardWorkspaceSize(ctx_.cudnn, in_desc_.get(), filter_desc_.get(),
                                                           conv_desc_.get(), out_desc_.get(),
                                                           static_cast<cudnnConvolutionFwdAlgo_t>(c.algo),
                                                           &c.workspace_bytes);
  return st == CUDNN_STATUS_SUCCESS && c.workspace_bytes <= ctx_.cudnn_workspace->bytes();
}

// Find's first picks, each also under the requested math type. On an H200 with
// cuDNN 9.19, find ranked IMPLICIT_PRECOMP_GEMM/DEFAULT_MATH first for an fp16
// 3x3 conv (N=8, 64->64, 56x56); it ran in 75.5 us, against 10.5 us under TENSOR_OP.
std::vector<ConvAlgo> ConvRunner::candidates(const std::vector<ConvAlgo>& found) {
  std::vector<ConvAlgo> list;
  auto add = [&](ConvAlgo c) {
    for (const auto& x : list)
      if (x.algo == c.algo && x.math == c.math) return;
    list.push_back(c);
  };
  for (size_t i = 0; i < found.size() && i < kConvCandidates; ++i) {
    add(found[i]);
    ConvAlgo requested{found[i].algo, types_.math, 0};
    if (requested.math != found[i].math && workspace_bytes(requested)) add(requested);
  }
  return list;
}

// cudnnFind, then its candidates re-timed over the rotating buffers with a small
// graph (see time_candidate_us); the fastest is kept.
ConvAlgo ConvRunner::tune_legacy() {
  const std::vector<ConvAlgo> list = candidates(transpose_ ? find_backward_data() : find_forward());
  TW_CUDA(cudaStreamSynchronize(ctx_.stream));
  plan_ = nullptr;
  ConvAlgo best = list.front();
  double best_us = 1e30;
  for (const ConvAlgo& c : list) {
    try {
      algo_ = c;
      TW_CUDNN(cudnnSetConvolutionMathType(conv_desc_.get(), c.math));
      const double us = time_candidate_us(ctx_.stream, [&](int copy) { launch(copy); }, copies());
      if (debug_autotune())
        std::fprintf(stderr, "  %s legacy %s: %.2f us\n", cache_key_.c_str(), legacy_name(c, transpose_).c_str(),
                     us);
      if (us < best_us) best_us = us, best = c;
    } catch (const std::exception& e) {
      cudaGetLastError();
      if (debug_autotune()) std::fprintf(stderr, "  %s candidate failed: %s\n", cache_key_.c_str(), e.what());
    }
  }
  if (best_us == 1e30) throw LayerError("no cudnnFind candidate could be run");
  return best;
}

void ConvRunner::build_variant_packs() {
  if (static_cast<int>(packs_.size()) == copies()) return;
  packs_.clear();
  for (int c = 0; c < copies(); ++c)
    packs_.push_back(make_conv_variant_pack(buffer(c, in_), buffer(c, filter_), buffer(c, out_),
                                            ctx_.cudnn_workspace->data()));
}

// The heuristics' engine configs in rank order: each is finalized into a plan
// (skipped if that fails or needs more than kBackendWorkspaceCapBytes) and timed
// like a legacy candidate; at most timing.conv_plans plans are timed, and no new
// plan is built once timing.conv_tune_ms have passed (runtime-compiled engines
// can take long to build). The fastest plan is kept.
std::shared_ptr<const BackendConvPlan> ConvRunner::tune_backend(std::string* note) {
  const auto t0 = std::chrono::steady_clock::now();
  BackendConvTuner tuner(ctx_.cudnn, problem_);
  build_variant_packs();
  std::shared_ptr<const BackendConvPlan> best;
  double best_us = 1e30;
  int timed = 0, built = 0;
  std::string last_problem;
  for (size_t i = 0; i < tuner.size() && timed < ctx_.timing.conv_plans; ++i) {
    // Over budget: stop once a plan is timed (or at 4x the budget if none is yet).
    if (ms_since(t0) > (timed > 0 ? 1 : 4) * ctx_.timing.conv_tune_ms) break;
    const auto t_build = std::chrono::steady_clock::now();
    std::string why;
    std::unique_ptr<BackendConvPlan> plan = tuner.make_plan(i, kBackendWorkspaceCapBytes, &why);
    const double build_ms = ms_since(t_build);
    if (!plan) {
      last_problem = tuner.config_name(i) + ": " + why;
      if (debug_autotune())
        std::fprintf(stderr, "  %s backend %s: no plan (%.1f ms): %s\n", cache_key_.c_str(),
                     tuner.config_name(i).c_str(), build_ms, why.c_str());
      continue;
    }
    ++built;
    try {
      plan_ = plan.get();
      const double us = time_candidate_us(ctx_.stream, [&](int copy) { launch(copy); }, copies());
      ++timed;
      if (debug_autotune())
        std::fprintf(stderr, "  %s backend %s ws=%lld: %.2f us (build %.1f ms)\n", cache_key_.c_str(),
                     plan->name.c_str(), static_cast<long long>(plan->workspace_bytes), us, build_ms);
      if (us < best_us) best_us = us, best = std::move(plan);
    } catch (const std::exception& e) {
      cudaGetLastError();
      last_problem = plan->name + ": " + e.what();
      if (debug_autotune())
        std::fprintf(stderr, "  %s backend %s failed: %s\n", cache_key_.c_str(), plan->name.c_str(), e.what());
    }
  }
  plan_ = nullptr;
  if (debug_autotune())
    std::fprintf(stderr, "  %s backend: %zu configs (%d filtered), %d plans built, %d timed, %.1f ms\n",
                 cache_key_.c_str(), tuner.size(), tuner.filtered(), built, timed, ms_since(t0));
  if (!best) *note = "cuDNN graph API: no plan ran (" + std::to_string(tuner.size()) + " configs; last: " +
                     last_problem + ")";
  return best;
}

void ConvRunner::select_algorithm() {
  auto hit = ctx_.conv_cache.find(cache_key_);
  if (hit != ctx_.conv_cache.end()) {
    choice_ = hit->second;
  } else {
    ConvChoice c;
    try {
      c.legacy = tune_legacy();
    } catch (const std::exception&) {
      cudaGetLastError();
      c.legacy_error = std::current_exception();
    }
    if (!transpose_) {
      c.backend_note = graph_api_off_;
      if (graph_api_off_.empty()) {
        try {
          c.plan = tune_backend(&c.backend_note);
        } catch (const std::exception& e) {
          cudaGetLastError();
          plan_ = nullptr;
          c.backend_note = e.what();
        }
      }
    }
    if (c.legacy_error && !c.plan) std::rethrow_exception(c.legacy_error);
    choice_ = c;
    ctx_.conv_cache[cache_key_] = choice_;
  }
  use_path(choice_.plan ? 0 : 1);
}

std::vector<RunPath> ConvRunner::paths() const {
  if (transpose_) return {};
  return {{"backend", choice_.plan != nullptr, choice_.backend_note},
          {"legacy", !choice_.legacy_error, error_text(choice_.legacy_error)}};
}

void ConvRunner::use_path(size_t index) {
  if (index == 0 && choice_.plan) {
    build_variant_packs();
    plan_ = choice_.plan.get();
    return;
  }
  plan_ = nullptr;
  algo_ = choice_.legacy;
  // Run the legacy algorithm under the math type it was chosen with.
  TW_CUDNN(cudnnSetConvolutionMathType(conv_desc_.get(), algo_.math));
}

void ConvRunner::launch(int copy) {
  if (plan_) {
    execute_backend_plan(ctx_.cudnn, *plan_, packs_.at(copy));
    return;
  }
  const float alpha = 1.0f, beta = 0.0f;
  void* ws = ctx_.cudnn_workspace->data();
  if (!transpose_) {
    TW_CUDNN(cudnnConvolutionForward(ctx_.cudnn, &alpha, in_desc_.get(), buffer(copy, in_), filter_desc_.get(),
                                     buffer(copy, filter_), conv_desc_.get(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo_.algo), ws, algo_.workspace_bytes,
                                     &beta, out_desc_.get(), buffer(copy, out_)));
  } else {
    TW_CUDNN(cudnnConvolutionBackwardData(ctx_.cudnn, &alpha, filter_desc_.get(), buffer(copy, filter_),
                                          in_desc_.get(), buffer(copy, in_), conv_desc_.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo_.algo), ws,
                                          algo_.workspace_bytes, &beta, out_desc_.get(), buffer(copy, out_)));
  }
}

// conv: "backend engine=.. knobs=.." or "legacy ALGO/MATH"; conv_transpose: "ALGO/MATH".
std::string ConvRunner::algo_name() const {
  if (plan_) return "backend " + plan_->name;
  return (transpose_ ? "" : "legacy ") + legacy_name(algo_, transpose_);
}

}  // namespace

std::unique_ptr<OpRunner> make_conv(Context& ctx, const Layer& layer) {
  return std::make_unique<ConvRunner>(ctx, layer, false);
}

std::unique_ptr<OpRunner> make_conv_transpose(Context& ctx, const Layer& layer) {
  return std::make_unique<ConvRunner>(ctx, layer, true);
}

}  // namespace tw
