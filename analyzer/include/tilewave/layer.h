// A Layer is one GPU kernel described by its problem shape alone: what the
// layer-set format (docs/layerset.md) holds and what the cost model consumes.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "tilewave/dtype.h"

namespace tilewave {

struct ConvProblem {
  int64_t N = 1, C = 1, H = 1, W = 1, K = 1, R = 1, S = 1;
  std::array<int64_t, 2> stride{1, 1}, pad{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool transposed = false;  // ConvTranspose: H,W are the input size
  // The kernel reads and writes NCHW memory, as the layout pass decides it
  // (a lone layer runs NHWC).
  bool nchw = false;
  int64_t P() const;        // output height
  int64_t Q() const;        // output width
  int64_t macs() const;
};

struct GemmProblem {
  int64_t M = 1, N = 1, K = 1, batch = 1;
  int64_t macs() const { return M * N * K * batch; }
};

// Attention as one fused, flash-attention-style kernel (docs/model.md
// "Attention"): per (batch x head), softmax(Q K^T) V over q_len queries and
// kv_len keys, never writing the q_len x kv_len scores.
struct AttentionProblem {
  int64_t batch_heads = 1, q_len = 1, kv_len = 1, head_dim = 1, v_head_dim = 1;
  // An additive or bool mask read with the scores (a relative-position bias,
  // a padding mask): the fused kernel loads a tile of it per key block.
  bool masked = false;
  int64_t macs() const { return batch_heads * q_len * kv_len * (head_dim + v_head_dim); }
};

// fused: a generated kernel for a group of pointwise ops and reductions
// (torch.compile), reading elems_in and writing elems_out.
// transform: cuDNN's layout transforms around a grouped convolution that
// has no native NHWC kernel (docs/model.md "Grouped convolutions").
// norm: an inference BatchNorm's pass over its tensor as PyTorch eager runs
// it (channels-last), slower than a plain elementwise kernel.
// row_norm: a normalisation of each of `outer` rows of `inner` elements
// (Softmax, LayerNorm, RMSNorm). Layer sets, outputs and the GPU file's
// parameters spell it "softmax", the kernel the runner times for it
// (docs/layerset.md): a data format name kept so that files stay readable.
enum class MemoryOp { eltwise, pool, reduce, row_norm, copy, fused, transform, norm };
// The longest row PyTorch's softmax runs in registers, a warp or less a row
// (MemoryProblem::warp_rows).
constexpr int64_t kWarpRowsMaxValues = 1024;
constexpr int kMemoryOpCount = 8;
const char* memory_op_name(MemoryOp op);
// PyTorch's upsample kernels that give each thread output values (not
// planes): nearest over NCHW or channels-last memory, linear over
// channels-last (docs/model.md "Memory-bound kernels").
enum class ResampleKernel { none, nearest_nchw, nearest_nhwc, linear_nhwc };
const char* resample_kernel_name(ResampleKernel k);
// The kernel a name gives (a layer set's `resample_kernel`); none for "none"
// is not a name: absent means any other copy.
std::optional<ResampleKernel> resample_kernel_of(std::string_view name);

// Memory-bound kernels: the cost model needs only bytes and a class; the
// shape fields are kept so the calibration runner can rebuild the kernel.
struct MemoryProblem {
  MemoryOp op = MemoryOp::eltwise;
  int64_t elems = 0;       // eltwise: outputs
  int64_t inputs = 1;      // eltwise: full-size inputs read
  int64_t outer = 0, inner = 0;             // reduce, row_norm; norm: outer = N x C planes
  // reduce, row_norm: kept elements between two consecutive reduced ones in
  // memory; 1 when each output reduces one contiguous row (a pool over H*W
  // in NCHW, a mean or softmax over the last axis), which frameworks give a
  // warp or a block each (docs/model.md "Memory-bound kernels").
  int64_t kept_inside = 1;
  // row_norm: a softmax over contiguous rows of at most 1,024 values, which
  // PyTorch runs one or more rows to a warp, each thread holding its values
  // in registers (docs/model.md "Memory-bound kernels").
  bool warp_rows = false;
  // row_norm: only each row's moments (mean, 1/std) are written, one thread
  // block per row whatever its length, as PyTorch's GroupNorm runs them
  // (docs/model.md "Memory-bound kernels").
  bool row_moments = false;
  // row_norm: a LayerNorm (each row's mean and variance, then its scale and
  // shift), whose PyTorch kernel pays more per row over 4-byte values than
  // over 2-byte ones (docs/model.md "Memory-bound kernels").
  bool layer_norm = false;
  // eltwise: an operand is broadcast (a per-channel bias or scale), which
  // PyTorch's elementwise kernels cannot vectorise: each thread computes every
  // operand's offset per element, bound by issue, not bandwidth
  // (docs/model.md "Memory-bound kernels").
  bool strided = false;
  // eltwise: operands of two types, every one contiguous (under autocast, a
  // half tensor beside an fp32 one): PyTorch's unrolled kernel casts each
  // element as it loads it, without vector loads (docs/model.md
  // "Memory-bound kernels"). A strided kernel is not also unrolled.
  bool unrolled = false;
  // eltwise: special functions (erf, tanh, exp, a sigmoid) evaluated per
  // output element: GELU's erf, SiLU's sigmoid, Mish's two. Their arithmetic
  // outlasts the traffic where memory is fast (docs/model.md "Memory-bound
  // kernels").
  int64_t special_functions = 0;
  int64_t elems_in = 0, elems_out = 0;      // copy, fused
  // copy: a linear or cubic resample of NCHW memory as PyTorch eager runs it,
  // one thread per output position looping over every (image, channel)
  // plane: its planes run one after another, each at a memory latency
  // (docs/model.md "Memory-bound kernels"). 0: any other copy.
  int64_t resample_planes = 0;
  // copy: PyTorch eager's resample kernel that spreads over every output
  // value, bound by its index arithmetic per value rather than its bytes
  // (docs/model.md "Memory-bound kernels"). none: any other copy.
  ResampleKernel resample_kernel = ResampleKernel::none;
  // An op on autocast's fp32 list (any resample): under autocast it
  // reads and writes fp32, after a cast of its input (docs/model.md
  // "Precision pass"). Softmax-class kernels are there by their op.
  bool autocast_fp32 = false;
  ConvProblem window;      // pool: N,C,H,W,R,S,stride,pad
  bool max_pool = true;
  int64_t elems_read() const;
  int64_t elems_written() const;
};

// A grouped convolution whose group width cuDNN has no native NHWC kernel
// for: not a power of two, and wider than one `align`-element vector.
bool grouped_fallback(const ConvProblem& p, int align);
// A depthwise convolution: each of its groups (at least two) reads one input
// channel, whatever its channel multiplier (docs/model.md "Direct
// convolution (depthwise and small groups)"). The one definition.
bool is_depthwise(int64_t in_channels, int64_t groups);
bool is_depthwise(const ConvProblem& p);
// A pointwise convolution: a 1x1 filter at stride 1, a GEMM over the
// channels at each position (docs/model.md "Pointwise convolutions on NCHW").
bool is_pointwise(const ConvProblem& p);
// A dense pointwise convolution in half precision: given NCHW, cuDNN runs it
// either as one GEMM per image or through NHWC (docs/model.md "Pointwise
// convolutions on NCHW"). The one definition the layout pass and the cost share.
bool is_dense_half_pointwise(const ConvProblem& p, DType dtype);
// Which kernel cuDNN runs for a dense convolution reading fewer channels than
// one `align`-element vector (an RGB stem), in `nchw` memory or NHWC
// (docs/model.md "Narrow-channel convolutions"): its first-layer kernel for
// the shapes it has one for, padded to 4 channels; otherwise, with at least
// one vector of filters, an implicit GEMM without vector loads.
enum class NarrowConv { none, first_layer, unaligned };
NarrowConv narrow_conv(const ConvProblem& p, int align, bool nchw);

using Problem = std::variant<ConvProblem, GemmProblem, MemoryProblem, AttentionProblem>;

struct Layer {
  Problem problem;
  DType dtype = DType::fp16;
  // The element type of the activations a memory-bound kernel reads, when it
  // is not `dtype`: a cast (fp32 in, fp16 out), or an op autocast runs in
  // fp32 (docs/model.md "Precision pass"). Unset: `dtype`.
  std::optional<DType> input_dtype;
  // Bytes moved beyond the problem's own operands: small broadcast operands
  // (scale, bias) and, after fusion, residual inputs read by an epilogue.
  int64_t extra_bytes = 0;
};

// An elementwise kernel over `elems` values of one full-size input, written
// as `dtype` (a cast, a runtime's own pass).
Layer elementwise_layer(int64_t elems, DType dtype, int64_t extra_bytes = 0);

// The largest FLOP or byte count tilewave computes for one kernel (2^60):
// every count is a 64-bit integer, and a network sums thousands of them.
constexpr long double kMaxKernelCount = 1152921504606846976.0L;
// False when the layer's FLOPs or bytes would exceed kMaxKernelCount (their
// 64-bit computation would overflow); checked in wide arithmetic first.
bool layer_within_limits(const Layer& l);

// Useful work in FLOPs: 2*MACs for conv/gemm/matmul, 0 for memory-bound
// kernels (their ops are not the work the peak FLOP/s refers to).
int64_t useful_flops(const Layer& l);
// Minimum DRAM traffic: each input read once, each output written once.
int64_t min_bytes(const Layer& l);
// What kind of kernel a problem is: the one classification of predicted
// kernels (docs/model.md "Kernel classes"). Convolutions by kind, because
// depthwise and grouped ones run other kernels than dense ones; memory
// kernels by their MemoryOp. Each output's vocabulary is a spelling of it.
enum class KernelClass {
  conv, conv_grouped, conv_depthwise, conv_transpose, gemm, attention,
  eltwise, pool, reduce, row_norm, copy, fused, transform, norm,
};
KernelClass kernel_class(const Layer& l);
// "conv_depthwise", "gemm", "eltwise" ... (the calibration's layer classes).
const char* kernel_class_name(KernelClass c);
// A library kernel (cuDNN, cuBLAS, flash attention) rather than a memory-bound one.
bool is_library(KernelClass c);
// Short kind name used in reports and layer sets: conv (any dense, grouped or
// depthwise), conv_transpose, gemm, attention, or the memory class.
std::string layer_kind(const Layer& l);

}  // namespace tilewave
