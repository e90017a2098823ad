// Where the installed data lives (gpu_model.h): found from the file this code
// was loaded from, so that the CLI and the Python module of one installation
// read the same GPU database wherever the prefix is.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "tilewave/gpu_model.h"

#ifndef TILEWAVE_SOURCE_DIR
#define TILEWAVE_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;

namespace tilewave {

namespace {

// <prefix>/share/tilewave/<sub> of the installation holding this code: the
// executable (<prefix>/bin) or the shared object (<prefix>/lib/python3/dist-packages).
std::string installed_dir(const char* sub) {
  std::error_code ec;
  std::vector<fs::path> binaries;
  // A shared object names itself; for an executable dladdr gives argv[0], so
  // /proc/self/exe is asked instead.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&installed_dir), &info) && info.dli_fname &&
      fs::path(info.dli_fname).extension() == ".so")
    binaries.push_back(fs::absolute(info.dli_fname, ec));
  binaries.push_back(fs::read_symlink("/proc/self/exe", ec));
  for (const fs::path& binary : binaries) {
    fs::path dir = binary.parent_path();
    for (int up = 0; up < 4 && !dir.empty() && dir != dir.root_path(); ++up, dir = dir.parent_path()) {
      const fs::path candidate = dir / "share" / "tilewave" / sub;
      if (fs::is_directory(candidate, ec)) return candidate.string();
    }
  }
  return "";
}

std::string data_dir(const char* sub, const char* source_sub) {
  if (const char* data = std::getenv("TILEWAVE_DATA")) return (fs::path(data) / sub).string();
  std::string dir = installed_dir(sub);
  if (!dir.empty()) return dir;
  std::error_code ec;
  const fs::path source = fs::path(TILEWAVE_SOURCE_DIR) / source_sub;
  if (fs::is_directory(source, ec)) return source.string();
  return source_sub;
}

}  // namespace

std::string default_gpu_dir() {
  if (const char* env = std::getenv("TILEWAVE_GPU_DIR")) return env;
  return data_dir("gpu_models", "gpu_models");
}

std::string default_space_dir() { return data_dir("spaces", "onnx_models/spaces"); }

}  // namespace tilewave
