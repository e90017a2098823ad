// The single place that knows which ops exist, which fields they need and which
// runner measures them. Adding an op = one row in op_table.cpp + one runner.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tw {

struct Context;
struct Layer;
class OpRunner;

using RunnerFactory = std::unique_ptr<OpRunner> (*)(Context&, const Layer&);

struct IntField {
  std::string name;
  int64_t min_value;
};

struct EnumField {
  std::string name;
  std::vector<std::string> allowed;
};

struct OpSpec {
  std::string name;
  std::vector<IntField> required_ints;
  std::vector<IntField> optional_ints;   // e.g. groups, batch
  std::vector<IntField> optional_pairs;  // [h,w] pairs: stride, pad, dilation
  std::vector<EnumField> optional_enums; // e.g. pool mode
  RunnerFactory make;
};

const OpSpec* find_op(const std::string& name);
std::string known_op_names();  // for error messages

}  // namespace tw
