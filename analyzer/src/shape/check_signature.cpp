// Stage 2, before each shape function: the shared per-op checker
// (docs/errors.md "Checked before use"). A node's input count, input ranks and
// attribute types, lengths and ranges are held to its registry entry and to
// the one attribute vocabulary, so that no shape rule or lowering sees a
// wrong-typed attribute, a missing dim or an absurd count.
#include <fmt/format.h>

#include <map>
#include <set>

#include "tilewave/op_registry.h"
#include "tilewave/text.h"
#include "tilewave_onnx.pb.h"

namespace tilewave {

namespace {

using A = onnx::AttributeProto;

const char* kind_name(int kind) {
  switch (kind) {
    case A::INT: return "INT";
    case A::INTS: return "INTS";
    case A::FLOAT: return "FLOAT";
    case A::FLOATS: return "FLOATS";
    case A::STRING: return "STRING";
    case A::STRINGS: return "STRINGS";
    case A::TENSOR: return "TENSOR";
    case A::GRAPH: return "GRAPH";
    default: return "UNDEFINED";
  }
}

}  // namespace

int attribute_kind(const std::string& name) {
  // Every attribute a shape function or lowering reads, with ONNX's type for
  // it (the same in every op that has it: tests/test_hostile_ops.cpp holds
  // this table to ONNX's schemas).
  static const std::map<std::string, int> kinds = {
      {"allowzero", A::INT},        {"auto_pad", A::STRING},     {"axes", A::INTS},
      {"axis", A::INT},             {"batch_dims", A::INT},      {"bias", A::FLOAT},
      {"blocksize", A::INT},        {"lambd", A::FLOAT},
      {"ceil_mode", A::INT},        {"channels_last", A::INT},   {"dilations", A::INTS},
      {"direction", A::STRING},     {"dtype", A::INT},           {"end", A::INT},
      {"ends", A::INTS},            {"equation", A::STRING},     {"fmod", A::INT},
      {"group", A::INT},            {"hidden_size", A::INT},     {"k", A::INT},
      {"keep_aspect_ratio_policy", A::STRING}, {"keepdims", A::INT}, {"kernel_shape", A::INTS},
      {"kv_num_heads", A::INT},     {"layout", A::INT},          {"max", A::FLOAT},
      {"min", A::FLOAT},            {"noop_with_empty_axes", A::INT}, {"num_groups", A::INT},
      {"num_heads", A::INT},        {"num_outputs", A::INT},     {"output_dtype", A::INT},
      {"output_padding", A::INTS},  {"output_shape", A::INTS},   {"pads", A::INTS},
      {"perm", A::INTS},            {"q_num_heads", A::INT},     {"qkv_hidden_sizes", A::INTS},
      {"scales", A::FLOATS},        {"split", A::INTS},          {"start", A::INT},
      {"starts", A::INTS},          {"strides", A::INTS},        {"to", A::INT},
      {"transA", A::INT},           {"transB", A::INT},          {"value", A::TENSOR},
      {"mode", A::STRING},          {"training_mode", A::INT},
  };
  auto it = kinds.find(name);
  return it == kinds.end() ? 0 : it->second;
}

void check_signature(const ShapeContext& ctx, const OpSignature& sig) {
  const Node& n = ctx.node;
  const int inputs = int(n.inputs.size());
  if (inputs > kMaxNodeInputs) ctx.fail(fmt::format("{} inputs given; tilewave reads at most {} per node", inputs, kMaxNodeInputs));
  if (int(n.outputs.size()) > kMaxNodeOutputs)
    ctx.fail(fmt::format("{} outputs; tilewave reads at most {} per node", n.outputs.size(), kMaxNodeOutputs));
  if (inputs < sig.min_inputs || (sig.max_inputs >= 0 && inputs > sig.max_inputs)) {
    if (sig.max_inputs == sig.min_inputs) ctx.fail(fmt::format("{} inputs given; the op takes {}", inputs, sig.min_inputs));
    if (sig.max_inputs < 0) ctx.fail(fmt::format("{} inputs given; the op takes {} or more", inputs, sig.min_inputs));
    ctx.fail(fmt::format("{} inputs given; the op takes {} to {}", inputs, sig.min_inputs, sig.max_inputs));
  }
  for (size_t i = 0; i < size_t(sig.min_inputs) && i < n.inputs.size(); ++i)
    if (n.inputs[i].empty()) ctx.fail(fmt::format("its required input {} is left out", i));
  for (const auto& r : sig.ranks) {
    if (!ctx.has_input(r.input)) continue;
    const TensorInfo* t = ctx.model.tensor(n.inputs[r.input]);
    if (!t || !t->has_shape) continue;  // unknown: the shape function says why
    const int64_t rank = int64_t(t->dims.size());
    if (rank < r.min || rank > r.max)
      ctx.fail(r.min == r.max ? fmt::format("input {} has rank {}; {} expected", r.input, rank, r.min)
                              : fmt::format("input {} has rank {}; {} to {} expected", r.input, rank, r.min, r.max));
  }
  std::set<std::string> seen;
  for (const auto& a : n.proto->attribute()) {
    const std::string name = printable(a.name());
    if (!seen.insert(a.name()).second) ctx.fail(fmt::format("attribute '{}' is given twice", name));
    const int kind = attribute_kind(a.name());
    if (kind && a.type() != kind)
      ctx.fail(fmt::format("attribute '{}' is {}; ONNX defines it as {}", name, kind_name(a.type()), kind_name(kind)));
    if (a.ints_size() > kMaxAttributeValues || a.floats_size() > kMaxAttributeValues ||
        a.strings_size() > kMaxAttributeValues)
      ctx.fail(fmt::format("attribute '{}' has more than {} values", name, kMaxAttributeValues));
  }
  for (const auto& range : sig.attr_ranges) {
    const auto* a = find_attr(n, range.name);
    if (!a) continue;
    auto check = [&](int64_t v) {
      if (v < range.min || v > range.max)
        ctx.fail(fmt::format("attribute '{}' is {}; {} to {} expected", range.name, v, range.min, range.max));
    };
    if (a->type() == A::INT) check(a->i());
    for (int64_t v : a->ints()) check(v);
  }
}

}  // namespace tilewave
