#include "shape_folding.h"

#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

namespace tilewave {

namespace {

// A small integer tensor known at load time: scalar (rank 0) or 1-D.
struct IntValue {
  bool scalar = false;
  std::vector<int64_t> v;
};

using Values = std::unordered_map<std::string, IntValue>;

std::optional<IntValue> from_tensor(const onnx::TensorProto& t) {
  const auto type = t.data_type();
  if (type != onnx::TensorProto::INT64 && type != onnx::TensorProto::INT32) return std::nullopt;
  if (t.dims_size() > 1 || t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  IntValue out;
  out.scalar = t.dims_size() == 0;
  if (type == onnx::TensorProto::INT64) {
    if (t.has_raw_data()) {
      const std::string& raw = t.raw_data();
      out.v.resize(raw.size() / 8);
      std::memcpy(out.v.data(), raw.data(), out.v.size() * 8);
    } else {
      out.v.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else {
    if (t.has_raw_data()) {
      const std::string& raw = t.raw_data();
      std::vector<int32_t> tmp(raw.size() / 4);
      std::memcpy(tmp.data(), raw.data(), tmp.size() * 4);
      out.v.assign(tmp.begin(), tmp.end());
    } else {
      out.v.assign(t.int32_data().begin(), t.int32_data().end());
    }
  }
  return out;
}

int64_t attr_i(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

std::optional<std::vector<int64_t>> known_dims(const onnx::ModelProto& m, const std::string& name) {
  auto from = [&](const onnx::ValueInfoProto& v) -> std::optional<std::vector<int64_t>> {
    if (v.name() != name || !v.type().tensor_type().has_shape()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      dims.push_back(d.dim_value());
    }
    return dims;
  };
  for (const auto& v : m.graph().input())
    if (auto d = from(v)) return d;
  for (const auto& v : m.graph().value_info())
    if (auto d = from(v)) return d;
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return std::vector<int64_t>(t.dims().begin(), t.dims().end());
  return std::nullopt;
}

int64_t binary(const std::string& op, int64_t a, int64_t b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  return b == 0 ? 0 : a / b;  // Div on integers truncates, as ONNX does
}

// Evaluates one node over known values; nullopt when any input is unknown.
std::optional<IntValue> evaluate(const onnx::NodeProto& n, const Values& vals, const onnx::ModelProto& m) {
  auto in = [&](int i) -> const IntValue* {
    if (i >= n.input_size()) return nullptr;
    auto it = vals.find(n.input(i));
    return it == vals.end() ? nullptr : &it->second;
  };
  const std::string& op = n.op_type();
  if (op == "Constant") {
    for (const auto& a : n.attribute())
      if (a.name() == "value") return from_tensor(a.t());
    return std::nullopt;
  }
  if (op == "Shape") {
    auto dims = known_dims(m, n.input(0));
    if (!dims) return std::nullopt;
    const int64_t rank = int64_t(dims->size());
    int64_t start = attr_i(n, "start", 0), end = attr_i(n, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    return IntValue{false, {dims->begin() + start, dims->begin() + end}};
  }
  if (op == "Identity" || op == "Cast") {
    if (op == "Cast") {
      const auto to = attr_i(n, "to", 0);
      if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32) return std::nullopt;
    }
    if (auto* a = in(0)) return *a;
    return std::nullopt;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    auto* a = in(0);
    if (!a) return std::nullopt;
    if (op == "Unsqueeze" && a->scalar) return IntValue{false, a->v};
    if (op == "Squeeze" && !a->scalar && a->v.size() == 1) return IntValue{true, a->v};
    return std::nullopt;
  }
  if (op == "Gather") {
    auto *data = in(0), *idx = in(1);
    if (!data || !idx || data->scalar || attr_i(n, "axis", 0) != 0) return std::nullopt;
    IntValue out{idx->scalar, {}};
    for (int64_t i : idx->v) {
      if (i < 0) i += int64_t(data->v.size());
      if (i < 0 || i >= int64_t(data->v.size())) return std::nullopt;
      out.v.push_back(data->v[i]);
    }
    return out;
  }
  if (op == "Concat") {
    IntValue out;
    for (int i = 0; i < n.input_size(); ++i) {
      auto* a = in(i);
      if (!a || a->scalar) return std::nullopt;
      out.v.insert(out.v.end(), a->v.begin(), a->v.end());
    }
    return out;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    auto *a = in(0), *b = in(1);
    if (!a || !b) return std::nullopt;
    const size_t len = std::max(a->v.size(), b->v.size());
    if ((a->v.size() != len && a->v.size() != 1) || (b->v.size() != len && b->v.size() != 1)) return std::nullopt;
    IntValue out{a->scalar && b->scalar, {}};
    for (size_t i = 0; i < len; ++i)
      out.v.push_back(binary(op, a->v[a->v.size() == 1 ? 0 : i], b->v[b->v.size() == 1 ? 0 : i]));
    return out;
  }
  if (op == "Slice") {
    auto *data = in(0), *starts = in(1), *ends = in(2);
    if (!data || !starts || !ends || data->scalar || starts->v.size() != 1) return std::nullopt;
    if (in(3) && in(3)->v.at(0) != 0) return std::nullopt;
    const int64_t step = in(4) ? in(4)->v.at(0) : 1;
    const int64_t len = int64_t(data->v.size());
    if (step != 1) return std::nullopt;
    int64_t s = starts->v[0], e = ends->v[0];
    if (s < 0) s += len;
    if (e < 0) e += len;
    s = std::clamp<int64_t>(s, 0, len);
    e = std::clamp<int64_t>(e, s, len);
    return IntValue{false, {data->v.begin() + s, data->v.begin() + e}};
  }
  return std::nullopt;
}

void make_constant(onnx::NodeProto& n, const IntValue& value) {
  const std::string out = n.output(0), name = n.name();
  n.Clear();
  n.set_op_type("Constant");
  n.set_name(name);
  n.add_output(out);
  auto* attr = n.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  auto* t = attr->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  if (!value.scalar) t->add_dims(int64_t(value.v.size()));
  for (int64_t x : value.v) t->add_int64_data(x);
}

}  // namespace

int fold_shape_values(onnx::ModelProto& model) {
  Values vals;
  for (const auto& t : model.graph().initializer())
    if (auto v = from_tensor(t)) vals[t.name()] = *v;
  int rewritten = 0;
  for (auto& n : *model.mutable_graph()->mutable_node()) {
    if (n.output_size() != 1) continue;
    auto v = evaluate(n, vals, model);
    if (!v) continue;
    vals[n.output(0)] = *v;
    if (n.op_type() != "Constant") {
      make_constant(n, *v);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace tilewave
