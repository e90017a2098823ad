#include "tilewave/json_input.h"

#include <filesystem>
#include <fstream>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <zlib.h>

#include "tilewave/error.h"
#include "tilewave/output_file.h"

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

// A gzip stream inflated whole, stopping past `limit` bytes so that a small
// file cannot expand without bound.
std::string gunzip(const std::string& packed, const std::string& path, uintmax_t max_bytes) {
  const size_t kLimit = size_t(max_bytes);
  if (packed.size() > UINT32_MAX) throw InputError(path, "gzip file larger than 4 GiB");
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw InputError(path, "cannot start gzip decompression");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = uInt(packed.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    if (out.size() > kLimit) rc = Z_MEM_ERROR;
    else if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) rc = Z_DATA_ERROR;  // input ended mid-stream
  }
  inflateEnd(&z);
  if (out.size() > kLimit)
    throw InputError(path, fmt::format("gzip content larger than {} MB, the most tilewave reads for this file", kLimit >> 20));
  if (rc != Z_STREAM_END) throw InputError(path, "gzip data is corrupt or cut short");
  return out;
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

nlohmann::json parse_json_bytes(const std::string& bytes, const std::string& where, uintmax_t max_bytes) {
  if (bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b)
    return parse_json_text(gunzip(bytes, where, max_bytes), where);
  if (bytes.size() > max_bytes)
    throw InputError(where, fmt::format("is {} MB, more than the {} MB tilewave reads for this file", bytes.size() >> 20,
                                        max_bytes >> 20));
  return parse_json_text(bytes, where);
}

// Read whole, then parsed: parsing from the stream took most of `tilewave gpus`.
void require_regular_file(const std::string& path, const std::string& what, uintmax_t max_bytes) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  // A loop of links or a name too long is the system's reason, not "no such file".
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw InputError(path, fmt::format("cannot be read ({}); {} was expected", ec.message(), what));
  if (ec || !std::filesystem::exists(st)) throw InputError(path, "no such file (" + what + " was expected)");
  if (std::filesystem::is_directory(st)) throw InputError(path, "is a directory, not " + what);
  if (!std::filesystem::is_regular_file(st))
    throw InputError(path, "is not a regular file (a device, FIFO or socket), not " + what);
  if (max_bytes > 0) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes)
      throw InputError(path, fmt::format("is {:.1f} MB, more than {} may be ({:.1f} MB)", double(size) / (1 << 20), what,
                                             double(max_bytes) / (1 << 20)));
  }
  note_input(path);  // every reader passes here: no output of this command may replace it
}

std::string read_regular_file(const std::string& path, const std::string& what, uintmax_t max_bytes) {
  require_regular_file(path, what, max_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
  std::string bytes;
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(path, fmt::format("cannot read {}: {}", what, std::strerror(err)));
    }
    if (n == 0) break;
    bytes.append(chunk, size_t(n));
    if (bytes.size() > max_bytes) {
      ::close(fd);
      throw InputError(path, fmt::format("is more than {:.1f} MB, more than {} may be", double(max_bytes) / (1 << 20), what));
    }
  }
  ::close(fd);
  return bytes;
}

nlohmann::json read_json_file(const std::string& path, const std::string& what, uintmax_t max_bytes) {
  return parse_json_bytes(read_regular_file(path, "a " + what, max_bytes), path, max_bytes);
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tilewave
