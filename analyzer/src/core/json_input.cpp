#include "tilewave/json_input.h"

#include <filesystem>
#include <fstream>

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

// Read whole, then parsed: parsing from the stream took most of `tilewave gpus`.
nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, "is a directory, not a " + what);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "cannot open " + what);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_json_text(text, path);
}

}  // namespace tilewave
