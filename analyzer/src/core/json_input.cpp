#include "tilewave/json_input.h"

#include <fmt/format.h>

#include "tilewave/error.h"

namespace tilewave {

namespace {

// Bracket depth outside strings: one linear pass, before nlohmann sees it.
int max_nesting(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return deepest;
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  if (max_nesting(text) > kMaxJsonNesting)
    throw InputError(where, fmt::format("JSON nested deeper than {} levels", kMaxJsonNesting));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where, fmt::format("not valid JSON: {}", e.what()));
  }
}

}  // namespace tilewave
