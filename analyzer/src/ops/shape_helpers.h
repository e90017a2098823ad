// Helpers the ops' shape functions share: element counts, broadcast
// indexing for evaluating small known values, and output element types.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "tilewave/tensor_values.h"
#include "tilewave/shape_context.h"

namespace tilewave::shape {

int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);  // -1 if any is -1
bool known(const std::vector<int64_t>& dims);
// Offset into an input of `in_dims` for the flat index `i` of a broadcast output.
size_t broadcast_offset(size_t i, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_dims);
// A value of `dims` holding integers or reals, per the element type.
TensorValue make_value(const std::vector<int64_t>& dims, int32_t elem_type);
void push(TensorValue& v, double real, int64_t integer);
// Output 0's value when input 0's is known: element i of the output is
// element source(i) of the input (Slice, Transpose, Expand, Tile).
void remap_value(ShapeContext& ctx, const std::vector<int64_t>& out_dims,
                 const std::function<size_t(size_t)>& source);
// Compute ops (Conv, Gemm, MatMul) need every operand dimension >= 1: a
// zero-sized one is legal ONNX elsewhere but has no kernel to cost, and
// would give 0/0 later (docs/errors.md).
void require_nonempty(const ShapeContext& ctx, const std::vector<int64_t>& dims, const char* operand);
// Coordinates of flat index i in dims, innermost last.
std::vector<int64_t> coords(size_t i, const std::vector<int64_t>& dims);
// The value reshaped (same data, new dims).
TensorValue reshaped(const TensorValue& v, const std::vector<int64_t>& dims);

}  // namespace tilewave::shape
