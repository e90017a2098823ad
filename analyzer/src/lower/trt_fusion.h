// TensorRT-like lowering: GEMM-like heads absorb elementwise epilogues and
// elementwise ops form chains (docs/model.md "Runtimes").
#pragma once
#include "tilewave/lowering.h"

namespace tilewave {

KernelGraph fuse_trt(const LowerInput& in);

}  // namespace tilewave
