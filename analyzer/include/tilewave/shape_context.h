// What an op's shape function sees (docs/model.md "Pipeline", stage 2): the
// vocabulary of the shape functions in each registry entry (ops/), as ONNX's
// InferenceContext is for its schemas. Small tensors whose values are known
// at load time (initializers, constants and the integer arithmetic on Shape
// outputs that exporters write for reshapes, TF-"same" padding and resize
// sizes) are evaluated as well (tensor_values.h), so that shapes depending
// on them resolve for any batch. The engine that runs them is
// shape_inference.h.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tilewave/model.h"

namespace tilewave {

// The op cannot infer its outputs here (an unsupported form, an input whose
// shape or value is unknown); its outputs stay unknown, with this reason.
struct ShapeUnknown : std::runtime_error {
  explicit ShapeUnknown(const std::string& why, bool from_upstream = false)
      : std::runtime_error(why), upstream(from_upstream) {}
  bool upstream;  // an input is unknown: `what()` is that input's reason, passed on unchanged
};

// What a shape function sees of one node: its inputs' shapes and known
// values, its attributes (through `node`), and the opset it is read under.
class ShapeContext {
 public:
  ShapeContext(const Model& model, const Node& node);

  const Model& model;
  const Node& node;
  const int64_t opset;  // of the node's domain

  size_t num_inputs() const { return node.inputs.size(); }
  size_t num_outputs() const { return node.outputs.size(); }
  bool has_input(size_t i) const { return i < node.inputs.size() && !node.inputs[i].empty(); }
  bool has_output(size_t i) const { return i < node.outputs.size() && !node.outputs[i].empty(); }
  // Rank-known shape of input i (dims may hold -1); throws ShapeUnknown.
  const TensorInfo& input(size_t i) const;
  const std::vector<int64_t>& dims(size_t i) const { return input(i).dims; }
  int64_t rank(size_t i) const { return int64_t(input(i).dims.size()); }
  int32_t elem_type(size_t i) const { return input(i).elem_type; }
  // The value of input i if known at load time, else nullptr.
  const TensorValue* value(size_t i) const;
  // The value of input i as integers; throws ShapeUnknown naming `what`.
  std::vector<int64_t> ints(size_t i, const char* what) const;
  // The one integer input i holds (TopK's k, OneHot's depth); fails unless it holds exactly one.
  int64_t single_int(size_t i, const char* what) const;
  // Integers from input i (opset forms that take them as inputs) or from the
  // attribute (older forms); nullopt when neither is given.
  std::optional<std::vector<int64_t>> ints_from(size_t input, const char* attribute) const;

  void set_output(size_t i, std::vector<int64_t> dims, int32_t elem_type);
  void set_value(size_t i, TensorValue v);
  // Output 0 has input i's shape and type (unary ops, normalisations).
  void same_as_input(size_t i = 0, size_t out = 0);

  // An inconsistent model: throws InputError naming the file and the node.
  [[noreturn]] void fail(const std::string& what) const;

  // Filled by set_output/set_value; read back by the driver.
  std::vector<std::optional<TensorInfo>> outputs;
  std::vector<std::optional<TensorValue>> values;
};

// Axis in [-rank, rank) made non-negative; fail()s when out of range.
int64_t normalize_axis(const ShapeContext& ctx, int64_t axis, int64_t rank);
// Numpy-style broadcast of several shapes; fail()s when they do not broadcast.
std::vector<int64_t> broadcast_shapes(const ShapeContext& ctx, const std::vector<std::vector<int64_t>>& shapes);


}  // namespace tilewave
