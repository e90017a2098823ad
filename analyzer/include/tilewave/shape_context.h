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
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
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

// Load-time values over a whole model (docs/robustness.md "Limits"): the shape
// functions read and make at most this many elements of values larger than
// kSmallValueElems in all; past it such values are left unknown. Values of
// at most kSmallValueElems (the shape vectors exporters compute) are always
// evaluated. Without it a chain of Gathers, each copying a 2^16-element
// value, took seconds and gigabytes (issue 32).
constexpr int64_t kMaxModelValueElems = int64_t(1) << 24;
constexpr int64_t kSmallValueElems = 64;

// What shape inference keeps from node to node for the shape functions, so
// that each pass stays linear in the graph and bounded (docs/robustness.md
// "Limits").
struct ShapeInferenceState {
  // Where each value unknown at load time stops being known, found once per
  // chain rather than walked again by every reader (issue 32: a chain of
  // Gathers, each read by a Reshape, was walked back from every Reshape,
  // quadratic). Tensor -> " (its value chain stops at ...)", one string
  // shared by a chain.
  std::unordered_map<std::string, std::shared_ptr<const std::string>> value_breaks;
  int64_t value_elems_left = kMaxModelValueElems;  // of the load-time value budget
  bool value_budget_spent = false;                  // some value was left unknown for it
};

// What a shape function sees of one node: its inputs' shapes and known
// values, its attributes (through `node`), and the opset it is read under.
class ShapeContext {
 public:
  // `state`: shared by the nodes of one inference (infer_shapes); null for a node alone.
  ShapeContext(const Model& model, const Node& node, ShapeInferenceState* state = nullptr);

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
  // The value of input i if known at load time, else nullptr (also for a
  // value larger than value_room(): reading it counts against the budget).
  const TensorValue* value(size_t i) const;
  // The most elements a value may have that this node reads or makes now:
  // kMaxValueElems, less once the model's value budget runs low. A shape
  // function checks it before it evaluates a value.
  int64_t value_room() const;
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

 private:
  // Counts `elems` against the value budget; false when a value of that size
  // is past value_room() and stays unknown.
  bool charge_value(size_t elems) const;
  ShapeInferenceState* state_;
};

// Axis in [-rank, rank) made non-negative; fail()s when out of range.
int64_t normalize_axis(const ShapeContext& ctx, int64_t axis, int64_t rank);
// Numpy-style broadcast of several shapes; fail()s when they do not broadcast.
std::vector<int64_t> broadcast_shapes(const ShapeContext& ctx, const std::vector<std::vector<int64_t>>& shapes);


}  // namespace tilewave
