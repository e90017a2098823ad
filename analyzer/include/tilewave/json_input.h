// JSON text from users (GPU files, layer sets, measurement files): parsed
// with a nesting limit, so that no input can exhaust the stack of a
// recursive reader, and with errors as InputError naming `where`
// (docs/errors.md).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace tilewave {

// Deeper than any tilewave file needs (GPU files nest 4 levels).
constexpr int kMaxJsonNesting = 32;

nlohmann::json parse_json_text(const std::string& text, const std::string& where);

}  // namespace tilewave
