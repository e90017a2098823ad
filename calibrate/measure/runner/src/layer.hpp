// One line of a layer set (docs/layerset.md) and the reader for a whole file.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dtype.hpp"

namespace tw {

// ordered_json keeps the caller's key order, so output lines read like input lines.
using Json = nlohmann::ordered_json;

struct Layer {
  Json json;       // the input object, passed through to the output unchanged
  std::string op;  // validated against the op table
  DType dtype = DType::fp16;
  int line = 0;    // 1-based line in the input file (0 for built-in layers)

  // Accessors for fields already validated by parse_layer().
  int64_t get(const char* key) const;
  int64_t get_or(const char* key, int64_t fallback) const;
  std::array<int64_t, 2> pair_or(const char* key, std::array<int64_t, 2> fallback) const;
  std::string str_or(const char* key, const std::string& fallback) const;
};

// Validates one JSON object against the op table; throws InputError(message).
Layer parse_layer(const Json& obj, int line);

// Reads a JSONL layer set. Skips blank lines, `#` comments and header objects.
// Throws InputError("path:line: message") on the first bad line.
std::vector<Layer> read_layer_file(const std::string& path);

}  // namespace tw
