// Names from input files shown as text: control characters (a newline in a
// node name, say) escaped as \xNN, so that every line printed stays one line
// (docs/errors.md). JSON output escapes them itself; CSV quotes them.
#pragma once
#include <string>
#include <vector>

namespace tilewave {

std::string printable(const std::string& s);
// At most `width` characters (UTF-8 code points), shortened in the middle
// ("/features/fea…/conv/Conv") so that names differing at the end stay apart.
std::string middle_ellipsis(const std::string& s, size_t width);
// An exporter's node name without the path parts the next part repeats:
// "/features/features.1/features.1.2/block/block.2/Conv" becomes
// "/features.1.2/block.2/Conv" (PyTorch names each module by its full path).
std::string compact_name(const std::string& name);
// A display name from a file (a GPU's or a search space's), refused when it
// holds control characters, which would reach terminals raw; throws
// InputError(where, "field 'name' …").
void require_display_name(const std::string& where, const char* field, const std::string& name);
// A name from an input file made safe as one file name: only letters,
// digits, '-', '_' and '.', no leading '.', at most 64 characters, so that
// "../../x" or "/etc/x" stays inside the folder it is written to.
std::string file_stem(const std::string& name);
// The whole of `s` as a number, as C writes it whatever the locale
// (std::from_chars: "2.5" under de_DE too); false for anything else.
bool parse_number(const std::string& s, double& out);
// Text for HTML and SVG: & < > " escaped, control characters as in printable().
std::string html_escape(const std::string& s);
// The one of `known` a mistyped `name` most likely meant ("analyse" ->
// "analyze", "H200" -> "h200"): equal but for case, else within an edit
// distance of 2 (and under half the name); "" when none is, or two tie.
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

}  // namespace tilewave
