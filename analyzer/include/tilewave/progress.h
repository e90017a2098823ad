// Progress of a long step (docs/errors.md "Progress"): on a terminal one
// line on stderr, rewritten in place; off a terminal (a pipe, a file) a plain
// line every kPipeInterval, so a short step (every test's) shows nothing and a
// long one is not silent. Every long command reports through this class.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>

namespace tilewave {

// What a library loop calls as it goes: `done` of `total` units of `step`
// ("lowering runs", "class library: searches").
using ProgressFn = std::function<void(uint64_t done, uint64_t total, const std::string& step)>;
// `progress` with its steps named "prefix: step" (one stage of a longer
// job); empty when `progress` is.
ProgressFn prefixed(const ProgressFn& progress, std::string prefix);

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  // On stderr, shown when it is a terminal, timed by the steady clock.
  explicit Progress(std::string what);
  // For tests: the stream, whether it counts as a terminal, and the clock.
  Progress(std::string what, std::ostream& os, bool terminal, Clock clock);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Shows "what: step done / total (p%), t s" at most every kInterval
  // seconds, and nothing in the first kInterval (a short step stays
  // silent); the last unit (done == total) is shown once it is due. Thread-safe.
  void update(uint64_t done, uint64_t total, const std::string& step = "");
  // A ProgressFn that updates this.
  ProgressFn callback();
  // Ends the line with a newline if anything was shown; later updates show again.
  void finish();

  static constexpr double kInterval = 0.25;
  static constexpr double kPipeInterval = 60;  // off a terminal: a line a minute, none in the first

 private:
  std::string what_;
  std::ostream& os_;
  bool terminal_;
  Clock clock_;
  double start_ = 0, last_ = -1;
  size_t width_ = 0;  // the last line's length, blanked by a shorter one
  bool shown_ = false;
  std::mutex mutex_;
};

}  // namespace tilewave
