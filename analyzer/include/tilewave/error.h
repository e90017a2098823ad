// Errors a user can cause (bad file, bad flag value). The CLI turns InputError
// into one line "tilewave: error: <where>: <what>" and exit code 1; a
// UsageError into "tilewave: usage error: …" and exit code 2 (docs/cli.md).
#pragma once
#include <stdexcept>
#include <string>

namespace tilewave {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

// Bad usage found after parsing (a list that names nothing, a batch of 0):
// "tilewave: usage error: …" and exit code 2, as a parse error.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

// An error message without the "FILE: " that starts it, for a row or line
// that names the file already.
inline std::string without_file(const std::string& message, const std::string& file) {
  return message.rfind(file + ": ", 0) == 0 ? message.substr(file.size() + 2) : message;
}

}  // namespace tilewave
