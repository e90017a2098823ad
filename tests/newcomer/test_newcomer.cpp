// The newcomer test (docs/model.md "Extending tilewave"): toy_extension.cpp
// adds an execution option and a view through the registration calls alone,
// and here the real CLI (cli::run, the code behind `tilewave`) offers them:
// the flag and format in --help, the option in `tilewave options`, the view
// written from the analysis, and both refused where they do not belong.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "driver.h"
#include "tilewave/analysis.h"
#include "tilewave/exec_options.h"
#include "tilewave/pipeline.h"
#include "tilewave/report.h"
#include "tilewave/view_registry.h"
#include "toy_extension.h"

using namespace tilewave;

namespace {

struct CliRun {
  int rc = 0;
  std::string out, err;
};

// `tilewave ARGS...` in this process, stdout and stderr captured.
CliRun tilewave_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "tilewave");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  CliRun run;
  run.rc = cli::run(int(argv.size()), argv.data());
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

std::string model() { return std::string(TILEWAVE_TEST_DATA) + "/tiny_cnn.onnx"; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST_CASE("the toy option and view are in the tables, after the shipped entries") {
  REQUIRE(toy::extension_registered());
  CHECK(execution_options().back().keyword == "toy_style");
  const std::vector<std::string> formats = ViewRegistry::global().formats("analyze");
  CHECK(formats.back() == "toy-bounds");
  CHECK(formats.front() == "table");  // the shipped default stays first
  CHECK(ViewRegistry::global().formats("rank") == std::vector<std::string>{"table", "json", "csv"});
}

TEST_CASE("analyze --help offers the toy flag and format with their help") {
  const CliRun r = tilewave_cli({"analyze", "--help"});
  CHECK(r.rc == 0);
  CHECK(r.out.find("--toy-style") != std::string::npos);
  CHECK(r.out.find("how the toy-bounds view spells bounds") != std::string::npos);
  CHECK(r.out.find("toy-bounds (a line per kernel bound: kernels and time (tests/newcomer))") != std::string::npos);
  // The conventions line lists every format the registry holds, the toy's too.
  CHECK(r.out.find("toy-bounds where offered") != std::string::npos);
  // Only analyze took the option (its entry's commands).
  CHECK(tilewave_cli({"rank", "--help"}).out.find("--toy-style") == std::string::npos);
}

TEST_CASE("tilewave options lists the toy option in the docs' table, the stub and JSON") {
  CHECK(tilewave_cli({"options", "--format", "md"}).out.find("toy_style") != std::string::npos);
  CHECK(tilewave_cli({"options", "--format", "pyi"}).out.find("toy_style: str") != std::string::npos);
  CHECK(tilewave_cli({"options", "--format", "json"}).out.find("\"toy_style\"") != std::string::npos);
}

TEST_CASE("analyze --format toy-bounds writes the analysis's bounds, spelled as --toy-style says") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("tilewave_newcomer_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string plain_path = (dir / "plain.txt").string(), upper_path = (dir / "upper.txt").string();

  toy::style() = "plain";
  CliRun r = tilewave_cli({"analyze", model(), "--batch", "2", "--format", "toy-bounds", "-o", plain_path});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  r = tilewave_cli({"analyze", model(), "--batch", "2", "--format", "toy-bounds", "--toy-style", "upper", "-o", upper_path});
  REQUIRE_MESSAGE(r.rc == 0, r.err);
  CHECK(toy::style() == "upper");  // the flag reached the option's own code

  // The same rows as the analysis the library computes: the view only presents them.
  RunOptions o;
  o.batch = 2;
  const Analysis a = analyze_file(model(), resolve_target(o));
  REQUIRE(!a.by_bound.empty());
  std::string expected_plain, expected_upper;
  for (const KernelGroup& g : a.by_bound) {
    std::string upper = g.name;
    for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
    expected_plain += fmt::format("{} {} {:.3f}\n", g.name, g.kernels, g.time_us);
    expected_upper += fmt::format("{} {} {:.3f}\n", upper, g.kernels, g.time_us);
  }
  CHECK(read_file(plain_path) == expected_plain);
  CHECK(read_file(upper_path) == expected_upper);
  CHECK(expected_plain != expected_upper);
  std::filesystem::remove_all(dir);
  toy::style() = "plain";
}

TEST_CASE("a format or value the tables lack is a usage error naming what they hold") {
  CliRun r = tilewave_cli({"analyze", model(), "--format", "toy"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("unknown format 'toy' (table, json, csv, toy-bounds)") != std::string::npos);
  // The toy format is analyze's alone.
  r = tilewave_cli({"rank", model(), "--format", "toy-bounds"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("(table, json, csv)") != std::string::npos);
  r = tilewave_cli({"analyze", model(), "--toy-style", "shout"});
  CHECK(r.rc == 2);
  CHECK(r.err.find("shout") != std::string::npos);
  r = tilewave_cli({"rank", model(), "--toy-style", "upper"});
  CHECK(r.rc == 2);
}
