#include "tilewave/exec_options.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tilewave/error.h"
#include "tilewave/lowering.h"
#include "tilewave/schedule.h"

namespace tilewave {

namespace {

// "a, b or c", as help text lists values.
std::string or_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

// --runtime's help, from the registry of runtimes: "eager (PyTorch eager), …;
// eager-folded reprints …" (the historical ones after the semicolon).
std::string runtime_help() {
  std::vector<std::string> current, historical;
  for (const RuntimeProfile* r : builtin_runtimes()) {
    if (r->historical()) historical.push_back(fmt::format("{} {}", r->name(), r->help()));
    else current.push_back(fmt::format("{} ({})", r->name(), r->help()));
  }
  std::string help = "what runs the model: " + or_list(current);
  for (const auto& h : historical) help += "; " + h;
  return help;
}

std::vector<ExecOption> build_table() {
  const std::string runtimes_default = "the runtime's (docs/model.md \"Execution configuration\")";
  const std::vector<std::string> but_nas = {"analyze", "layers", "rank",     "sweep", "report",
                                            "compare", "annotate", "advise", "check"};
  return {
      {"gpu", OptionKind::text, {}, "\"h200\"", "", "GPU id (a file stem in the database) or path to a GPU .json", "",
       "", {}, "gpus", "_Path"},
      {"gpu_dir", OptionKind::text, {}, "None", "$TILEWAVE_GPU_DIR or the bundled database",
       "GPU database directory (default: $TILEWAVE_GPU_DIR or the bundled one)", "", "", {}, "", "Optional[_Path]"},
      {"runtime", OptionKind::choice, runtime_names(), "\"eager\"", "", runtime_help(), "", "runtime", {},
       "runtimes", "str"},
      {"dtype", OptionKind::choice, {"fp32", "tf32", "fp16", "bf16", "int8"}, "\"fp16\"", "",
       "precision: fp32, tf32, fp16, bf16, int8", "", "dtype", {}, "dtypes", "str"},
      {"attention", OptionKind::choice, {"fused", "unfused"}, "\"fused\"", "",
       "fused: attention written as MatMul-Softmax-MatMul is one flash-attention kernel, as PyTorch's "
       "scaled_dot_product_attention runs it; unfused: separate kernels, for models that compute it by hand",
       "", "attention", {}, "", "str"},
      {"layout", OptionKind::choice, {"nchw", "nhwc"}, "None", runtimes_default,
       "activation layout: nchw (PyTorch's default, and the default) or nhwc (channels_last)", "", "layout", {},
       "layouts", "Optional[str]"},
      {"amp", OptionKind::on_off, {}, "None", runtimes_default,
       "fp32 weights under torch.autocast(--dtype), as timm's benchmark.py runs them (the default for eager and "
       "inductor at fp16 or bf16)",
       "weights stored in --dtype (model.half()); the default for tensorrt and at fp32, tf32 or int8", "amp", {}, "",
       "Optional[bool]"},
      {"graph", OptionKind::on_off, {}, "None", runtimes_default, "the forward replayed as a CUDA graph (tensorrt's default)",
       "a plain Python loop, each op issued by the host (eager's and inductor's default)", "launch", {}, "",
       "Optional[bool]"},
      {"host", OptionKind::text, {}, "None", default_host_id(),
       std::string("the machine issuing a --no-graph loop, the same for every GPU: a host id in gpu_models/hosts/, a "
                   ".json, or builtin (uncalibrated starting values); default: ") +
           default_host_id(),
       "", "", {}, "", "Optional[_Path]"},
      {"input", OptionKind::shapes, {}, "None", "the file's shapes",
       "set a whole input shape, NAME=1x3x224x224 (repeatable)", "", "", but_nas, "", "Optional[Dict[str, Sequence[int]]]"},
      {"allow_unmodelled", OptionKind::flag, {}, "False", "an error",
       "give totals marked partial when kernels cannot be modelled, instead of exit 1", "", "", but_nas, "", "bool"},
  };
}

// The option as `o` spells it: "--gpu-dir" on the CLI, "gpu_dir" in Python.
std::string spelled(const RunOptions& o, const ExecOption& e) {
  return o.option_prefix.empty() ? e.keyword : cli_flag(e);
}

std::string text_value(const RunOptions& o, const ExecOption& e, const nlohmann::json& v) {
  if (!v.is_string()) throw InputError(spelled(o, e), fmt::format("a string is expected, not {}", v.dump()));
  const std::string s = v.get<std::string>();
  if (e.kind == OptionKind::choice && std::find(e.choices.begin(), e.choices.end(), s) == e.choices.end())
    throw InputError(spelled(o, e), fmt::format("unknown {} '{}' ({})", e.keyword, s, or_list(e.choices)));
  return s;
}

// A compare axis: a list of strings, or one string of comma-separated values.
std::vector<std::string> axis_values(const RunOptions& o, const ExecOption& e, const nlohmann::json& v) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out = split_list(v.get<std::string>(), spelled(o, e));
  } else if (v.is_array()) {
    for (const auto& item : v) out.push_back(text_value(o, e, item));
  } else {
    throw InputError(spelled(o, e), fmt::format("a list of strings is expected, not {}", v.dump()));
  }
  for (const auto& s : out) text_value(o, e, s);
  if (out.empty()) throw UsageError(spelled(o, e), "names nothing");
  return out;
}

}  // namespace

namespace {
std::vector<ExecOption>& table_of_options() {
  static std::vector<ExecOption> table = build_table();
  return table;
}
}  // namespace

const std::vector<ExecOption>& execution_options() { return table_of_options(); }

void add_execution_option(ExecOption option) {
  std::vector<ExecOption>& table = table_of_options();
  for (const ExecOption& e : table)
    if (e.keyword == option.keyword) throw std::logic_error("execution option '" + option.keyword + "' exists already");
  if (option.kind == OptionKind::shapes || !option.compare_keyword.empty())
    throw std::logic_error("execution option '" + option.keyword + "': an added option is one value, not shapes or an axis");
  if (!option.apply && option.execution_key.empty())
    throw std::logic_error("execution option '" + option.keyword + "' sets nothing (no apply, no execution_key)");
  table.push_back(std::move(option));
}

const std::vector<std::string>& analysing_commands() {
  static const std::vector<std::string> commands = {"analyze", "layers", "rank",   "sweep", "report",
                                                    "compare", "annotate", "advise", "check", "nas"};
  return commands;
}

namespace {
// The list of `axes` that entry `e` (one with a compare_keyword) fills.
std::vector<std::string>& axis_of(CompareAxes& axes, const ExecOption& e) {
  if (e.keyword == "gpu") return axes.gpus;
  if (e.keyword == "runtime") return axes.runtimes;
  if (e.keyword == "dtype") return axes.dtypes;
  return axes.layouts;
}
}  // namespace

std::vector<std::string> compare_axis_default(const ExecOption& e) {
  CompareAxes defaults;
  return axis_of(defaults, e);
}

bool takes_option(const ExecOption& e, const std::string& command) {
  return e.commands.empty() || std::find(e.commands.begin(), e.commands.end(), command) != e.commands.end();
}

std::string cli_flag(const ExecOption& e) {
  std::string flag = "--" + e.keyword;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string cli_off_flag(const ExecOption& e) { return "--no-" + cli_flag(e).substr(2); }

void set_option(RunOptions& o, const ExecOption& e, const nlohmann::json& v) {
  if (v.is_null()) return;  // None: the default, as a flag not given
  const std::string& k = e.keyword;
  switch (e.kind) {
    case OptionKind::text:
    case OptionKind::choice: {
      const std::string s = text_value(o, e, v);
      if (e.apply) e.apply(o, s);
      else if (k == "gpu") o.gpu = s;
      else if (k == "gpu_dir") o.gpu_dir = s;
      else if (k == "host") o.host = s;
      else if (k == "runtime") o.runtime = s;
      else if (k == "dtype") o.dtype = s;
      else if (k == "attention") o.attention = s;
      else o.execution[e.execution_key] = s;
      return;
    }
    case OptionKind::on_off:
    case OptionKind::flag: {
      if (!v.is_boolean()) throw InputError(spelled(o, e), fmt::format("True or False is expected, not {}", v.dump()));
      const bool on = v.get<bool>();
      if (e.apply) e.apply(o, on);
      else if (k == "allow_unmodelled") o.allow_unmodelled = on;
      else if (e.execution_key == "launch") o.execution["launch"] = on ? "graph" : "loop";
      else o.execution[e.execution_key] = on;
      return;
    }
    case OptionKind::shapes: {
      if (v.is_array()) {  // the CLI's: NAME=1x3x224x224 each
        for (const auto& spec : v) {
          auto [name, dims] = parse_input_spec(spec.is_string() ? spec.get<std::string>() : spec.dump());
          o.input_shapes[name] = std::move(dims);  // the last given for a name wins
        }
        return;
      }
      if (!v.is_object())
        throw InputError(spelled(o, e), fmt::format("a dict of input names to shapes is expected, not {}", v.dump()));
      for (const auto& [name, dims] : v.items()) {
        std::vector<int64_t> shape;
        if (dims.is_array())
          for (const auto& d : dims)
            if (d.is_number_integer()) shape.push_back(d.get<int64_t>());
        if (!dims.is_array() || shape.size() != dims.size())
          throw InputError(spelled(o, e), fmt::format("input '{}': a shape is a list of ints, not {}", name, dims.dump()));
        o.input_shapes[name] = std::move(shape);  // the last given for a name wins
      }
      return;
    }
  }
}

void set_options(RunOptions& o, const nlohmann::json& values, const std::string& command, CompareAxes* axes) {
  for (const auto& [key, value] : values.items()) {
    const ExecOption* found = nullptr;
    bool as_axis = false;
    for (const ExecOption& e : execution_options()) {
      if (!takes_option(e, command)) continue;
      if (axes && !e.compare_keyword.empty()) {
        if (key == e.compare_keyword) found = &e, as_axis = true;
      } else if (key == e.keyword) {
        found = &e;
      }
    }
    if (!found) throw UsageError(o.option_prefix + key, fmt::format("{} takes no such option", command));
    if (!as_axis) {
      set_option(o, *found, value);
      continue;
    }
    if (value.is_null()) continue;
    axis_of(*axes, *found) = axis_values(o, *found, value);
  }
}

}  // namespace tilewave
