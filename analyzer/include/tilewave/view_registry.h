// The formats every command writes its result in, one registry for all of
// them (docs/cli.md "Formats"): a command's `--format` looks
// the name up here, its help and its error line list the names from here,
// and Python's *_text functions take the same names. A view is one entry
// (docs/model.md "Extending tilewave"):
// the command, the format's name, what it shows, and the function that
// writes the result computed before it. Only the view asked for is written.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <typeindex>
#include <vector>

namespace tilewave {

struct ViewEntry {
  std::string command;  // the subcommand ("analyze", "calibrate validate")
  std::string format;   // its --format name
  std::string summary;  // what it shows, for --help
  std::type_index input;  // the result it is written from
  std::function<void(std::ostream&, const void*)> write;
  // A streamed view's one row, formatted as the command produces it (nas's
  // candidates); empty for a view written whole.
  std::type_index row_input = std::type_index(typeid(void));
  std::function<void(const void*, std::string&)> row;
};

class ViewRegistry {
 public:
  // The shipped views (views/registry.cpp) and any added since. Views are
  // added before a command runs (at start-up), never while one does.
  static ViewRegistry& global();

  // A new format of `command`, written from an `Input` (report.h's *ViewInput
  // structs). A format a command already has is a logic_error.
  template <class Input>
  void add(const std::string& command, const std::string& format, const std::string& summary,
           std::function<void(std::ostream&, const Input&)> write) {
    add_entry(entry_of(command, format, summary, std::move(write)));
  }

  // A streamed format: `write` writes the header and any rows handed over
  // whole, `row` one row into a string as the command produces it.
  template <class Input, class Row>
  void add_streamed(const std::string& command, const std::string& format, const std::string& summary,
                    std::function<void(std::ostream&, const Input&)> write,
                    std::function<void(const Row&, std::string&)> row) {
    ViewEntry entry = entry_of(command, format, summary, std::move(write));
    entry.row_input = std::type_index(typeid(Row));
    entry.row = [row](const void* r, std::string& out) { row(*static_cast<const Row*>(r), out); };
    add_entry(std::move(entry));
  }

  // The command's formats, in the order they were added (the first is the
  // default where the command has none of its own).
  std::vector<std::string> formats(const std::string& command) const;
  // Every command's formats, each once, in the order first added (the CLI's conventions line).
  std::vector<std::string> formats() const;
  // Every entry, in the order added (docs/cli.md's table of formats, Python's formats()).
  const std::vector<ViewEntry>& entries() const { return entries_; }
  // --format's help: "table (a person's view…), json (…)".
  std::string help(const std::string& command) const;
  // The entry; an InputError on `option` naming the formats the command has otherwise.
  const ViewEntry& find(const std::string& command, const std::string& format,
                        const std::string& option = "--format") const;

  // The row formatter of a streamed format (find's error otherwise); a copy,
  // so a view added later cannot leave it dangling.
  template <class Row>
  std::function<void(const Row&, std::string&)> row_writer(const std::string& command, const std::string& format) const {
    const ViewEntry& view = find(command, format);
    check_row(view, std::type_index(typeid(Row)));
    return [row = view.row](const Row& r, std::string& out) { row(&r, out); };
  }

  // Writes `input` in the command's `format` (find's error otherwise).
  template <class Input>
  void write(std::ostream& os, const std::string& command, const std::string& format, const Input& input) const {
    const ViewEntry& view = find(command, format);
    check_input(view, std::type_index(typeid(Input)));
    view.write(os, &input);
  }

 private:
  ViewRegistry() = default;
  template <class Input>
  static ViewEntry entry_of(const std::string& command, const std::string& format, const std::string& summary,
                            std::function<void(std::ostream&, const Input&)> write) {
    return {command, format, summary, std::type_index(typeid(Input)),
            [write](std::ostream& os, const void* input) { write(os, *static_cast<const Input*>(input)); },
            std::type_index(typeid(void)), {}};
  }
  void add_entry(ViewEntry entry);
  static void check_input(const ViewEntry& view, std::type_index given);
  static void check_row(const ViewEntry& view, std::type_index given);
  std::vector<ViewEntry> entries_;
};

}  // namespace tilewave
