// Output files are written whole or not at all: a temporary beside the
// target, renamed into place only after every byte is written.
#pragma once
#include <functional>
#include <ostream>
#include <string>

namespace tilewave {

// Writes to `path` ("-" or "" means stdout) through `body`.
void write_output(const std::string& path, const std::function<void(std::ostream&)>& body);

}  // namespace tilewave
