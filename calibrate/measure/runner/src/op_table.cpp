#include "op_table.hpp"

#include "ops.hpp"

namespace tw {

namespace {

const std::vector<IntField> kConvPairs = {{"stride", 1}, {"pad", 0}, {"dilation", 1}};

// Fields follow docs/layerset.md. Required integers must be >= the given minimum.
const std::vector<OpSpec>& op_table() {
  static const std::vector<OpSpec> table = {
      {"conv", {{"N", 1}, {"C", 1}, {"H", 1}, {"W", 1}, {"K", 1}, {"R", 1}, {"S", 1}}, {{"groups", 1}}, kConvPairs,
       {}, make_conv},
      {"conv_transpose", {{"N", 1}, {"C", 1}, {"H", 1}, {"W", 1}, {"K", 1}, {"R", 1}, {"S", 1}}, {{"groups", 1}},
       kConvPairs, {}, make_conv_transpose},
      {"gemm", {{"M", 1}, {"N", 1}, {"K", 1}}, {{"batch", 1}}, {}, {}, make_gemm},
      {"eltwise", {{"elems", 1}, {"inputs", 0}}, {}, {}, {}, make_eltwise},
      {"pool", {{"N", 1}, {"C", 1}, {"H", 1}, {"W", 1}, {"R", 1}, {"S", 1}}, {}, {{"stride", 1}, {"pad", 0}},
       {{"mode", {"max", "avg"}}}, make_pool},
      {"reduce", {{"outer", 1}, {"inner", 1}}, {}, {}, {}, make_reduce},
      {"softmax", {{"outer", 1}, {"inner", 1}}, {}, {}, {}, make_softmax},
      {"copy", {{"elems_in", 1}, {"elems_out", 1}}, {}, {}, {}, make_copy},
  };
  return table;
}

}  // namespace

const OpSpec* find_op(const std::string& name) {
  for (const auto& spec : op_table())
    if (spec.name == name) return &spec;
  return nullptr;
}

std::string known_op_names() {
  std::string names;
  for (const auto& spec : op_table()) names += (names.empty() ? "" : ", ") + spec.name;
  return names;
}

}  // namespace tw
