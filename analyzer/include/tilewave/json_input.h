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

// The whole file, read after require_regular_file(path, what, max_bytes):
// at most max_bytes are read whatever its size claims (a /proc file says 0),
// and a read error (EIO from /proc/self/mem) is an InputError naming it.
std::string read_regular_file(const std::string& path, const std::string& what, uintmax_t max_bytes);

// Deeper than any tilewave file needs (GPU files nest 4 levels).
constexpr int kMaxJsonNesting = 32;

// Budgets on JSON input (docs/errors.md "Budgets"), on the file and, for a
// gzip file, on its inflated text: a parsed document takes up to 10 times
// its text, so that no input under 1 MB can take more than a few GB.
// A GPU file is a few kB; a profiler trace of one forward a few tens of MB.
constexpr uintmax_t kMaxJsonBytes = uintmax_t(64) << 20;
constexpr uintmax_t kMaxGpuFileBytes = uintmax_t(4) << 20;
constexpr uintmax_t kMaxTraceBytes = uintmax_t(256) << 20;

// JSON text for an output: names and paths from input files are bytes, and
// any that are not UTF-8 are written as U+FFFD, never an error (docs/errors.md
// "Bytes and locales"). indent < 0: one line.
std::string json_text(const nlohmann::json& j, int indent = -1);

nlohmann::json parse_json_text(const std::string& text, const std::string& where);
// The same for a file's bytes, which may be gzip-compressed (as
// torch.profiler's trace handler can write them): inflated first, to at most max_bytes.
nlohmann::json parse_json_bytes(const std::string& bytes, const std::string& where,
                                uintmax_t max_bytes = kMaxJsonBytes);
// A whole file read, then parsed; InputError naming the file, with `what` it
// should have been ("GPU file", "trace") when it is a folder or cannot be opened.
// Its bytes go through parse_json_bytes, under the same budget.
nlohmann::json read_json_file(const std::string& path, const std::string& what, uintmax_t max_bytes = kMaxJsonBytes);

}  // namespace tilewave
