// A newcomer's extension, as docs/model.md "Extending tilewave" describes
// one: a toy execution option and a toy view added through the same calls a
// real one would use (add_execution_option, ViewRegistry::add), from this
// translation unit alone; the shipped tables are not edited.
#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "tilewave/exec_options.h"
#include "tilewave/report.h"
#include "tilewave/view_registry.h"
#include "toy_extension.h"

namespace tilewave::toy {

std::string& style() {
  static std::string chosen = "plain";
  return chosen;
}

namespace {

// A real option's value goes into RunOptions or the execution configuration
// (set_option), where a stage reads it; the toy's is kept here for its view.
void add_toy_option() {
  ExecOption option;
  option.keyword = "toy_style";
  option.kind = OptionKind::choice;
  option.choices = {"plain", "upper"};
  option.default_value = "\"plain\"";
  option.help = "how the toy-bounds view spells bounds: plain or upper (tests/newcomer)";
  option.commands = {"analyze"};
  option.python_type = "str";
  option.apply = [](RunOptions&, const nlohmann::json& value) { style() = value.get<std::string>(); };
  add_execution_option(std::move(option));
}

// A line per kernel bound, from the analysis's own grouping (Analysis::by_bound).
void add_toy_view() {
  ViewRegistry::global().add<AnalysisViewInput>(
      "analyze", "toy-bounds", "a line per kernel bound: kernels and time (tests/newcomer)",
      [](std::ostream& os, const AnalysisViewInput& in) {
        for (const KernelGroup& g : in.analysis.by_bound) {
          std::string name = g.name;
          if (style() == "upper")
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
          os << fmt::format("{} {} {:.3f}\n", name, g.kernels, g.time_us);
        }
      });
}

// At start-up, before the CLI builds its flags and formats from the tables.
const bool registered = [] {
  add_toy_option();
  add_toy_view();
  return true;
}();

}  // namespace

bool extension_registered() { return registered; }

}  // namespace tilewave::toy
