#include "layer.hpp"

#include <fstream>

#include "check.hpp"
#include "op_table.hpp"

namespace tw {

namespace {

void require_int(const Json& obj, const IntField& f) {
  const Json& v = obj.at(f.name);
  if (!v.is_number_integer())
    throw InputError("field '" + f.name + "' must be an integer");
  if (v.get<int64_t>() < f.min_value)
    throw InputError("field '" + f.name + "' must be >= " + std::to_string(f.min_value));
}

void require_pair(const Json& obj, const IntField& f) {
  const Json& v = obj.at(f.name);
  if (v.is_number_integer()) {  // a scalar means the same value for h and w
    require_int(obj, f);
    return;
  }
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer())
    throw InputError("field '" + f.name + "' must be a pair of integers [h,w]");
  if (v[0].get<int64_t>() < f.min_value || v[1].get<int64_t>() < f.min_value)
    throw InputError("field '" + f.name + "' values must be >= " + std::to_string(f.min_value));
}

void require_enum(const Json& obj, const EnumField& f) {
  const Json& v = obj.at(f.name);
  if (v.is_string())
    for (const auto& a : f.allowed)
      if (v.get<std::string>() == a) return;
  std::string list;
  for (const auto& a : f.allowed) list += (list.empty() ? "" : "/") + a;
  throw InputError("field '" + f.name + "' must be one of " + list);
}

bool is_skippable(const std::string& text) {
  size_t i = text.find_first_not_of(" \t\r");
  return i == std::string::npos || text[i] == '#';
}

}  // namespace

Layer parse_layer(const Json& obj, int line) {
  if (!obj.is_object()) throw InputError("line is not a JSON object");
  if (!obj.contains("op") || !obj["op"].is_string()) throw InputError("missing string field 'op'");
  Layer layer;
  layer.json = obj;
  layer.line = line;
  layer.op = obj["op"].get<std::string>();
  const OpSpec* spec = find_op(layer.op);
  if (!spec) throw InputError("unknown op '" + layer.op + "' (known: " + known_op_names() + ")");

  if (obj.contains("dtype")) {
    auto t = obj["dtype"].is_string() ? parse_dtype(obj["dtype"].get<std::string>()) : std::nullopt;
    if (!t) throw InputError("field 'dtype' must be one of fp32/tf32/fp16/bf16/int8");
    layer.dtype = *t;
  }
  for (const auto& f : spec->required_ints) {
    if (!obj.contains(f.name)) throw InputError("missing field '" + f.name + "' for op " + layer.op);
    require_int(obj, f);
  }
  for (const auto& f : spec->optional_ints)
    if (obj.contains(f.name)) require_int(obj, f);
  for (const auto& f : spec->optional_pairs)
    if (obj.contains(f.name)) require_pair(obj, f);
  for (const auto& f : spec->optional_enums)
    if (obj.contains(f.name)) require_enum(obj, f);
  return layer;
}

std::vector<Layer> read_layer_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::vector<Layer> layers;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (is_skippable(text)) continue;
    try {
      Json obj = Json::parse(text);
      if (obj.is_object() && obj.value("header", false) == true) continue;  // a previous output
      layers.push_back(parse_layer(obj, line));
    } catch (const Json::parse_error& e) {
      throw InputError(path + ":" + std::to_string(line) + ": bad JSON: " + e.what());
    } catch (const InputError& e) {
      throw InputError(path + ":" + std::to_string(line) + ": " + e.what());
    }
  }
  return layers;
}

int64_t Layer::get(const char* key) const { return json.at(key).get<int64_t>(); }

int64_t Layer::get_or(const char* key, int64_t fallback) const {
  return json.contains(key) ? json.at(key).get<int64_t>() : fallback;
}

std::array<int64_t, 2> Layer::pair_or(const char* key, std::array<int64_t, 2> fallback) const {
  if (!json.contains(key)) return fallback;
  const Json& v = json.at(key);
  if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
  return {v[0].get<int64_t>(), v[1].get<int64_t>()};
}

std::string Layer::str_or(const char* key, const std::string& fallback) const {
  return json.contains(key) ? json.at(key).get<std::string>() : fallback;
}

}  // namespace tw
