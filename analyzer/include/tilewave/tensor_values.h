// Load-time values of small tensors, read from the file's TensorProtos.
#pragma once
#include <optional>

#include "tilewave/model.h"

namespace tilewave::onnx {
class TensorProto;
}

namespace tilewave {

// ONNX element types tilewave reads values of (onnx::TensorProto::DataType).
namespace elem {
constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7, kBool = 9,
                  kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13, kBfloat16 = 16;
bool is_real(int32_t t);
}  // namespace elem

// The tensor's value if it is small, stored in the file (not external) and of
// a numeric type; nullopt otherwise.
std::optional<TensorValue> tensor_value(const onnx::TensorProto& t);

}  // namespace tilewave
