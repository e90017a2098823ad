#include "tilewave/version.h"

namespace tilewave {
// TILEWAVE_VERSION comes from analyzer/CMakeLists.txt (PROJECT_VERSION).
const char* version() { return TILEWAVE_VERSION; }
}  // namespace tilewave
