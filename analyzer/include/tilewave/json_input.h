// JSON text from users (GPU files, layer sets, measurement files): parsed
// with a nesting limit, so that no input can exhaust the stack of a
// recursive reader, and with errors as InputError naming `where`
// (docs/errors.md).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tilewave {

// The one check before reading a user's file (docs/errors.md): it must be a
// regular file of at most `max_bytes` (0: no limit). A folder, FIFO, device
// or socket is refused, so that /dev/zero or a pipe nobody writes cannot
// hang a command. `what` names it with its article: "a GPU file".
void require_regular_file(const std::string& path, const std::string& what, uintmax_t max_bytes = 0);

// Deeper than any tilewave file needs (GPU files nest 4 levels).
constexpr int kMaxJsonNesting = 32;

nlohmann::json parse_json_text(const std::string& text, const std::string& where);
// The same for a file's bytes, which may be gzip-compressed (as
// torch.profiler's trace handler can write them): inflated first, to at most 1 GiB.
nlohmann::json parse_json_bytes(const std::string& bytes, const std::string& where);
// A whole file read, then parsed; InputError naming the file, with `what` it
// should have been ("GPU file", "trace") when it is a folder or cannot be opened.
// Its bytes go through parse_json_bytes.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace tilewave
