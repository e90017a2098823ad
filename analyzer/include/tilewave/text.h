// Names from input files shown as text: control characters (a newline in a
// node name, say) escaped as \xNN, so that every line printed stays one line
// (docs/errors.md). JSON output escapes them itself; CSV quotes them.
#pragma once
#include <string>

namespace tilewave {

std::string printable(const std::string& s);
// At most `width` characters (UTF-8 code points), shortened in the middle
// ("/features/fea…/conv/Conv") so that names differing at the end stay apart.
std::string middle_ellipsis(const std::string& s, size_t width);
// An exporter's node name without the path parts the next part repeats:
// "/features/features.1/features.1.2/block/block.2/Conv" becomes
// "/features.1.2/block.2/Conv" (PyTorch names each module by its full path).
std::string compact_name(const std::string& name);
// Text for HTML and SVG: & < > " escaped, control characters as in printable().
std::string html_escape(const std::string& s);

}  // namespace tilewave
