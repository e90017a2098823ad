// Errors a user can cause (bad file, bad flag value). The CLI turns InputError
// into one line "tilewave: error: <where>: <what>" and exit code 1.
#pragma once
#include <stdexcept>
#include <string>

namespace tilewave {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what) {}
};

}  // namespace tilewave
