// What a shape function sees of one node (tilewave/shape_context.h).
#include "tilewave/shape_context.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "tilewave/error.h"
#include "tilewave/tensor_values.h"

namespace tilewave {

namespace {

// Where a chain of load-time values stops: the first node upstream of
// `tensor` whose inputs are all known but whose own value is not. The walk
// follows one path (the last unknown input of each producer first); every
// tensor on it stops at the same place, which `breaks` (when given) keeps,
// so that a chain read at each of its links is walked once in all.
std::string value_break(const Model& m, const std::string& tensor,
                        std::unordered_map<std::string, std::shared_ptr<const std::string>>* breaks) {
  std::vector<std::string> todo = {tensor};
  std::vector<std::string> walked;
  std::set<std::string> seen;
  auto found = [&](std::string why) {
    if (breaks) {
      const auto shared = std::make_shared<const std::string>(why);
      for (auto& t : walked) breaks->emplace(std::move(t), shared);
    }
    return why;
  };
  while (!todo.empty()) {
    const std::string t = todo.back();
    todo.pop_back();
    if (!seen.insert(t).second || m.values.count(t)) continue;
    if (breaks) {
      if (auto it = breaks->find(t); it != breaks->end()) return found(*it->second);
      walked.push_back(t);
    }
    const Node* p = m.producer_of(t);
    if (!p) {
      if (m.initializers.count(t)) return found(fmt::format(" (initializer '{}' is too large or stored outside the file)", t));
      return found(fmt::format(" ('{}' is a graph input)", t));
    }
    bool inputs_known = true;
    for (const auto& in : p->inputs)
      if (!in.empty() && !m.values.count(in)) {
        inputs_known = false;
        todo.push_back(in);
      }
    if (inputs_known)
      return found(fmt::format(" (its value chain stops at node '{}' ({}), whose value tilewave does not evaluate)",
                               p->name, p->op_type));
  }
  return found("");
}


// Elements of a value's dims; a negative (unknown) dim gives -1.
int64_t value_elems(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    n = saturating_mul(n, d);
  }
  return n;
}
}  // namespace

ShapeContext::ShapeContext(const Model& m, const Node& n, ShapeInferenceState* state)
    : model(m), node(n), opset(m.opset(n.domain)), outputs(n.outputs.size()), values(n.outputs.size()), state_(state) {}

const TensorInfo& ShapeContext::input(size_t i) const {
  if (!has_input(i)) throw ShapeUnknown(fmt::format("input {} is missing", i));
  const TensorInfo* t = model.tensor(node.inputs[i]);
  if (!t || !t->has_shape) {
    auto why = model.unknown_reason.find(node.inputs[i]);
    if (why != model.unknown_reason.end()) throw ShapeUnknown(why->second, true);
    throw ShapeUnknown(fmt::format("shape of input '{}' is unknown", node.inputs[i]));
  }
  return *t;
}

const TensorValue* ShapeContext::value(size_t i) const {
  if (!has_input(i)) return nullptr;
  auto it = model.values.find(node.inputs[i]);
  if (it == model.values.end()) return nullptr;
  // Shape functions index a value by its tensor's dims: one that disagrees
  // with them (a malformed file) counts as unknown rather than being read.
  const TensorInfo* t = model.tensor(node.inputs[i]);
  if (!t || !t->has_shape || t->dims != it->second.dims ||
      int64_t(it->second.size()) != value_elems(it->second.dims))
    return nullptr;
  if (!charge_value(it->second.size())) return nullptr;
  return &it->second;
}

int64_t ShapeContext::value_room() const {
  if (!state_) return kMaxValueElems;
  return std::min(kMaxValueElems, std::max(kSmallValueElems, state_->value_elems_left));
}

bool ShapeContext::charge_value(size_t elems) const {
  if (int64_t(elems) > value_room()) {
    if (state_ && int64_t(elems) <= kMaxValueElems) state_->value_budget_spent = true;
    return false;
  }
  if (state_ && int64_t(elems) > kSmallValueElems) state_->value_elems_left -= int64_t(elems);
  return true;
}

int64_t ShapeContext::single_int(size_t i, const char* what) const {
  const std::vector<int64_t> v = ints(i, what);
  if (v.size() != 1) fail(fmt::format("its {} (input {}) holds {} values, not one", what, i, v.size()));
  return v[0];
}

std::vector<int64_t> ShapeContext::ints(size_t i, const char* what) const {
  const TensorValue* v = value(i);
  if (!v) {
    if (has_input(i)) {
      auto why = model.unknown_reason.find(node.inputs[i]);
      if (why != model.unknown_reason.end()) throw ShapeUnknown(why->second, true);
    }
    throw ShapeUnknown(fmt::format(
        "its {} (input {}) is not known before run time{}{}", what, i,
        has_input(i) ? value_break(model, node.inputs[i], state_ ? &state_->value_breaks : nullptr) : "",
        state_ && state_->value_budget_spent
            ? "; the model's load-time values also passed the 2^24 elements tilewave evaluates"
            : ""));
  }
  std::vector<int64_t> out(v->size());
  for (size_t k = 0; k < out.size(); ++k) out[k] = v->int_at(k);
  return out;
}

std::optional<std::vector<int64_t>> ShapeContext::ints_from(size_t input, const char* attribute) const {
  if (has_input(input)) return ints(input, attribute);
  if (find_attr(node, attribute)) return attr_ints(node, attribute);
  return std::nullopt;
}

void ShapeContext::set_output(size_t i, std::vector<int64_t> dims, int32_t elem_type) {
  if (i >= outputs.size()) return;
  int64_t elems = 1;
  for (int64_t d : dims) {
    if (d < -1) fail(fmt::format("output {} would have a negative dimension ({})", i, d));
    if (d >= 0 && __builtin_mul_overflow(elems, d, &elems)) elems = INT64_MAX;
  }
  if (elems > kMaxTensorElems)
    fail(fmt::format("output {} would have more than 2^50 elements, the most tilewave handles in one tensor; use a "
                     "smaller --batch or input", i));
  TensorInfo t;
  t.has_shape = true;
  t.dims = std::move(dims);
  t.elem_type = elem_type;
  outputs[i] = std::move(t);
}

void ShapeContext::set_value(size_t i, TensorValue v) {
  if (i < values.size() && charge_value(v.size())) values[i] = std::move(v);
}

void ShapeContext::same_as_input(size_t i, size_t out) {
  const TensorInfo& t = input(i);
  set_output(out, t.dims, t.elem_type);
}

void ShapeContext::fail(const std::string& what) const {
  throw InputError(model.path, fmt::format("node '{}' ({}): {}", node.name, node.op_type, what));
}

int64_t normalize_axis(const ShapeContext& ctx, int64_t axis, int64_t rank) {
  // A rank-0 tensor has no axis at all (issue 20: axis 0 was let through and read out of bounds).
  if (axis < -rank || axis >= rank)
    ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_shapes(const ShapeContext& ctx, const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[rank - s.size() + k];
      const int64_t d = s[k];
      if (d == 1) continue;
      if (o == 1) o = d;
      else if (d == -1 || o == -1) o = std::max(o, d) == -1 ? -1 : std::max(o, d);
      else if (o != d) ctx.fail(fmt::format("shapes do not broadcast ({} against {})", o, d));
    }
  return out;
}

}  // namespace tilewave
