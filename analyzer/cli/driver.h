// The whole of `tilewave` as a function: main.cpp's main() calls it, and
// tests/newcomer/ runs it in-process over an extended option table and
// view registry (docs/model.md "Extending tilewave").
#pragma once

namespace tilewave::cli {

// Parses argv, runs the subcommand and returns the exit code (docs/errors.md
// "Exit codes"); errors are one line on stderr.
int run(int argc, char** argv);

}  // namespace tilewave::cli
