#include "tilewave/output_file.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "tilewave/error.h"

namespace tilewave {

namespace {

namespace fs = std::filesystem;

// The temporary file being written, removed if a signal ends the process
// (docs/errors.md "Output files"). A fixed buffer: the handler may only
// call async-signal-safe functions.
char g_temp[4096];
std::atomic<bool> g_temp_set{false};

extern "C" void remove_temp_and_reraise(int sig) {
  if (g_temp_set.load()) ::unlink(g_temp);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

struct TempGuard {
  std::string path;
  explicit TempGuard(const std::string& p) : path(p) {
    if (p.size() < sizeof g_temp) {
      std::memcpy(g_temp, p.c_str(), p.size() + 1);
      g_temp_set.store(true);
    }
  }
  ~TempGuard() {
    g_temp_set.store(false);
    if (!path.empty()) ::unlink(path.c_str());
  }
  void keep() { path.clear(); }
};

mode_t current_umask() {
  const mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

}  // namespace

void remove_temporaries_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, remove_temp_and_reraise);
}

void refuse_output_over_input(const std::string& output, const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") return;
  std::error_code ec;
  if (!fs::exists(output, ec)) return;
  for (const auto& in : inputs) {
    if (in.empty() || in == "-") continue;
    std::error_code ec2;
    if (fs::equivalent(output, in, ec2) && !ec2)
      throw InputError(output, fmt::format("is also an input of this command ({}); write the output elsewhere", in));
  }
}

void write_output(const std::string& path, const std::function<void(std::ostream&)>& body) {
  if (path.empty() || path == "-") {
    body(std::cout);
    std::cout.flush();
    if (!std::cout) throw InputError("stdout", "write failed (closed or full)");
    return;
  }
  std::error_code ec;
  // Through a symbolic link to the file it names: the link stays a link.
  fs::path target = fs::path(path);
  if (fs::is_symlink(fs::symlink_status(target, ec))) target = fs::weakly_canonical(target, ec);
  const auto st = fs::status(target, ec);
  const bool exists = fs::exists(st);
  if (exists && fs::is_directory(st)) throw InputError(path, "is a directory, not an output file");
  if (exists && !fs::is_regular_file(st)) {
    // A device, FIFO or socket is written in place, never replaced by a file.
    std::ofstream f(target, std::ios::binary);
    if (!f) throw InputError(path, "cannot write output file");
    body(f);
    f.flush();
    if (!f) throw InputError(path, "write failed");
    return;
  }
  // A fresh temporary beside the target, created exclusively under a random
  // name (never through a link planted there), renamed over the target only
  // once every byte is written.
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string pattern = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw InputError(path, std::string("cannot write output file: ") + std::strerror(errno));
  TempGuard guard(pattern);
  // The target's mode if it exists, else what a new file gets under the umask.
  struct stat old {};
  const mode_t mode = exists && ::stat(target.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~current_umask());
  ::fchmod(fd, mode);
  ::close(fd);
  {
    std::ofstream f(pattern, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError(path, "cannot write output file");
    body(f);
    f.flush();
    if (!f) throw InputError(path, "write failed (disk full?)");
    f.close();
    if (!f) throw InputError(path, "write failed (disk full?)");
  }
  if (::rename(pattern.c_str(), target.c_str()) != 0)
    throw InputError(path, std::string("cannot move output into place: ") + std::strerror(errno));
  guard.keep();
}

}  // namespace tilewave
