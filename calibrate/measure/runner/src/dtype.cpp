#include "dtype.hpp"

namespace tw {

Storage storage_of(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32: return Storage::f32;
    case DType::fp16: return Storage::f16;
    case DType::bf16: return Storage::bf16;
    case DType::int8: return Storage::i8;
  }
  return Storage::f32;
}

size_t storage_bytes(Storage s) {
  switch (s) {
    case Storage::f32:
    case Storage::i32: return 4;
    case Storage::f16:
    case Storage::bf16: return 2;
    case Storage::i8: return 1;
  }
  return 4;
}

}  // namespace tw
