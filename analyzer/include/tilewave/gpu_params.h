// The GPU file's parameters as one constexpr table (docs/model.md
// "Parameters"): name, default, bounds, unit, meaning, scope, owner and how it
// carries to another GPU. param_table() (gpu_model.h) lists it for the
// loader, the fits and `tilewave params`; the cost model reads a parameter
// by its compile-time index (param_index), so a parameter is added here and
// where it is used, and a misspelt name does not compile.
#pragma once
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string_view>

#include "tilewave/gpu_model.h"

namespace tilewave {

// Defaults are architecture-neutral starting points; docs/model.md explains
// each term and docs/calibration.md how the fit moves them.
inline constexpr ParamInfo kGpuParams[] = {
    {"tc_efficiency", 0.80, 0.30, 1.00, "fraction",
     "fraction of the unit's peak the largest tile sustains in its main loop",
     ParamScope::layer, ParamOwner::architecture},
    {"tile_reuse_exponent", 0.30, 0.00, 1.50, "",
     "how fast main-loop efficiency falls with a tile's operand reuse mn/(m+n)",
     ParamScope::layer, ParamOwner::architecture},
    {"conv_efficiency", 0.90, 0.30, 1.30, "fraction",
     "implicit-GEMM convolution main loop relative to a plain GEMM (cuDNN's can beat cuBLAS's)",
     ParamScope::layer, ParamOwner::architecture},
    {"misaligned_efficiency", 0.25, 0.03, 1.00, "fraction",
     "GEMM main-loop rate when K (the reduction dimension) misses the precision's alignment",
     ParamScope::layer, ParamOwner::architecture},
    {"misaligned_n_efficiency", 0.25, 0.03, 1.00, "fraction",
     "GEMM main-loop rate when only N misses the alignment", ParamScope::layer, ParamOwner::architecture},
    {"partial_vector_efficiency", 0.50, 0.03, 1.00, "fraction",
     "GEMM main-loop rate when a misaligned K or N is still a multiple of 2 elements (narrower vector loads)",
     ParamScope::layer, ParamOwner::architecture},
    {"elementwise_loads_per_clock", 4.0, 0.5, 64.0, "elements/clock/SM",
     "operand elements an SM loads per clock in a GEMM whose odd dimension forces element-by-element loads "
     "(cuBLAS's align1 kernels)", ParamScope::layer, ParamOwner::architecture},
    {"conv_strided_efficiency", 1.00, 0.30, 1.50, "fraction",
     "main-loop rate of a strided convolution relative to a unit-stride one (gathered loads)",
     ParamScope::layer, ParamOwner::architecture},
    {"conv_misaligned_efficiency", 0.60, 0.03, 1.00, "fraction",
     "convolution main-loop rate when channels miss the alignment (on top of the padding)",
     ParamScope::layer, ParamOwner::architecture},
    {"split_k_overhead_us", 1.50, 0.00, 10.0, "us", "per halving round of reducing split-K partial sums",
     ParamScope::layer, ParamOwner::architecture},
    {"pipeline_fill_steps", 2.0, 0.0, 16.0, "k-steps",
     "time each CTA spends filling its load pipeline and writing its tile, in main-loop steps",
     ParamScope::layer, ParamOwner::architecture},
    {"tap_overhead_steps", 0.5, 0.0, 8.0, "k-steps",
     "extra main-loop time per filter tap (R*S position) of a convolution",
     ParamScope::layer, ParamOwner::architecture},
    {"wave_overhead_us", 0.60, 0.00, 5.00, "us",
     "per-wave pipeline fill and epilogue of a GEMM-like kernel", ParamScope::layer, ParamOwner::architecture},
    {"gemm_bw_efficiency", 0.80, 0.20, 1.00, "fraction",
     "fraction of DRAM bandwidth a GEMM-like kernel's operand traffic reaches",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"fixed_us_gemm", 3.00, 0.00, 20.0, "us", "fixed cost of one GEMM/conv kernel",
     ParamScope::layer, ParamOwner::launch},
    {"ramp_mb", 10.0, 0.10, 200.0, "MB",
     "the first ramp_mb of any kernel's DRAM traffic moves at the slower ramp rate",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::dram_bandwidth},
    {"ramp_bw_efficiency", 0.50, 0.05, 5.00, "fraction",
     "rate of that first part, as a fraction of DRAM bandwidth (in series with the class rate)",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"grouped_fallback_efficiency", 0.30, 0.01, 1.00, "fraction",
     "main-loop rate of a grouped conv whose group width is not a power of two, relative to a native one",
     ParamScope::layer, ParamOwner::architecture},
    {"transform_bw_efficiency", 0.20, 0.01, 1.00, "fraction",
     "DRAM bandwidth fraction of the layout transforms around such a conv (input and output, there and back)",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"direct_conv_efficiency", 0.40, 0.01, 1.00, "fraction",
     "fraction of CUDA-core peak a direct (depthwise/small-group) convolution reaches",
     ParamScope::layer, ParamOwner::architecture},
    {"direct_bw_efficiency", 0.60, 0.05, 1.00, "fraction",
     "fraction of DRAM bandwidth a direct convolution reaches", ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"fixed_us_direct", 2.50, 0.00, 20.0, "us", "fixed cost of one direct-convolution kernel",
     ParamScope::layer, ParamOwner::launch},
    {"l2_bw_factor", 2.0, 1.0, 4.0, "x DRAM",
     "rate of bytes served by L2 inside a network (reads of values just written, and those writes), relative to DRAM bandwidth",
     ParamScope::network_kernel, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"launch_gap_us", 0.3, 0.0, 3.0, "us",
     "wait between a kernel and the one it depends on inside a network (graph replay)",
     ParamScope::network, ParamOwner::runtime},
    {"l2_reuse_fraction", 0.5, 0.0, 2.0, "fraction",
     "share of L2 a tensor and the traffic since it was written may fill and still be an L2 hit",
     ParamScope::network_kernel, ParamOwner::memory_system},
    {"eltwise_bw_efficiency", 0.85, 0.05, 1.00, "fraction", "DRAM bandwidth fraction, elementwise",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"pool_bw_efficiency", 0.60, 0.05, 1.00, "fraction", "DRAM bandwidth fraction, pooling",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"reduce_bw_efficiency", 0.60, 0.05, 1.00, "fraction", "DRAM bandwidth fraction, reductions",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"softmax_bw_efficiency", 0.60, 0.05, 1.00, "fraction", "DRAM bandwidth fraction, softmax/normalisation",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"row_ns", 0.50, 0.00, 10.0, "ns",
     "GPU time per row of a row-normalisation kernel (LayerNorm, softmax): frameworks give each row a warp "
     "or a block, so many short rows are bound by the row rate, not by bandwidth",
     ParamScope::layer, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"layer_norm_fp32_row_factor", 1.00, 1.00, 3.00, "x",
     "row_ns of a LayerNorm over 4-byte values, as a multiple of its row_ns over 2-byte ones: PyTorch's "
     "vectorised LayerNorm kernel pays more per row in fp32 (an fp32 residual stream under autocast); 1 "
     "outside the sets that fit it",
     ParamScope::runtime, ParamOwner::launch},
    {"softmax_warp_value_ns", 0.00, 0.00, 10.0, "ns",
     "GPU time per value each thread holds of a 32-thread warp of PyTorch's short-row softmax (softmax_warp_forward: "
     "rows of at most 1,024 values, padded to a power of two, in the registers of up to 32 threads): its load, exp and "
     "store; 0 outside the sets that fit it, whose short rows pay row_ns",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"softmax_warp_shuffle_ns", 0.00, 0.00, 10.0, "ns",
     "GPU time per shuffle step of such a warp's reductions: a max and a sum over each row's threads",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"softmax_warp_chain_ns", 0.00, 0.00, 500.0, "ns",
     "GPU time per value each thread holds along one such warp's dependent chain (loads, max, exp, sum, "
     "stores): the floor of a softmax of few rows, which no other warp hides",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"row_block_element_ns", 1.05, 0.00, 20.0, "ns",
     "GPU time per element, read from DRAM, of a row that one thread block reduces alone (PyTorch's GroupNorm "
     "moments give each (image, group) row one block, whatever its length): each thread's loads wait on memory "
     "latency, so few long rows are bound by it, not by bandwidth",
     ParamScope::runtime, ParamOwner::memory_system},
    {"row_block_l2_element_ns", 0.45, 0.00, 20.0, "ns",
     "the same per element found in L2 (written by the kernel before): L2's shorter latency (defaults of the "
     "three row_block terms: the H200's fit, rounded)",
     ParamScope::runtime, ParamOwner::memory_system},
    {"row_block_us", 2.50, 0.00, 20.0, "us",
     "GPU time per thread block of a one-block-per-row kernel beside its elements (the block's reduction "
     "across its threads and its start)", ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"strided_element_ps", 0.00, 0.00, 100.0, "ps",
     "GPU time per output element that an elementwise kernel with a broadcast operand adds to its memory time: "
     "PyTorch eager runs it unvectorised (an offset computed per operand and element, one element per load); "
     "0 for runtimes that vectorise such kernels",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"fixed_us_strided_extra", 0.00, 0.00, 20.0, "us",
     "fixed cost of such a strided elementwise kernel beyond fixed_us_memory", ParamScope::runtime, ParamOwner::launch},
    {"unrolled_element_ps", 0.00, 0.00, 100.0, "ps",
     "GPU time per output element that an elementwise kernel over operands of two types (contiguous) adds to "
     "its memory time: PyTorch eager's unrolled kernel casts each element as it loads it, without vector "
     "loads; 0 for runtimes that generate their own kernels",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"fixed_us_unrolled_extra", 0.00, 0.00, 20.0, "us",
     "fixed cost of such an unrolled elementwise kernel beyond fixed_us_memory", ParamScope::runtime,
     ParamOwner::launch},
    {"special_function_ps", 0.00, 0.00, 50.0, "ps",
     "GPU time per special function (erf, tanh, exp, a sigmoid) per output element of an elementwise kernel, "
     "over the whole GPU: the time of such a kernel is at least its elements' arithmetic (GELU's erf on fast "
     "memory); 0 outside the sets that fit it",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"resample_plane_ns", 385.0, 0.00, 5000.0, "ns",
     "GPU time per (image, channel) plane, read from DRAM, of PyTorch's NCHW linear resample (bilinear "
     "upsampling): each thread owns one output position and loops over every plane, its loads waiting on memory "
     "latency, so a map of few positions over many planes is bound by the loop, not by bandwidth",
     ParamScope::runtime, ParamOwner::memory_system},
    {"resample_plane_l2_ns", 175.0, 0.00, 5000.0, "ns",
     "the same per plane where the kernel's data is found in L2: L2's shorter latency",
     ParamScope::runtime, ParamOwner::memory_system},
    {"resample_nearest_value_ps", 2.60, 0.00, 100.0, "ps",
     "GPU time per output value, over the whole GPU, of PyTorch's nearest-neighbour upsample of an NCHW map: "
     "each value's source index costs its thread more than its bytes cost the memory",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"resample_nearest_nhwc_value_ps", 6.20, 0.00, 100.0, "ps",
     "the same for its channels-last kernel, whose threads also divide by the channels",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"resample_linear_nhwc_value_ps", 9.00, 0.00, 100.0, "ps",
     "the same for PyTorch's channels-last bilinear upsample: four taps and their weights per value",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"row_blocks_per_sm", 4.00, 1.00, 32.0, "blocks",
     "resident blocks per SM of a one-block-per-row kernel: 2,048 threads per SM over PyTorch's 512-thread "
     "reduction blocks", ParamScope::layer, ParamOwner::architecture},
    {"reduce_row_ns", 0.00, 0.00, 10.0, "ns",
     "GPU time per output of a reduction over contiguous rows (a pool over H*W in NCHW, the means of "
     "squeeze-excitation): PyTorch's reduce_kernel gives each row a warp, so many short rows are bound by the "
     "row rate, not by bandwidth; 0 outside the sets that fit it",
     ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"copy_bw_efficiency", 0.70, 0.05, 1.00, "fraction", "DRAM bandwidth fraction, data movement",
     ParamScope::layer, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"norm_bw_efficiency", 0.60, 0.05, 1.00, "fraction",
     "DRAM bandwidth fraction, an inference BatchNorm's pass as PyTorch eager runs it",
     ParamScope::runtime, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"fused_bw_efficiency", 0.60, 0.05, 1.00, "fraction",
     "DRAM bandwidth fraction, generated kernels of fused pointwise ops (torch.compile)",
     ParamScope::runtime, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"fixed_us_memory", 2.00, 0.00, 20.0, "us", "fixed cost of one memory-bound kernel",
     ParamScope::layer, ParamOwner::launch},
    {"fixed_us_pool", 2.00, 0.00, 40.0, "us",
     "fixed cost of one pooling kernel (frameworks' own NHWC pooling kernels have a large one)",
     ParamScope::layer, ParamOwner::launch},
    {"fixed_us_transform", 2.00, 0.00, 40.0, "us", "fixed cost of one cuDNN layout-transform kernel",
     ParamScope::runtime, ParamOwner::launch},
    {"fixed_us_norm_extra", 0.00, 0.00, 20.0, "us",
     "fixed cost of a BatchNorm pass kernel (PyTorch eager's) beyond fixed_us_memory",
     ParamScope::runtime, ParamOwner::launch},
    {"norm_plane_ns", 0.00, 0.00, 10.0, "ns",
     "GPU time per (image, channel) plane of a BatchNorm pass in NCHW (cuDNN's bn_fw_inf_1C11_kernel_NCHW "
     "walks the tensor plane by plane, so many small planes are bound by the plane rate, not by bandwidth); "
     "0 outside the sets that fit it", ParamScope::runtime, ParamOwner::launch, ParamScale::inverse_sm_clock},
    {"norm_max_bw_efficiency", 5.00, 0.05, 5.00, "fraction",
     "rate of a BatchNorm pass kernel's own per-element work, as a fraction of DRAM bandwidth: it moves no "
     "byte faster, not even one served by L2", ParamScope::runtime, ParamOwner::memory_system, ParamScale::sm_limited_rate},
    {"fixed_us_reduce_extra", 0.00, 0.00, 20.0, "us",
     "fixed cost of a reduction kernel (PyTorch's reduce_kernel: global pools, means) beyond fixed_us_memory",
     ParamScope::runtime, ParamOwner::launch},
    {"interval_graph_no_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over the held-out networks without attention that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_graph_no_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over the held-out networks without attention that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_graph_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over the held-out networks with attention (a softmax or an attention kernel) that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_graph_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over the held-out networks with attention (a softmax or an attention kernel) that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_gpu_no_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the GPU sets, over the held-out networks without attention that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_gpu_no_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the GPU sets, over the held-out networks without attention that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_gpu_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the GPU sets, over the held-out networks with attention (a softmax or an attention kernel) that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_gpu_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the GPU sets, over the held-out networks with attention (a softmax or an attention kernel) that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_host_no_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the host sets, over the held-out networks without attention that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_host_no_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the host sets, over the held-out networks without attention that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_host_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the host sets, over the held-out networks with attention (a softmax or an attention kernel) that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"interval_loop_host_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the host sets, over the held-out networks with attention (a softmax or an attention kernel) that calibrated this GPU (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_graph_no_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over networks without attention measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_graph_no_attention_low (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_graph_no_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over networks without attention measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_graph_no_attention_high (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_graph_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over networks with attention (a softmax or an attention kernel) measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_graph_attention_low (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_graph_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, the GPU time of a CUDA-graph replay, over networks with attention (a softmax or an attention kernel) measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_graph_attention_high (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_gpu_no_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the GPU sets, over networks without attention measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_gpu_no_attention_low (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_gpu_no_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the GPU sets, over networks without attention measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_gpu_no_attention_high (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_gpu_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the GPU sets, over networks with attention (a softmax or an attention kernel) measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_gpu_attention_low (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_gpu_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the GPU sets, over networks with attention (a softmax or an attention kernel) measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_gpu_attention_high (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_host_no_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the host sets, over networks without attention measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_host_no_attention_low (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_host_no_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the host sets, over networks without attention measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_host_no_attention_high (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_host_attention_low", 0.00, 0.00, 20.0, "x",
     "10th percentile of measured / predicted, a plain loop's step that the host sets, over networks with attention (a softmax or an attention kernel) measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_host_attention_low (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"carried_interval_loop_host_attention_high", 0.00, 0.00, 20.0, "x",
     "90th percentile of measured / predicted, a plain loop's step that the host sets, over networks with attention (a softmax or an attention kernel) measured on a GPU whose file was carried from this one; a file carried from this one states it as its interval_loop_host_attention_high (docs/model.md \"Prediction intervals\"); 0: not measured",
     ParamScope::runtime, ParamOwner::validation},
    {"attention_floor_us", 0.00, 0.00, 20.0, "us",
     "fixed time of a fused attention kernel (cuDNN's flash kernel under eager PyTorch) beside its CTAs' work: "
     "its launch and first wave (docs/model.md \"Attention\"); this and the six below are 0 where not measured, "
     "and such a GPU prices the kernel as a GEMM", ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"attention_cta_us", 0.00, 0.00, 20.0, "us",
     "SM time of one CTA of a fused attention kernel beside its key blocks (128 queries of one batch and head: "
     "loading them and writing their output), head sizes up to 64", ParamScope::runtime, ParamOwner::architecture,
     ParamScale::inverse_clock},
    {"attention_block_us", 0.00, 0.00, 20.0, "us",
     "SM time of one block of 128 keys in such a CTA (both products and the online softmax), head sizes up to 64",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"attention_wide_cta_us", 0.00, 0.00, 20.0, "us", "attention_cta_us of the kernel for head sizes above 64",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"attention_wide_block_us", 0.00, 0.00, 20.0, "us", "attention_block_us of the kernel for head sizes above 64",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"attention_mask_block_us", 0.00, 0.00, 20.0, "us",
     "SM time a mask (an additive bias or a bool mask) adds to each key block, for mask rows of an even length",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"attention_mask_odd_block_us", 0.00, 0.00, 40.0, "us",
     "the same for mask rows of an odd length (49, 197, 577 keys), which cannot be read two values at a time",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"narrow_conv_nhwc_tile_us", 0.00, 0.00, 20.0, "us",
     "time per SM of one 128x32 output tile's set-up and write-back in the tensor-core implicit GEMM without vector "
     "loads that cuDNN runs, from NHWC, for a convolution over fewer channels than one vector and no first-layer "
     "kernel (docs/model.md \"Narrow-channel convolutions\"); this and the three below are 0 where not measured, and "
     "such a GPU prices the convolution as a padded GEMM", ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"narrow_conv_nhwc_step_us", 0.00, 0.00, 20.0, "us",
     "time per SM of one 16-deep reduction step of such a tile (its operands gathered element by element)",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"narrow_conv_nchw_tile_us", 0.00, 0.00, 20.0, "us",
     "the tile term of its CUDA-core implicit GEMM from NCHW (cuDNN's implicit_convolve_sgemm)",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"narrow_conv_nchw_step_us", 0.00, 0.00, 20.0, "us", "the step term of that CUDA-core implicit GEMM",
     ParamScope::runtime, ParamOwner::architecture, ParamScale::inverse_clock},
    {"max_split_k", 16, 16, 16, "", "largest split-K factor the GEMM heuristic considers (not fitted)",
     ParamScope::layer, ParamOwner::architecture},
};
inline constexpr size_t kGpuParamCount = std::size(kGpuParams);

// The index of `name` in kGpuParams; used where a constant is required
// (CostModel::get<param_index("tc_efficiency")>()), an unknown name is a
// compile error, elsewhere a logic_error.
constexpr size_t param_index(std::string_view name) {
  for (size_t i = 0; i < kGpuParamCount; ++i)
    if (name == kGpuParams[i].name) return i;
  throw std::logic_error("unknown model parameter");
}

}  // namespace tilewave
