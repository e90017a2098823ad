// Names from input files shown as text: control characters (a newline in a
// node name, say) escaped as \xNN, so that every line printed stays one line
// (docs/errors.md). JSON output escapes them itself; CSV quotes them.
#pragma once
#include <string>

namespace tilewave {

std::string printable(const std::string& s);

}  // namespace tilewave
