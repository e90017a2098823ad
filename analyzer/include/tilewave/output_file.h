// Output files are written whole or not at all (docs/errors.md "Output
// files"): a temporary beside the target, created exclusively under a random
// name, renamed into place only after every byte is written; a device or FIFO
// is written in place, never replaced; the target's mode is kept. Every writer
// of the CLI and of the Python module goes through write_output.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace tilewave {

// Writes to `path` ("-" or "" means stdout) through `body`; throws InputError
// naming the path when a write fails (a full disk, a closed stdout).
void write_output(const std::string& path, const std::function<void(std::ostream&)>& body);

// From now on SIGINT, SIGTERM and SIGHUP remove a temporary being written
// before the process ends. For the CLI; a Python host keeps its own handlers.
void remove_temporaries_on_signals();

// Throws InputError when an output path names the same file as one of the
// inputs (an `-o` equal to the model would overwrite it).
void refuse_output_over_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace tilewave
