// The release, as `tilewave --version` and `tilewave.__version__` print it;
// defined once, by project(VERSION) in the top CMakeLists.txt.
#pragma once

namespace tilewave {
const char* version();
// The commit the binary was built from (analyzer/build_commit.cmake), for the
// provenance of the files calibration writes.
const char* build_commit();
}  // namespace tilewave
