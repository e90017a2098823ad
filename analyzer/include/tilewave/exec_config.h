// How a network is run: the one typed execution configuration (docs/model.md
// "Execution configuration"). Lowering, the passes, the cost model's
// parameter set and the schedule all read it; every result carries it.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "tilewave/dtype.h"
#include "tilewave/exec_axes.h"

namespace tilewave {

class RuntimeProfile;

// What a runtime is run with when nothing says otherwise (docs/model.md
// "Execution configuration"): PyTorch's runtimes as timm's benchmark.py runs
// them (NCHW, fp32 weights under autocast, a plain loop); an engine as built.
struct RuntimeDefaults {
  bool amp = true;
  Layout layout = Layout::nchw;
  Launch launch = Launch::loop;
};

struct ExecutionConfig {
  // Every default below is the default runtime's (RuntimeDefaults); parsing
  // fills a missing key from the named runtime's defaults instead.
  const RuntimeProfile* runtime = nullptr;  // null: the default runtime
  // The compute type of convolutions and GEMMs. fp32 under a PyTorch
  // runtime follows PyTorch's defaults: convolutions in TF32
  // (cudnn.allow_tf32), matmuls in full fp32.
  DType dtype = DType::fp16;
  // Weights kept in fp32 and the forward run under torch.autocast(dtype):
  // every weight cast on every forward, autocast's fp32 ops in fp32 with casts
  // around them. false: weights stored in dtype (model.half()).
  bool amp = RuntimeDefaults{}.amp;
  Layout layout = RuntimeDefaults{}.layout;
  Launch launch = RuntimeDefaults{}.launch;
  bool fuse_attention = true;  // --attention fused (default) | unfused

  const RuntimeProfile& runtime_profile() const;
  // The element type activations are stored in between kernels.
  DType activation_dtype() const;
  // The layout activations have between framework ops: `layout` where the
  // runtime follows PyTorch's memory format (RuntimeProfile::follows_layout),
  // else NHWC, which compilers and engines pick for convolutions
  // (docs/model.md "Layout pass").
  Layout activation_layout() const;
  // "eager nhwc fp16 graph", "eager nchw amp-fp16 loop".
  std::string name() const;
  // The key of the GPU file's parameter set fitted on this layout and
  // precision under this runtime: "eager nchw amp", "eager nhwc half".
  std::string params_key() const;
  nlohmann::json to_json() const;
};

// The runtime's own defaults (RuntimeDefaults) at `dtype`: what a command
// runs when no flag names an axis. Setting ExecutionConfig::runtime alone
// keeps the default runtime's axes instead.
ExecutionConfig default_execution(const RuntimeProfile& runtime, DType dtype = DType::fp16);

// The harness calibrate/'s layer, network and runtime sets were measured
// under: channels_last, weights stored in dtype (model.half()), the forward
// replayed as a CUDA graph. The fits that read those sets lower with it.
ExecutionConfig cuda_graph_harness(const RuntimeProfile& runtime, DType dtype);

// The configuration a JSON object describes (the form to_json writes); a
// missing key takes the runtime's default (amp only for an fp16 or bf16
// dtype: fp32 means PyTorch's fp32). InputError naming `where`.
ExecutionConfig execution_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace tilewave
