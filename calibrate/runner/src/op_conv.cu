// conv (cudnnConvolutionForward) and conv_transpose (cudnnConvolutionBackwardData),
// NHWC, autotuned with the legacy cudnnFind*Ex API as frameworks do in benchmark
// mode; find's first picks are then re-timed on the real launch path.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.hpp"
#include "context.hpp"
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
};

// fp32 uses CUDNN_FMA_MATH so no TF32 tensor-core kernel can be picked;
// tf32 uses CUDNN_TENSOR_OP_MATH on fp32 data, which permits TF32 kernels.
ConvTypes conv_types(DType t) {
  switch (t) {
    case DType::fp32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH};
    case DType::tf32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH};
    case DType::fp16: return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH};
    case DType::bf16: return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH};
    case DType::int8: return {CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DEFAULT_MATH};
  }
  return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH};
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
std::vector<ConvChoice> successful(const Perf* perf, int count) {
  std::vector<ConvChoice> found;
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

// cudnnFind's first few picks are re-timed by us (see select_algorithm).
constexpr size_t kConvCandidates = 4;

bool debug_autotune() {
  static const bool on = std::getenv("TW_DEBUG_AUTOTUNE") != nullptr;
  return on;
}

class ConvRunner : public OpRunner {
 public:
  ConvRunner(Context& ctx, const Layer& layer, bool transpose);
  void select_algorithm() override;
  void launch(int copy) override;
  std::string algo_name() const override;

 private:
  std::vector<ConvChoice> find_forward();
  std::vector<ConvChoice> find_backward_data();
  std::vector<ConvChoice> candidates(const std::vector<ConvChoice>& found);
  bool workspace_bytes(ConvChoice& c);
  ConvChoice fastest_measured(const std::vector<ConvChoice>& candidates);

  bool transpose_;
  ConvTypes types_;
  std::string cache_key_;
  TensorDesc in_desc_, out_desc_;
  FilterDesc filter_desc_;
  ConvDesc conv_desc_;
  size_t in_ = 0, filter_ = 0, out_ = 0;  // tensor indices
  ConvChoice choice_;
};

ConvRunner::ConvRunner(Context& ctx, const Layer& layer, bool transpose)
    : OpRunner(ctx), transpose_(transpose), types_(conv_types(layer.dtype)) {
  const ConvShape s = read_shape(layer);
  check_types_supported(s, layer.dtype, transpose);
  cache_key_ = std::string(transpose ? "convT" : "conv") + "|" + dtype_name(layer.dtype);
  for (int64_t v : {s.N, s.C, s.H, s.W, s.K, s.R, s.S, s.groups, s.stride[0], s.stride[1], s.pad[0],
                    s.pad[1], s.dilation[0], s.dilation[1]})
    cache_key_ += "|" + std::to_string(v);

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

std::vector<ConvChoice> ConvRunner::find_forward() {
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int count = 0;
  TW_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(
      ctx_.cudnn, in_desc_.get(), buffer(0, in_), filter_desc_.get(), buffer(0, filter_), conv_desc_.get(),
      out_desc_.get(), buffer(0, out_), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf,
      ctx_.cudnn_workspace->data(), ctx_.cudnn_workspace->bytes()));
  return successful(perf, count);
}

std::vector<ConvChoice> ConvRunner::find_backward_data() {
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int count = 0;
  TW_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
      ctx_.cudnn, filter_desc_.get(), buffer(0, filter_), in_desc_.get(), buffer(0, in_), conv_desc_.get(),
      out_desc_.get(), buffer(0, out_), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf,
      ctx_.cudnn_workspace->data(), ctx_.cudnn_workspace->bytes()));
  return successful(perf, count);
}

// Workspace the algorithm needs under c.math; false if it cannot run or needs too much.
bool ConvRunner::workspace_bytes(ConvChoice& c) {
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
std::vector<ConvChoice> ConvRunner::candidates(const std::vector<ConvChoice>& found) {
  std::vector<ConvChoice> list;
  auto add = [&](ConvChoice c) {
    for (const auto& x : list)
      if (x.algo == c.algo && x.math == c.math) return;
    list.push_back(c);
  };
  for (size_t i = 0; i < found.size() && i < kConvCandidates; ++i) {
    add(found[i]);
    ConvChoice requested{found[i].algo, types_.math, 0};
    if (requested.math != found[i].math && workspace_bytes(requested)) add(requested);
  }
  return list;
}

// Times each candidate over the rotating buffers with a small graph (see time_candidate_us).
ConvChoice ConvRunner::fastest_measured(const std::vector<ConvChoice>& list) {
  ConvChoice best = list.front();
  double best_us = 1e30;
  for (const ConvChoice& c : list) {
    try {
      choice_ = c;
      TW_CUDNN(cudnnSetConvolutionMathType(conv_desc_.get(), c.math));
      const double us = time_candidate_us(ctx_.stream, [&](int copy) { launch(copy); }, copies());
      if (debug_autotune())
        std::fprintf(stderr, "  %s %s: %.2f us\n", cache_key_.c_str(), algo_name().c_str(), us);
      if (us < best_us) best_us = us, best = c;
    } catch (const std::exception& e) {
      cudaGetLastError();
      if (debug_autotune()) std::fprintf(stderr, "  %s candidate failed: %s\n", cache_key_.c_str(), e.what());
    }
  }
  if (best_us == 1e30) throw LayerError("no cudnnFind candidate could be run");
  return best;
}

void ConvRunner::select_algorithm() {
  auto hit = ctx_.conv_cache.find(cache_key_);
  if (hit != ctx_.conv_cache.end()) {
    choice_ = hit->second;
  } else {
    std::vector<ConvChoice> found = transpose_ ? find_backward_data() : find_forward();
    TW_CUDA(cudaStreamSynchronize(ctx_.stream));
    choice_ = fastest_measured(candidates(found));
    ctx_.conv_cache[cache_key_] = choice_;
  }
  // Run the algorithm under the math type it was chosen with.
  TW_CUDNN(cudnnSetConvolutionMathType(conv_desc_.get(), choice_.math));
}

void ConvRunner::launch(int copy) {
  const float alpha = 1.0f, beta = 0.0f;
  void* ws = ctx_.cudnn_workspace->data();
  if (!transpose_) {
    TW_CUDNN(cudnnConvolutionForward(ctx_.cudnn, &alpha, in_desc_.get(), buffer(copy, in_), filter_desc_.get(),
                                     buffer(copy, filter_), conv_desc_.get(),
                                     static_cast<cudnnConvolutionFwdAlgo_t>(choice_.algo), ws,
                                     choice_.workspace_bytes, &beta, out_desc_.get(), buffer(copy, out_)));
  } else {
    TW_CUDNN(cudnnConvolutionBackwardData(ctx_.cudnn, &alpha, filter_desc_.get(), buffer(copy, filter_),
                                          in_desc_.get(), buffer(copy, in_), conv_desc_.get(),
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(choice_.algo), ws,
                                          choice_.workspace_bytes, &beta, out_desc_.get(), buffer(copy, out_)));
  }
}

std::string ConvRunner::algo_name() const {
  const int count = transpose_ ? static_cast<int>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT)
                               : static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  if (choice_.algo < 0 || choice_.algo >= count) return "ALGO_" + std::to_string(choice_.algo);
  const char* algo = transpose_ ? kBwdDataAlgoNames[choice_.algo] : kFwdAlgoNames[choice_.algo];
  return std::string(algo) + "/" + math_name(choice_.math);
}

}  // namespace

std::unique_ptr<OpRunner> make_conv(Context& ctx, const Layer& layer) {
  return std::make_unique<ConvRunner>(ctx, layer, false);
}

std::unique_ptr<OpRunner> make_conv_transpose(Context& ctx, const Layer& layer) {
  return std::make_unique<ConvRunner>(ctx, layer, true);
}

}  // namespace tw
