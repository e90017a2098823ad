#include "tilewave/exec_axes.h"

#include "tilewave/error.h"

namespace tilewave {

const char* layout_name(Layout l) { return l == Layout::nchw ? "nchw" : "nhwc"; }
const char* launch_name(Launch l) { return l == Launch::loop ? "loop" : "graph"; }

Layout layout_named(const std::string& s, const std::string& where) {
  if (s == "nchw" || s == "contiguous") return Layout::nchw;
  if (s == "nhwc" || s == "channels_last") return Layout::nhwc;
  throw InputError(where, "unknown layout '" + s + "' (nchw, nhwc)");
}

Launch launch_named(const std::string& s, const std::string& where) {
  if (s == "graph") return Launch::graph;
  if (s == "loop") return Launch::loop;
  throw InputError(where, "unknown launch mode '" + s + "' (graph, loop)");
}

}  // namespace tilewave
