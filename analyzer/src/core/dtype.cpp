#include "tilewave/dtype.h"

#include "tilewave/error.h"  // no fmt: the CUDA calibration runner compiles this file too

namespace tilewave {

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "fp32") return DType::fp32;
  if (s == "tf32") return DType::tf32;
  if (s == "fp16") return DType::fp16;
  if (s == "bf16") return DType::bf16;
  if (s == "int8") return DType::int8;
  return std::nullopt;
}

DType dtype_named(const std::string& s, const std::string& where) {
  if (const auto d = parse_dtype(s)) return *d;
  throw InputError(where, "unknown dtype '" + s + "' (fp32, tf32, fp16, bf16, int8)");
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::int8: return "int8";
  }
  return "?";
}

int dtype_bytes(DType d) {
  switch (d) {
    case DType::fp32:
    case DType::tf32: return 4;
    case DType::fp16:
    case DType::bf16: return 2;
    case DType::int8: return 1;
  }
  return 4;
}

}  // namespace tilewave
