// The progress line (docs/errors.md "Progress"): silent off a terminal,
// throttled, ended with a newline; the clock and terminal flag injected.
#include <sstream>

#include <doctest/doctest.h>

#include "tilewave/progress.h"

using namespace tilewave;

TEST_CASE("off a terminal: nothing in a step's first minute, then a plain line a minute") {
  std::ostringstream os;
  double now = 0;
  {
    Progress p("tilewave nas", os, false, [&] { return now; });
    for (int i = 0; i <= 59; ++i) now = i, p.update(uint64_t(i), 300, "candidates");
    CHECK(os.str().empty());  // a step shorter than a minute (every test's) shows nothing
    for (int i = 60; i <= 150; ++i) now = i, p.update(uint64_t(i), 300, "candidates");
    p.finish();
  }
  CHECK(os.str() == "tilewave nas: candidates 60 / 300 (20%), 60.0 s\n"
                    "tilewave nas: candidates 120 / 300 (40%), 120.0 s\n");
}

TEST_CASE("progress on a terminal: nothing for a short step, then at most one line per interval, a newline at the end") {
  std::ostringstream os;
  double now = 10;
  Progress p("fit", os, true, [&] { return now; });
  p.update(1, 10, "searches");  // a step shorter than the interval shows nothing
  now += 0.1;
  p.update(2, 10, "searches");
  CHECK(os.str().empty());
  now = 10.5;
  p.update(3, 10, "searches");
  CHECK(os.str() == "\rfit: searches 3 / 10 (30%), 0.5 s");
  now = 10.6;  // inside the interval: throttled
  p.update(4, 10, "searches");
  CHECK(os.str() == "\rfit: searches 3 / 10 (30%), 0.5 s");
  now = 11;
  p.update(5, 10, "x");  // a shorter line blanks the longer one's tail
  CHECK(os.str() == "\rfit: searches 3 / 10 (30%), 0.5 s\rfit: x 5 / 10 (50%), 1.0 s       ");
  now = 11.01;  // the last unit is shown although the interval has not passed
  p.update(10, 10, "x");
  CHECK(os.str().substr(os.str().rfind('\r')) == "\rfit: x 10 / 10 (100%), 1.0 s");
  p.finish();
  CHECK(os.str().back() == '\n');
  const std::string before = os.str();
  p.finish();  // once only
  CHECK(os.str() == before);
}

TEST_CASE("a stage's progress names its steps under a prefix; an empty callback stays empty") {
  std::ostringstream os;
  double now = 0;
  Progress p("fit-runtime", os, true, [&] { return now; });
  now = 1;
  prefixed(p.callback(), "class library")(2, 9, "searches");
  CHECK(os.str() == "\rfit-runtime: class library: searches 2 / 9 (22%), 1.0 s");
  CHECK(!prefixed(ProgressFn{}, "x"));
}
