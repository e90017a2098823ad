// Layer data types (the `dtype` field) and the storage formats behind them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "tilewave/dtype.h"  // the analyzer's precision names, shared so both read the same layer sets

namespace tw {

// What the layer set asks for. tf32 is fp32 storage with TF32 tensor-core math.
using tilewave::DType;
using tilewave::dtype_name;
using tilewave::parse_dtype;

// How a buffer is stored on the device (int8 GEMM writes int32).
enum class Storage { f32, f16, bf16, i8, i32 };

Storage storage_of(DType t);
size_t storage_bytes(Storage s);

}  // namespace tw
