// The release, as `tilewave --version` and `tilewave.__version__` print it;
// defined once, by project(VERSION) in the top CMakeLists.txt.
#pragma once

namespace tilewave {
const char* version();
}  // namespace tilewave
