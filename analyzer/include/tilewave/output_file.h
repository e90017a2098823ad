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

// The one file-identity guard (docs/errors.md "Output files"): every reader
// notes the file it read, by device and inode, and while an OutputScope is
// open write_output refuses a target that is one of them, whatever path
// reached it (a list entry, a file in a GPU folder, a sidecar).
void note_input(const std::string& path);

// One command's outputs, on the thread that opens it: write_output writes
// each file to its temporary and renames them all at commit(), once the
// command has succeeded; closed without commit() it removes them, so a
// failed command leaves no output behind. Scopes may nest (the outermost
// commits); the ledger of inputs lives as long as the outermost scope.
class OutputScope {
 public:
  OutputScope();
  ~OutputScope();
  OutputScope(const OutputScope&) = delete;
  OutputScope& operator=(const OutputScope&) = delete;
  void commit();
  struct Pending {
    std::string temp, target, path;
  };

 private:
  std::vector<Pending> pending_;
  OutputScope* outer_;
};

}  // namespace tilewave
