#include "output.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <unistd.h>

#include "tilewave/error.h"

namespace tilewave {

void write_output(const std::string& path, const std::function<void(std::ostream&)>& body) {
  if (path.empty() || path == "-") {
    body(std::cout);
    std::cout.flush();
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError(path, "cannot write output file");
    try {
      body(f);
    } catch (...) {
      f.close();
      std::remove(tmp.c_str());
      throw;
    }
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw InputError(path, "write failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "cannot move output into place: " + ec.message());
  }
}

}  // namespace tilewave
