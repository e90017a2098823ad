// Layer data types (the `dtype` field) and the storage formats behind them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace tw {

// What the layer set asks for. tf32 is fp32 storage with TF32 tensor-core math.
enum class DType { fp32, tf32, fp16, bf16, int8 };

// How a buffer is stored on the device (int8 GEMM writes int32).
enum class Storage { f32, f16, bf16, i8, i32 };

std::optional<DType> parse_dtype(const std::string& name);
const char* dtype_name(DType t);
Storage storage_of(DType t);
size_t storage_bytes(Storage s);

}  // namespace tw
