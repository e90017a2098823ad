// --self-test: small problems checked against CPU references, then a short
// timing pass over every op kind. Returns the process exit code.
#pragma once

#include "timing.hpp"

namespace tw {

int run_self_test(const TimingConfig& timing);

}  // namespace tw
