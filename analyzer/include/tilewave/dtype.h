#pragma once
#include <optional>
#include <string>

namespace tilewave {

// Precision the network runs in. fp32 runs on CUDA cores; tf32 is fp32 storage
// with tensor-core math.
enum class DType { fp32, tf32, fp16, bf16, int8 };

std::optional<DType> parse_dtype(const std::string& s);
// The same, or InputError naming `where` (an option, a keyword) and the known names.
DType dtype_named(const std::string& s, const std::string& where);
const char* dtype_name(DType d);
// Bytes one stored element takes (tf32 is stored as fp32).
int dtype_bytes(DType d);

}  // namespace tilewave
