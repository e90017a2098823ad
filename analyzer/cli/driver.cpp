// tilewave's driver (driver.h), a thin one over the analyzer library
// (analyzer/include): the table of subcommands (subcommands.h) added to
// CLI11, one convention for all of them (docs/cli.md), and the parsed one run.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "driver.h"
#include "subcommands.h"
#include "tilewave/error.h"
#include "tilewave/output_file.h"
#include "tilewave/text.h"
#include "tilewave/version.h"
#include "tilewave/view_registry.h"

using namespace tilewave;
using cli::Args;
using cli::Subcommand;

namespace {

// Adds the table's subcommands under `parent`, each with its setup; `added`
// pairs each parsed-to-be CLI::App with its entry.
void add_subcommands(CLI::App* parent, const std::vector<Subcommand>& table, Args& a,
                     std::vector<std::pair<CLI::App*, const Subcommand*>>& added) {
  for (const Subcommand& s : table) {
    CLI::App* cmd = parent->add_subcommand(s.name, s.help);
    s.setup(cmd, a);
    added.emplace_back(cmd, &s);
    add_subcommands(cmd, s.children, a, added);
  }
}

// One convention for every subcommand (docs/cli.md): a batch is a positive
// integer, a list of them a,b,c; the help says where the rest is written.
void apply_conventions(CLI::App* cmd) {
  static const CLI::Validator positive_batches(
      [](std::string& v) {
        std::stringstream ss(v);
        std::string part;
        bool any = false;
        while (std::getline(ss, part, ',')) {
          char* end = nullptr;
          const long long b = std::strtoll(part.c_str(), &end, 10);
          if (part.empty() || *end || b < 1) return "'" + v + "': a batch is a positive integer (lists: 1,8,64)";
          any = true;
        }
        return any ? std::string() : "'" + v + "' names no batch";
      },
      "BATCH");
  if (auto* batch = cmd->get_option_no_throw("--batch")) batch->check(positive_batches);
  if (auto* batches = cmd->get_option_no_throw("--batches")) batches->check(positive_batches);
  cmd->footer(fmt::format("Conventions (docs/cli.md): -o FILE writes atomically (default stdout); --format {} "
                          "where offered; lists are a,b,c; --top counts table rows; bad usage exits 2, bad input 1.",
                          fmt::join(ViewRegistry::global().formats(), "|")));
  for (auto* sub : cmd->get_subcommands({})) apply_conventions(sub);
}

// Every argument is a candidate input: an output naming the same file as
// any other argument (the model, a GPU file, a layer set) is refused.
void refuse_outputs_over_inputs(int argc, char** argv, const cli::CommonOptions& o) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    args.push_back(a.rfind("--", 0) == 0 && eq != std::string::npos ? a.substr(eq + 1) : a);
  }
  for (const std::string* out : {&o.output, &o.trace_out}) {
    auto own = std::find(args.begin(), args.end(), *out);
    if (own != args.end()) args.erase(own);  // an output's own argument
  }
  refuse_output_over_input(o.output, args);
  refuse_output_over_input(o.trace_out, args);
}

}  // namespace

int tilewave::cli::run(int argc, char** argv) {
  CLI::App app{"tilewave: predicts how well a neural network uses a GPU (tile, wave and roofline model)", "tilewave"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tilewave ") + version());
  Args a;
  std::vector<std::pair<CLI::App*, const Subcommand*>> commands;
  add_subcommands(&app, cli::subcommands(), a, commands);
  apply_conventions(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every error (docs/errors.md "Exit codes"): CLI11's own
    // exit() adds a second line pointing at --help.
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    // A mistyped command: name it, and the one it most likely meant.
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string meant = closest_name(argv[1], names);
      what = fmt::format("unknown command '{}'{}", argv[1],
                         meant.empty() ? "" : fmt::format("; did you mean '{}'?", meant));
    }
    std::cerr << "tilewave: usage error: " << printable(what) << " (--help lists the options)\n";
    return 2;
  }
  remove_temporaries_on_signals();
  // A reader of stdout that has gone (`| head`) ends stdout, not the command:
  // write_output stops writing there and the side files are still completed.
  std::signal(SIGPIPE, SIG_IGN);
  a.o.invocation = "tilewave";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool quote = arg.empty() || arg.find_first_of(" \t'\"\\$") != std::string::npos;
    a.o.invocation += " " + (quote ? "'" + arg + "'" : arg);
  }
  try {
    refuse_outputs_over_inputs(argc, argv, a.o);
  } catch (const InputError& e) {
    std::cerr << "tilewave: error: " << printable(e.what()) << "\n";
    return 1;
  }

  // Outputs wait for the command's end too (OutputScope): renamed into place
  // only once it has succeeded, and none may replace a file it read.
  OutputScope outputs;
  // Notes wait for the command's end (cli::note): a command that fails
  // prints its one error line and nothing before it (docs/errors.md).
  auto dispatch = [&]() -> int {
    for (const auto& [cmd, entry] : commands)
      if (*cmd && entry->run) a.o.command = entry->name;
    cli::resolve_options(a.o);
    for (const auto& [cmd, entry] : commands)
      if (*cmd && entry->run) return entry->run(cmd, a);
    return 2;
  };
  try {
    const int rc = dispatch();
    if (rc == 0) {
      outputs.commit();
      cli::print_notes();
    }
    return rc;
  } catch (const UsageError& e) {
    std::cerr << "tilewave: usage error: " << printable(e.what()) << " (--help lists the options)\n";
    return 2;
  } catch (const InputError& e) {
    std::cerr << "tilewave: error: " << printable(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    // Reaching this is a bug (every bad input should be an InputError), but
    // the contract still holds: one line naming the input, exit 1. The tests
    // fail on the words "internal error" (docs/errors.md).
    std::string input = a.model.empty() ? (a.layer_set.empty() ? a.extract : a.layer_set) : a.model;
    if (input.empty() && !a.models.empty()) input = a.models.front();
    std::cerr << "tilewave: error: " << printable(input.empty() ? a.o.gpu : input)
              << ": internal error, please report it: " << printable(e.what()) << "\n";
    return 1;
  }
  return 2;
}
