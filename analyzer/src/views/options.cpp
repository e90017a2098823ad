// `tilewave options` (docs/python.md's table, the stub's option dicts): the
// one table of execution options (exec_options.h), presented three ways.
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "tilewave/exec_options.h"
#include "tilewave/report.h"

namespace tilewave {

void write_options_markdown(std::ostream& os) {
  const auto& table = execution_options();
  os << "| keyword | CLI | default | commands | what |\n| --- | --- | --- | --- | --- |\n";
  for (const ExecOption& e : table) {
    std::string cli = "`" + cli_flag(e) + "`";
    if (e.kind == OptionKind::on_off) cli += " (`True`), `" + cli_off_flag(e) + "` (`False`)";
    if (!e.choices.empty()) cli += ": `" + fmt::format("{}", fmt::join(e.choices, "`, `")) + "`";
    std::string commands = e.commands.empty() ? "all" : fmt::format("{}", fmt::join(e.commands, ", "));
    if (!e.compare_keyword.empty()) commands += fmt::format(" (compare: a list, `{}=`)", e.compare_keyword);
    std::string help = e.help;
    if (e.kind == OptionKind::on_off) help += "; off: " + e.help_off;
    const std::string default_text =
        e.default_help.empty() ? "`" + e.default_value + "`" : "`" + e.default_value + "`: " + e.default_help;
    os << fmt::format("| `{}` | {} | {} | {} | {} |\n", e.keyword, cli, default_text, commands, help);
  }
}

void write_options_stub(std::ostream& os) {
  const auto& table = execution_options();
  // One TypedDict per set of keywords a call takes (its **options); a set
  // that holds another's derives from it and lists only its own.
  struct Dict {
    const char* name;
    const char* command;
    const char* base;
    const char* what;
  };
  for (const Dict& d : {Dict{"ListOptions", "nas", "", "analyze_layers and Space.scorer: no file, so no input"},
                        Dict{"ExecutionOptions", "analyze", "ListOptions",
                             "analyze, sweep, advise, check, rank, report, annotate"},
                        Dict{"CompareOptions", "compare", "", "compare: gpus, runtimes, dtypes, layouts are lists"}}) {
    const bool derived = *d.base != 0;
    os << fmt::format("class {}({}, total=False):  # {}\n", d.name, derived ? d.base : "TypedDict", d.what);
    for (const ExecOption& e : table) {
      if (!takes_option(e, d.command) || (derived && takes_option(e, "nas"))) continue;
      const bool axis = std::string(d.command) == "compare" && !e.compare_keyword.empty();
      const auto axis_default = compare_axis_default(e);
      const std::string default_value =
          !axis ? e.default_value
                : axis_default.empty() ? "None" : fmt::format("[\"{}\"]", fmt::join(axis_default, "\", \""));
      os << fmt::format("    {}: {}  # default {}\n", axis ? e.compare_keyword : e.keyword,
                         axis ? "Union[str, List[str]]" : e.python_type, default_value);
    }
  }
}

nlohmann::json options_to_json() {
  const auto& table = execution_options();
  nlohmann::json j = nlohmann::json::array();
  for (const ExecOption& e : table) {
    const char* kinds[] = {"text", "choice", "on_off", "flag", "shapes"};
    j.push_back({{"keyword", e.keyword}, {"flag", cli_flag(e)}, {"kind", kinds[int(e.kind)]}, {"choices", e.choices},
                 {"default", e.default_value}, {"default_help", e.default_help}, {"help", e.help},
                 {"execution_key", e.execution_key},
                 {"commands", e.commands.empty() ? analysing_commands() : e.commands},
                 {"compare_keyword", e.compare_keyword}, {"python_type", e.python_type}});
    if (e.kind == OptionKind::on_off) j.back()["off_flag"] = cli_off_flag(e), j.back()["help_off"] = e.help_off;
  }
  return j;
}

}  // namespace tilewave
