// The one table of the options that say what a model runs on and how
// (docs/cli.md "Execution options", docs/python.md "The execution options"): every entry's name, kind, choices,
// default, help and the key it sets. The CLI's flags (cli/subcommands.cpp
// add_execution_options), the Python module's keywords (python/module.cpp
// resolve_keywords), the type stub's ExecutionOptions and the docs' table
// (`tilewave options --format pyi|md`) are all built from it: a new option
// is one entry here plus the code that reads it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/run_options.h"

namespace tilewave {

enum class OptionKind {
  text,    // a string: an id or a path
  choice,  // one of `choices`
  on_off,  // a yes/no axis: --NAME / --no-NAME, Python True/False/None (None: the runtime's)
  flag,    // --NAME, Python True/False
  shapes,  // --NAME IN=1x3x224x224 (repeatable), Python {IN: [1, 3, 224, 224]}
};

struct ExecOption {
  std::string keyword;  // the Python keyword; the CLI flag is "--" + keyword with '_' as '-'
  OptionKind kind;
  std::vector<std::string> choices;  // choice: every value
  std::string default_value;         // as Python writes it: "\"h200\"", "None", "False"
  std::string default_help;          // what a default that is no plain value means ("the runtime's"), for the docs
  std::string help;                  // on_off: the --NAME flag's
  std::string help_off;              // on_off: the --no-NAME flag's
  // The key it sets in the execution configuration's JSON form
  // (execution_from_json), "" for an option outside it.
  std::string execution_key;
  // The commands that take it; empty: every command that analyses a model.
  std::vector<std::string> commands;
  // In `compare` the option is an axis: a list on the CLI (`--gpu a,b`) and
  // this keyword in Python (`gpus=[...]`); empty: one value there too.
  std::string compare_keyword;
  std::string python_type;  // as the type stub writes it
  // An option kept outside RunOptions' fields and the execution
  // configuration sets its value itself, once the table's checks (type,
  // choices) have passed; null for the shipped ones, which set_option routes.
  std::function<void(RunOptions&, const nlohmann::json&)> apply = {};
};

// The table, in the order --help and the docs list them: the shipped
// options, then any added.
const std::vector<ExecOption>& execution_options();
// Adds an option after the shipped ones (docs/model.md "Extending
// tilewave"), at start-up, before any command or Python call reads the
// table: its flag, keyword, stub line and docs row follow. A keyword the
// table has already is a logic_error.
void add_execution_option(ExecOption option);
// The commands that analyse a model (the CLI's names; Python's functions say which they are).
const std::vector<std::string>& analysing_commands();
bool takes_option(const ExecOption& e, const std::string& command);
// "--gpu-dir" for gpu_dir; on_off: "--no-amp" for its off flag.
std::string cli_flag(const ExecOption& e);
std::string cli_off_flag(const ExecOption& e);

// compare's default list of an axis (CompareAxes); empty: each runtime's.
std::vector<std::string> compare_axis_default(const ExecOption& e);

// Sets one option on `o` from its value as JSON (the CLI's strings and
// booleans, Python's objects as from_python gives them). The value is
// checked against the entry: InputError naming the option as o spells it.
void set_option(RunOptions& o, const ExecOption& e, const nlohmann::json& value);
// Every key of `values` (an object, keyword → value) set on `o` as `command`
// takes them; a key the command does not take is an InputError naming it.
// compare's axes (compare_keyword) go into `axes` as lists when given.
void set_options(RunOptions& o, const nlohmann::json& values, const std::string& command, CompareAxes* axes = nullptr);

}  // namespace tilewave
