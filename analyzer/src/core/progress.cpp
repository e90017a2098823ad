#include "tilewave/progress.h"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include <fmt/format.h>

namespace tilewave {

namespace {
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Progress::Progress(std::string what) : Progress(std::move(what), std::cerr, ::isatty(2) == 1, steady_seconds) {}

Progress::Progress(std::string what, std::ostream& os, bool terminal, Clock clock)
    : what_(std::move(what)), os_(os), terminal_(terminal), clock_(std::move(clock)) {
  start_ = clock_();
}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done, uint64_t total, const std::string& step) {
  std::lock_guard<std::mutex> lock(mutex_);
  const double now = clock_();
  // Off a terminal a line is a line of a log: seldom, and only for a long step.
  const double interval = terminal_ ? kInterval : kPipeInterval;
  if (now - start_ < interval) return;
  if (last_ >= 0 && now - last_ < interval && (done < total || !terminal_)) return;
  last_ = now;
  std::string line = fmt::format("{}: {}{}{} / {}", what_, step, step.empty() ? "" : " ", done, total);
  if (total > 0) line += fmt::format(" ({:.0f}%)", 100.0 * double(std::min(done, total)) / double(total));
  line += fmt::format(", {:.1f} s", now - start_);
  if (!terminal_) {
    os_ << line << '\n' << std::flush;
    return;
  }
  // Blanks what a longer previous line left (no terminal escapes needed).
  const size_t width = line.size();
  if (line.size() < width_) line.append(width_ - line.size(), ' ');
  width_ = width;
  os_ << '\r' << line << std::flush;
  shown_ = true;
}

ProgressFn prefixed(const ProgressFn& progress, std::string prefix) {
  if (!progress) return {};
  return [progress, prefix = std::move(prefix)](uint64_t done, uint64_t total, const std::string& step) {
    progress(done, total, step.empty() ? prefix : prefix + ": " + step);
  };
}

ProgressFn Progress::callback() {
  return [this](uint64_t done, uint64_t total, const std::string& step) { update(done, total, step); };
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!shown_) return;
  os_ << '\n' << std::flush;
  shown_ = false;
  width_ = 0;
  last_ = -1;
}

}  // namespace tilewave
