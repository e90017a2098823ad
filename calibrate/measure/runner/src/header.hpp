// The first output line: which GPU, clocks and library versions produced the numbers.
#pragma once

#include <string>

#include "layer.hpp"

namespace tw {

struct Context;

Json device_header(const Context& ctx, const std::string& command);

}  // namespace tw
