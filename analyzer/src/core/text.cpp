#include "tilewave/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

#include <fmt/format.h>

#include "tilewave/error.h"

namespace tilewave {

bool parse_number(const std::string& s, double& out) {
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, out);
  return !s.empty() && r.ec == std::errc() && r.ptr == end;
}

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += char(c);
  }
  return out;
}

void require_display_name(const std::string& where, const char* field, const std::string& name) {
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f)
      throw InputError(where, fmt::format("field '{}' ('{}') holds a control character", field, printable(name)));
  if (name.size() > 200) throw InputError(where, fmt::format("field '{}' is longer than 200 characters", field));
}

std::string file_stem(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '_' || c == '.';
    out += safe ? c : '_';
  }
  while (!out.empty() && out[0] == '.') out[0] = '_';
  if (out.size() > 64) out.resize(64);
  return out.empty() ? "unnamed" : out;
}

std::string middle_ellipsis(const std::string& s, size_t width) {
  // Code point starts, so that a cut never splits a UTF-8 sequence.
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) starts.push_back(i);
  if (starts.size() <= width || width < 3) return s.substr(0, width < 3 && starts.size() > width ? starts[width] : s.size());
  const size_t tail = (width - 1) / 2, head = width - 1 - tail;
  return s.substr(0, starts[head]) + "\u2026" + s.substr(starts[starts.size() - tail]);
}

std::string compact_name(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t slash; (slash = name.find('/', start)) != std::string::npos; start = slash + 1)
    parts.push_back(name.substr(start, slash - start));
  parts.push_back(name.substr(start));
  std::string out;
  bool first = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool repeated = !parts[i].empty() && i + 1 < parts.size() &&
                          parts[i + 1].compare(0, parts[i].size() + 1, parts[i] + ".") == 0;
    if (repeated) continue;
    if (!first) out += '/';
    out += parts[i];
    first = false;
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : printable(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string lowered(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Levenshtein distance, case folded.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
  if (name.empty() || name.size() > 64) return "";
  const std::string folded = lowered(name);
  std::string best;
  size_t best_distance = 3;
  bool tie = false;
  for (const auto& k : known) {
    const size_t d = edit_distance(folded, lowered(k));
    if (d < best_distance) best = k, best_distance = d, tie = false;
    else if (d == best_distance) tie = true;
  }
  if (tie || best.empty() || (best_distance > 0 && 2 * best_distance >= name.size())) return "";
  return best;
}

}  // namespace tilewave
