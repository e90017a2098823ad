#include "tilewave/output_file.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "tilewave/error.h"

namespace tilewave {

namespace {

namespace fs = std::filesystem;

// The temporary files being written or waiting for their command's end,
// removed if a signal ends the process (docs/errors.md "Output files").
// Fixed buffers: the handler may only call async-signal-safe functions.
constexpr int kTempSlots = 16;
char g_temp[kTempSlots][4096];
std::atomic<bool> g_temp_set[kTempSlots];

extern "C" void remove_temp_and_reraise(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_set[i].load()) ::unlink(g_temp[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::mutex g_slot_mutex;

// A temporary's signal slot; -1 when all are taken (then only the normal
// paths remove it).
int take_slot(const std::string& p) {
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  if (p.size() >= sizeof g_temp[0]) return -1;
  for (int i = 0; i < kTempSlots; ++i)
    if (!g_temp_set[i].load()) {
      std::memcpy(g_temp[i], p.c_str(), p.size() + 1);
      g_temp_set[i].store(true);
      return i;
    }
  return -1;
}

void free_slot_of(const std::string& p) {
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_set[i].load() && p == g_temp[i]) g_temp_set[i].store(false);
}

struct TempGuard {
  std::string path;
  explicit TempGuard(const std::string& p) : path(p) { take_slot(p); }
  ~TempGuard() {
    if (path.empty()) return;
    ::unlink(path.c_str());
    free_slot_of(path);
  }
  void keep() { path.clear(); }  // renamed, or handed to an OutputScope (which frees its slot)
};

// The ledger of inputs (note_input), open while any OutputScope is.
std::mutex g_ledger_mutex;
std::map<std::pair<dev_t, ino_t>, std::string> g_input_paths;
int g_open_scopes = 0;
std::atomic<bool> g_stdout_gone{false};
thread_local OutputScope* t_scope = nullptr;
thread_local std::vector<OutputScope::Pending>* t_pending = nullptr;

// The input a target is, by device and inode, or "".
std::string input_named_by(const fs::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return "";
  std::lock_guard<std::mutex> lock(g_ledger_mutex);
  const auto it = g_input_paths.find({st.st_dev, st.st_ino});
  return it == g_input_paths.end() ? "" : it->second;
}

void rename_into_place(const OutputScope::Pending& p) {
  if (::rename(p.temp.c_str(), p.target.c_str()) != 0)
    throw InputError(p.path, std::string("cannot move output into place: ") + std::strerror(errno));
  free_slot_of(p.temp);
}

mode_t current_umask() {
  const mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

}  // namespace

void note_input(const std::string& path) {
  struct stat st {};
  if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0) return;
  std::lock_guard<std::mutex> lock(g_ledger_mutex);
  if (g_open_scopes == 0) return;
  g_input_paths.emplace(std::make_pair(st.st_dev, st.st_ino), path);
}

OutputScope::OutputScope() : outer_(t_scope) {
  std::lock_guard<std::mutex> lock(g_ledger_mutex);
  ++g_open_scopes;
  t_scope = this;
  if (!outer_) t_pending = &pending_;
}

OutputScope::~OutputScope() {
  for (const auto& p : pending_) {
    ::unlink(p.temp.c_str());
    free_slot_of(p.temp);
  }
  std::lock_guard<std::mutex> lock(g_ledger_mutex);
  if (--g_open_scopes == 0) g_input_paths.clear();
  t_scope = outer_;
  if (!outer_) t_pending = nullptr;
}

void OutputScope::commit() {
  if (outer_) return;  // the outermost scope renames
  while (!pending_.empty()) {
    rename_into_place(pending_.front());
    pending_.erase(pending_.begin());
  }
}

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
    if (g_stdout_gone) return;
    errno = 0;
    body(std::cout);
    std::cout.flush();
    if (!std::cout) {
      // Its reader has gone (SIGPIPE ignored, EPIPE): a quiet end of stdout,
      // the command's other outputs still written (docs/errors.md "Output files").
      if (errno == EPIPE) {
        g_stdout_gone = true;
        return;
      }
      throw InputError("stdout", "write failed (closed or full)");
    }
    return;
  }
  std::error_code ec;
  // Through a symbolic link to the file it names: the link stays a link.
  fs::path target = fs::path(path);
  if (fs::is_symlink(fs::symlink_status(target, ec))) target = fs::weakly_canonical(target, ec);
  const auto st = fs::status(target, ec);
  const bool exists = fs::exists(st);
  if (exists && fs::is_directory(st)) throw InputError(path, "is a directory, not an output file");
  if (exists) {
    const std::string input = input_named_by(target);
    if (!input.empty())
      throw InputError(path, input == path ? "is also an input of this command; write the output elsewhere"
                                           : fmt::format("is also an input of this command (read as {}); write the "
                                                         "output elsewhere", input));
  }
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
  if (t_pending) {  // renamed when the command has succeeded (OutputScope::commit)
    for (const auto& p : *t_pending)
      if (p.target == target.string())
        throw InputError(path, "is written twice by this command (another output names the same file)");
    t_pending->push_back({pattern, target.string(), path});
    guard.path.clear();
    return;
  }
  rename_into_place({pattern, target.string(), path});
  guard.keep();
}

}  // namespace tilewave
