// The Python module `tilewave` (docs/python.md): the analyzer in-process, for
// architecture search written in Python. Every function returns the fields
// the CLI's JSON has; errors a user can cause raise tilewave.InputError (a
// ValueError) with the CLI's one-line message. Work runs without the GIL, so
// Python threads can score in parallel.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tilewave/advise.h"
#include "tilewave/analysis.h"
#include "tilewave/error.h"
#include "tilewave/exec_options.h"
#include "tilewave/html_report.h"
#include "tilewave/layer_list.h"
#include "tilewave/layer_set.h"
#include "tilewave/output_file.h"
#include "tilewave/gpu_file.h"
#include "tilewave/report.h"
#include "tilewave/run_options.h"
#include "tilewave/search.h"
#include "tilewave/space_cost.h"
#include "tilewave/json_input.h"
#include "tilewave/trace_check.h"
#include "tilewave/version.h"
#include "tilewave/view_registry.h"
#include "tilewave/kernel_names.h"
#include "tilewave/pipeline.h"
#include "tilewave_onnx.pb.h"

namespace py = pybind11;
using nlohmann::json;

namespace tilewave::python {

namespace {

// Values cross the boundary as JSON values converted node by node: one
// definition of every field (the CLI's JSON), no text in between.
// Names from input files are bytes: any that are not UTF-8 become U+FFFD, as
// in the CLI's JSON (docs/errors.md "Bytes and locales"), never a
// UnicodeDecodeError.
py::str text_of(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::object: {
      py::dict d;
      for (const auto& item : j.items()) d[text_of(item.key())] = to_python(item.value());
      return std::move(d);
    }
    case json::value_t::array: {
      py::list l(j.size());
      for (size_t i = 0; i < j.size(); ++i) l[i] = to_python(j[i]);
      return std::move(l);
    }
    case json::value_t::string: return text_of(j.get_ref<const std::string&>());
    case json::value_t::boolean: return py::bool_(j.get<bool>());
    case json::value_t::number_integer: return py::int_(j.get<int64_t>());
    case json::value_t::number_unsigned: return py::int_(j.get<uint64_t>());
    case json::value_t::number_float: return py::float_(j.get<double>());
    default: return py::none();
  }
}
json from_python(const py::handle& obj, const std::string& where, int depth = 0) {
  if (depth > 32) throw InputError(where, "nested more than 32 levels");
  if (obj.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(obj)) return obj.cast<bool>();
  if (py::isinstance<py::int_>(obj)) {
    try {
      return obj.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw InputError(where, "an integer beyond 64 bits");
    }
  }
  if (py::isinstance<py::float_>(obj)) {
    const double x = obj.cast<double>();
    if (!std::isfinite(x)) throw InputError(where, "a number that is not finite (nan or inf)");
    return x;
  }
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  if (py::isinstance<py::dict>(obj)) {
    json j = json::object();
    for (const auto& item : obj.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first)) throw InputError(where, "a dict key that is not a string");
      j[item.first.cast<std::string>()] = from_python(item.second, where, depth + 1);
    }
    return j;
  }
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    json j = json::array();
    for (const auto& e : obj) j.push_back(from_python(e, where, depth + 1));
    return j;
  }
  throw InputError(where, fmt::format("a {} where dicts, lists, strings and numbers are expected",
                                      py::str(py::type::of(obj).attr("__name__")).cast<std::string>()));
}

// Paths: str or any os.PathLike (pybind11 calls os.fspath). A GPU or host is
// an id or a path, so either.
using PathArg = std::filesystem::path;

// An output argument as write_output takes it. In Python "" names no file
// (write_output would read it as stdout and put bytes on the interpreter's).
std::string output_file(const PathArg& p, const char* what = "output") {
  if (p.empty()) throw UsageError(what, "an empty path names no file");
  return p.string();
}
using IdOrPath = std::variant<std::string, PathArg>;

std::string text_of(const IdOrPath& v) {
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::get<PathArg>(v).string();
}

// None: as in the file, the CLI's --batch not given; 0 is not a batch.
int64_t batch_of(std::optional<int64_t> batch) {
  if (batch && *batch < 1) throw InputError("batch", fmt::format("batch must be positive, not {}", *batch));
  return batch.value_or(0);
}

// The option table's keywords (exec_options.h) as `command` takes them,
// each checked and set through the table as the CLI's flags are: RunOptions
// is what both hand the library (run_options.h), so that equal options are
// equal analyses. A keyword not given (or None) keeps the default, as a flag
// not given does. compare's axes go into `axes`.
RunOptions keyword_options(const py::kwargs& keywords, const std::string& command, const std::string& function,
                           CompareAxes* axes = nullptr) {
  RunOptions o;
  o.option_prefix = "";  // errors name the keyword: "batch: ...", not "--batch: ..."
  json values = json::object();
  for (const auto& [key, value] : keywords) {
    const std::string name = key.cast<std::string>();
    bool known = false;
    for (const ExecOption& e : execution_options())
      if (takes_option(e, command) && name == (axes && !e.compare_keyword.empty() ? e.compare_keyword : e.keyword))
        known = true;
    // As Python words a keyword a function lacks.
    if (!known) throw py::type_error(fmt::format("{}() got an unexpected keyword argument '{}'", function, name));
    // A GPU, host or folder may be any os.PathLike.
    const bool path = py::hasattr(value, "__fspath__");
    values[name] = from_python(path ? py::module_::import("os").attr("fspath")(value) : py::reinterpret_borrow<py::object>(value), name);
  }
  set_options(o, values, command, axes);
  return o;
}

// The keywords of the option table `command` takes, for a docstring: "gpu="h200", ...".
std::string keywords_doc(const std::string& command, bool axes = false) {
  std::vector<std::string> out;
  for (const ExecOption& e : execution_options())
    if (takes_option(e, command))
      out.push_back(axes && !e.compare_keyword.empty() ? e.compare_keyword + "=[...]" : e.keyword + "=" + e.default_value);
  return fmt::format(" Execution options (tilewave.execution_options(), docs/python.md): {}.", fmt::join(out, ", "));
}

// Binds fn(first, RunOptions, extra...) as name(<leading>, **<execution options>),
// `leading` naming first and extra (positional ones, py::kw_only(), then
// keyword ones): the option table's keywords for every function that analyses.
template <class First, class... Extra, class Fn, class... Leading>
void def_with_execution_options(py::module_& m, const char* name, const char* command, Fn fn, const char* doc,
                             Leading... leading) {
  auto bound = [fn, name, command](First first, Extra... extra, const py::kwargs& keywords) {
    return fn(first, keyword_options(keywords, command, name), extra...);
  };
  m.def(name, bound, leading..., (doc + keywords_doc(command)).c_str());  // pybind copies the text
}

// name(path, *, extra..., **<execution options>) calling fn(path as text, RunOptions, extra...).
template <class... Extra, class Fn, class... ExtraKeywords>
void def_model_function(py::module_& m, const char* name, const char* command, Fn fn, const char* doc,
                        ExtraKeywords... extra_keywords) {
  def_with_execution_options<const PathArg&, Extra...>(
      m, name, command, [fn](const PathArg& path, RunOptions o, Extra... extra) { return fn(path.string(), std::move(o), extra...); },
      doc, py::arg("path"), py::kw_only(), extra_keywords...);
}

// As the CLI refuses an -o naming one of its arguments (cli/driver.cpp): the
// files a call reads, its options' included.
void refuse_over_inputs(const std::string& output, std::vector<std::string> inputs, const RunOptions& o) {
  inputs.push_back(o.gpu);
  inputs.push_back(o.host);
  refuse_output_over_input(output, inputs);
}

// A *_text function's format, refused before any work as the CLI's parser
// refuses it: the command's views (view_registry.h) name the formats.
void require_format(const std::string& command, const std::string& format) {
  ViewRegistry::global().find(command, format, "format");
}

// rank's models analysed, threads checked as the CLI checks them; the dict and the text forms share it.
RankRun run_rank(const std::vector<PathArg>& paths, const RunOptions& o, std::optional<int> threads, bool keep_going) {
  if (threads && (*threads < 1 || *threads > 1024))
    throw InputError("threads", fmt::format("threads is 1..1024, not {}", *threads));
  std::vector<std::string> args;
  for (const auto& p : paths) args.push_back(p.string());
  RankRun run = analyze_models(args, o, threads.value_or(int(std::max(1u, std::thread::hardware_concurrency()))));
  // As the CLI: the first failure's line, then what its last line says.
  if (!keep_going && !run.failed.empty())
    throw InputError(run.failed.front().model_path,
                     fmt::format("{} ({})", run.failed.front().reason, rank_failures_summary(run, o)));
  return run;
}

// Runs `work`, which writes a command's text, without the GIL; the text.
template <class Work>
std::string text_of(Work work) {
  std::ostringstream text;
  {
    py::gil_scoped_release release;
    work(text);
  }
  return text.str();
}

// Runs `work`, which returns a result's JSON, without the GIL; the JSON as a dict.
template <class Work>
py::dict json_dict(Work work) {
  json j;
  {
    py::gil_scoped_release release;
    j = work();
  }
  return py::dict(to_python(j));
}

// As `tilewave analyze`: an incomplete model is an error unless partial answers are allowed.
py::dict analysis_result(const Analysis& a, const RunOptions& o) {
  require_complete(a, o);
  json j = analysis_to_json(a);
  j["notes"] = a.notes;
  return py::dict(to_python(j));
}

space::Shape4 input_shape(int64_t batch, const std::vector<int64_t>& chw) {
  if (chw.size() != 3 || chw[0] < 1 || chw[1] < 1 || chw[2] < 1 || chw[0] > (1 << 20) || chw[1] > (1 << 20) ||
      chw[2] > (1 << 20))
    throw InputError("input", "input must be (channels, height, width), each 1..2^20");
  return {batch, chw[0], chw[1], chw[2]};
}

Model model_from_layers(const py::handle& layers, int64_t batch, const std::vector<int64_t>& input,
                        const LoadOptions& load) {
  const json list = from_python(layers, "layers");
  const space::WrittenModel written = space::network_from_layers(list, input_shape(batch, input), "layers");
  return load_onnx_proto(written.proto, "layers", load);
}

// A name is a shipped space; a PathLike, or text with '/' or ending in .json, is a file.
std::string space_file(const IdOrPath& name_or_path) {
  namespace fs = std::filesystem;
  if (std::holds_alternative<PathArg>(name_or_path)) return std::get<PathArg>(name_or_path).string();
  const std::string& name = std::get<std::string>(name_or_path);
  if (name.find('/') != std::string::npos || fs::path(name).extension() == ".json") return name;
  return (fs::path(default_space_dir()) / (name + ".json")).string();
}

// A search space with a scorer for one target; keeps the evaluator's block table across calls.
class Space {
 public:
  explicit Space(const IdOrPath& name_or_path) : space_(space::load_space(space_file(name_or_path))) {}
  const space::SearchSpace& get() const { return space_; }
  // `nas --seed SEED [--unique]`'s candidate INDEX, and its first n: the
  // library's Sampler, whose permutation gives candidate i from (seed, i) alone.
  std::string sample(uint64_t seed, uint64_t index, bool unique) const {
    if (!unique) return space::encode(space_, space::sample(space_, seed, index));
    // As many samples as reach INDEX (saturated: the Sampler refuses more than the space holds).
    const uint64_t reach = index == UINT64_MAX ? index : index + 1;
    return draw(space::Sampler(space_, space::Sampling::unique, seed, reach), index, 1).front();
  }
  // A list in memory has a budget (docs/errors.md "Budgets").
  static constexpr uint64_t kMaxListed = 1'000'000;
  std::vector<std::string> samples(uint64_t n, uint64_t seed, bool unique) const {
    if (n == 0) return {};
    if (n > kMaxListed)
      throw InputError(space_.source_file, fmt::format("{} samples are more than a list holds ({}); use "
                                                       "`tilewave nas --samples N -o FILE`", n, kMaxListed));
    const auto mode = unique ? space::Sampling::unique : space::Sampling::replacement;
    return draw(space::Sampler(space_, mode, seed, n), 0, n);
  }
  // `nas --enumerate`: every candidate once, in the file's order.
  // Past the budget, the CLI's `nas --enumerate -o FILE` streams the candidates instead.
  std::vector<std::string> enumerate() const {
    const space::Sampler all(space_, space::Sampling::enumerate, 0, 0);
    if (all.total() > kMaxListed)
      throw InputError(space_.source_file, fmt::format("holds {} candidates, more than enumerate() lists ({}); use "
                                                       "samples(), or `tilewave nas --enumerate -o FILE`",
                                                       all.total(), kMaxListed));
    return draw(all, 0, all.total());
  }
  // Each stage's choices as {name: [option texts as encodings write them]}.
  py::list options() const {
    py::list stages;
    for (const auto& st : space_.stages) {
      py::dict d;
      for (const auto& c : st.choices) d[py::str(c.name)] = c.texts;
      stages.append(d);
    }
    return stages;
  }
  // The product of the option counts, exactly: SearchSpace::size() is a double capped at 1e300.
  py::int_ size() const {
    py::object n = py::int_(1);
    for (const auto& st : space_.stages)
      for (const auto& c : st.choices) n = n * py::int_(c.options.size());
    return n;
  }
  void export_onnx(const std::string& encoding, const PathArg& path, int64_t batch) const {
    space::export_candidate(space_, encoding, batch, output_file(path, "path"));  // as `nas --export-onnx` writes it
  }

 private:
  std::vector<std::string> draw(const space::Sampler& sampler, uint64_t first, uint64_t count) const {
    py::gil_scoped_release release;
    return space::draw_encodings(space_, sampler, first, count);  // as `nas` draws them (search.h)
  }
  space::SearchSpace space_;
};

class Scorer {
 public:
  // `nas` builds its space::Search from the same RunOptions (nas_commands.cpp).
  Scorer(std::shared_ptr<Space> space, const RunOptions& o, int64_t batch) : space_(std::move(space)) {
    if (batch < 1) throw InputError("batch", fmt::format("batch must be positive, not {}", batch));
    const ExecutionConfig exec = execution_of(o);
    first_ = std::make_unique<space::SpaceEvaluator>(space_->get(), gpu_of(o), exec, host_of(o, exec), batch);
  }
  py::object score(const std::string& encoding) {
    space::CandidateCost cost;
    {
      py::gil_scoped_release release;
      const space::Candidate c = space::decode(space_->get(), encoding);
      Lease lease(*this);
      cost = lease->evaluate(c);
    }
    return row(cost, encoding);
  }
  py::object score_many(const std::vector<std::string>& encodings) {
    std::vector<space::CandidateCost> costs(encodings.size());
    {
      py::gil_scoped_release release;
      Lease lease(*this);
      for (size_t i = 0; i < encodings.size(); ++i) costs[i] = lease->evaluate(space::decode(space_->get(), encodings[i]));
    }
    py::list rows(encodings.size());
    for (size_t i = 0; i < encodings.size(); ++i) rows[i] = row(costs[i], encodings[i]);
    return std::move(rows);
  }
  size_t distinct_blocks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t most = first_->distinct_blocks();
    for (const auto& e : evaluators_) most = std::max(most, e->distinct_blocks());
    return most;
  }

 private:
  // A SpaceEvaluator memoises into tables of its own, so that one may serve
  // one thread at a time (issue 20: 8 threads on one evaluator read each
  // other's half-written entries). Each call borrows an idle one, or a new
  // sibling sharing the costed blocks, and gives it back: threads sharing a
  // Scorer score in parallel with one thread's answers.
  class Lease {
   public:
    explicit Lease(Scorer& s) : scorer_(s) {
      std::lock_guard<std::mutex> lock(s.mutex_);
      if (s.evaluators_.empty()) {
        evaluator_ = s.first_->sibling();
      } else {
        evaluator_ = std::move(s.evaluators_.back());
        s.evaluators_.pop_back();
      }
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(scorer_.mutex_);
      scorer_.evaluators_.push_back(std::move(evaluator_));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    space::SpaceEvaluator* operator->() { return evaluator_.get(); }

   private:
    Scorer& scorer_;
    std::unique_ptr<space::SpaceEvaluator> evaluator_;
  };
  static py::object row(const space::CandidateCost& cost, const std::string& encoding) {
    json j = candidate_to_json(cost, true);
    j["encoding"] = encoding;
    return to_python(j);
  }
  std::shared_ptr<Space> space_;  // the evaluators refer to it
  std::unique_ptr<space::SpaceEvaluator> first_;  // never scores: siblings are made from it
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<space::SpaceEvaluator>> evaluators_;  // idle ones
};

}  // namespace
}  // namespace tilewave::python

using namespace tilewave;
using namespace tilewave::python;

PYBIND11_MODULE(tilewave, m) {
  m.doc() = "tilewave: predicts how well a neural network uses a GPU (tile, wave and roofline model). "
            "Each function equals a CLI command with the same options (docs/python.md).";
  m.attr("__version__") = version();  // what `tilewave --version` prints after "tilewave "
  // The prediction interval's coverage (PredictionInterval::coverage): the quantiles calibrate/fit/intervals.py fits.
  m.attr("interval_coverage") = PredictionInterval::coverage;
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  input_error.attr("__doc__") = "Bad input a user can fix (a file, an option, an encoding): a ValueError whose message "
                                "is the CLI's one error line, naming the file or option and the problem.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      input_error(e.what());
    } catch (const std::invalid_argument& e) {  // layer dicts: layer_from_json names the field
      input_error(e.what());
    }
  });
  // Declared before the functions that return them, so that signatures name
  // them tilewave.Space and tilewave.Scorer rather than their C++ types.
  py::class_<Space, std::shared_ptr<Space>> space_class(
      m, "Space", "A search space (docs/nas.md), by shipped name (\"mobilenetv2\") or file path (str or os.PathLike).");
  py::class_<Scorer> scorer_class(
      m, "Scorer",
      "Scores encodings of one space on one target, as `tilewave nas` rows; made by Space.scorer(). Keeps its "
      "table of costed blocks between calls, and may be shared by threads.");

  def_model_function<std::optional<int64_t>>(
      m, "analyze", "analyze",
      [](const std::string& path, RunOptions o, std::optional<int64_t> batch) {
        o.batch = batch_of(batch);
        Analysis a;
        {
          py::gil_scoped_release release;
          a = analyze_file(path, resolve_target(o));
        }
        return analysis_result(a, o);
      },
      "`tilewave analyze PATH --format json` with the same options: batch None is the file's (--batch not given), "
      "input={name: shape} is --input NAME=AxBxC, graph is --graph/--no-graph; None keeps the runtime's default. "
      "Returns that JSON document as a dict plus 'notes': model, model_path, gpu, gpu_name, gpu_trust, "
      "gpu_param_sources, peak_tflops, batch, dtype, runtime, runtime_calibrated, execution, host, launch_gap_us, "
      "nodes, free_nodes, total (flops, bytes, time_us, gpu_busy_us, host_busy_us, bound_by, utilization, "
      "gpu_busy_utilization, dram_bytes, l2_hit_bytes, bandwidth_utilization, throughput_per_s, kernels, loss), "
      "interval (the 80% prediction interval: coverage, regime, network_class, measured, basis, low_factor, high_factor, "
      "low_us, high_us, why_none; docs/model.md), unmodelled, partial, node_fates, by_op, by_name (the --by op and --by name summaries), memory, "
      "schedule (both timelines), layers (one per kernel, docs/report.md), notes (assumptions made while loading), "
      "tilewave_version (what `tilewave --version` prints).",
      py::arg("batch") = py::none());

  def_model_function<std::optional<int64_t>, const std::string&, int, const std::string&>(
      m, "analyze_text", "analyze",
      [](const std::string& path, RunOptions o, std::optional<int64_t> batch, const std::string& format, int top,
         const std::string& by) {
        o.batch = batch_of(batch);
        require_format("analyze", format);
        // The CLI's --top and --by, checked as its parser checks them.
        if (top < 0) throw InputError("top", fmt::format("top counts table rows: 0 or more, not {}", top));
        const auto& kinds = table_summaries();
        if (!by.empty() && std::find(kinds.begin(), kinds.end(), by) == kinds.end())
          throw InputError("by", fmt::format("unknown summary '{}' ({})", by, fmt::join(kinds, ", ")));
        std::ostringstream text;
        {
          py::gil_scoped_release release;
          const Analysis a = analyze_file(path, resolve_target(o));
          require_complete(a, o);
          ViewRegistry::global().write(text, "analyze", format, AnalysisViewInput{a, ViewOptions{top, by}});
        }
        return text.str();
      },
      "The text `tilewave analyze PATH --format FORMAT --top TOP --by BY` prints (csv, json or table), for files: "
      "open('r.csv', 'w').write(tilewave.analyze_text(path)). top (the slowest kernels shown) and by (the summary: "
      "op, name, node or kernel; default op for the table, kernel for CSV) shape the table, and by the CSV's rows, as "
      "on the CLI.",
      py::arg("batch") = py::none(), py::arg("format") = "csv", py::arg("top") = ViewOptions{}.worst_layers,
      py::arg("by") = ViewOptions{}.by);

  def_model_function<const std::vector<int64_t>&>(
      m, "sweep", "sweep",
      [](const std::string& path, RunOptions o, const std::vector<int64_t>& batches) {
        std::vector<Analysis> as;
        {
          py::gil_scoped_release release;
          as = analyze_batches(ModelFile(path), o, batches);
          for (const auto& a : as) require_complete(a, o);
        }
        return py::dict(to_python(sweep_to_json(as)));
      },
      "`tilewave sweep PATH --batch 1,2,... --format json`: {'model', 'gpu', 'points': [{'batch', the totals "
      "as analyze()'s 'total' has them, 'host_bound'}, ...]}, one point per batch in the order given.",
      py::arg("batches") = default_sweep_batches());

  m.def(
      "compare",
      [](const std::variant<PathArg, std::vector<PathArg>>& paths, const std::optional<std::vector<int64_t>>& batches,
         const py::kwargs& keywords) {
        // GPU, runtime, dtype and layout: lists, each combination sets its own.
        CompareAxes axes;
        const RunOptions o = keyword_options(keywords, "compare", "compare", &axes);
        if (batches) axes.batches = *batches;
        std::vector<std::string> models;
        if (const auto* one = std::get_if<PathArg>(&paths)) models.push_back(one->string());
        else
          for (const auto& p : std::get<std::vector<PathArg>>(paths)) models.push_back(p.string());
        if (models.empty()) throw UsageError("path", "names no model (give a path or a list of paths)");
        CompareRun run;
        {
          py::gil_scoped_release release;
          run = compare_models(models, o, axes, [&](const Analysis& a, size_t) { require_complete(a, o); });
        }
        return py::dict(to_python(compare_to_json(run.analyses, run.networks ? &*run.networks : nullptr)));
      },
      py::arg("path"), py::kw_only(), py::arg("batches") = py::none(),
      std::string("`tilewave compare PATH... --gpu A,B --runtime ... --format json`: every combination of the lists (GPUs outermost, "
      "batches innermost) for a path or a list of paths; batches None is the file's, layouts None each "
      "runtime's default; gpus, runtimes, dtypes and layouts are lists (or a,b,c), the other execution options one "
      "value for every combination. Returns the CLI's JSON: {'configurations': [{'model', run facts and 'total' as analyze() "
      "has them, 'gpu_trust'}, ...], 'models'}, and for two models in one configuration 'faster' (which is faster, "
      "and by how much) and 'findings' (why)." +
          keywords_doc("compare", true)).c_str());

  def_model_function<std::optional<int64_t>>(
      m, "advise", "advise",
      [](const std::string& path, RunOptions o, std::optional<int64_t> batch) {
        o.batch = batch_of(batch);
        return json_dict([&] {
          const AdviseRun run = advise_file(path, o, [&](const Analysis& a) { require_complete(a, o); });
          return advice_to_json(run.analysis, run.advice);
        });
      },
      "`tilewave advise PATH --format json`: changes (padded channels, another batch, runtime or dtype, a CUDA "
      "graph), each predicted by analysing the changed model, best first, never one predicted slower. Returns "
      "{'model', 'gpu', 'batch', 'dtype', 'runtime', 'execution', 'advice': [{'kind', 'change', 'detail', 'gain', "
      "'before', 'after'}, ...]}, before and after each the totals as analyze()'s "
      "'total' has them.",
      py::arg("batch") = py::none());

  def_with_execution_options<const PathArg&, const PathArg&, std::optional<int64_t>>(
      m, "check", "check",
      [](const PathArg& path, RunOptions o, const PathArg& trace, std::optional<int64_t> batch) {
        o.batch = batch_of(batch);
        return json_dict([&] {
          const CheckRun run = check_file(path.string(), trace.string(), o, [&](const Analysis& a) { require_complete(a, o); });
          return check_to_json(run.analysis, run.trace, run.check);
        });
      },
      "`tilewave check PATH --trace TRACE --format json`: the prediction held against a measured PyTorch profiler "
      "trace (Chrome trace JSON, plain or gzip), kernels paired in launch order. Returns {'model', 'gpu', 'batch', "
      "'dtype', 'runtime', 'execution', 'trace', 'measured_kernels', 'profiler_step', 'profiler_steps', "
      "'kernels_in_trace', 'measured_kernel_us', 'predicted_kernel_us', 'paired', 'median_abs_error', "
      "'shape_compared', 'shape_matched', 'by_kind': [{'kind', 'pairs', 'predicted_us', 'measured_us'}, ...], "
      "'by_class': [{'class', 'measured', 'measured_us', 'measured_share', 'predicted', 'predicted_us', 'paired', "
      "'paired_measured_us', 'paired_predicted_us', 'paired_error', 'same_class_paired', 'same_class_measured_us', "
      "'same_class_predicted_us', 'same_class_error', 'missing', 'missing_us', 'extra', 'extra_us'}, "
      "...], 'pairs': [{'predicted_us', 'measured_us', and where known 'shape_match', 'predicted', 'predicted_op', "
      "'predicted_kind', 'predicted_class', 'measured', 'measured_kind', 'measured_class'}, ...]}. The trace may "
      "also be a kernel list, {'list': [[name, us], ...]} (a calibrate/measure/run.py kernels.jsonl row).",
      py::arg("path"), py::arg("trace"), py::kw_only(), py::arg("batch") = py::none());

  def_with_execution_options<const std::vector<PathArg>&, int64_t, std::optional<int>, bool>(
      m, "rank", "rank",
      [](const std::vector<PathArg>& paths, RunOptions o, int64_t batch, std::optional<int> threads, bool keep_going) {
        o.batch = batch_of(batch);
        return json_dict([&] {
          const RankRun run = run_rank(paths, o, threads, keep_going);
          return rank_to_json(run.analyses, rank_models(run.analyses), run.failed);
        });
      },
      "`tilewave rank PATHS... --format json`: models (files, folders of them, list files) ordered by predicted "
      "latency beside their FLOPs order, at batch 1 unless given (rank's default: files declare different "
      "batches), threads models at once (None: the cores). A model that cannot be analysed is an InputError, "
      "or with keep_going=True a 'failed' row. "
      "Returns {'gpu', 'gpu_trust', 'batch', 'models': [{'model', 'model_path', the totals as "
      "analyze()'s 'total' has them, 'unmodelled', 'partial'}, ...] (fastest first), 'failed': [{'model', "
      "'error'}, ...], 'kendall_tau_flops_vs_predicted', 'host_bound_models', 'notes'}.",
      py::arg("paths"), py::kw_only(), py::arg("batch") = 1, py::arg("threads") = py::none(),
      py::arg("keep_going") = false);

  // The text forms: the CLI's output of the same command, as analyze_text is analyze's.
  def_model_function<std::optional<int64_t>, const std::string&>(
      m, "advise_text", "advise",
      [](const std::string& path, RunOptions o, std::optional<int64_t> batch, const std::string& format) {
        o.batch = batch_of(batch);
        require_format("advise", format);
        return text_of([&](std::ostream& os) {
          const AdviseRun run = advise_file(path, o, [&](const Analysis& a) { require_complete(a, o); });
          ViewRegistry::global().write(os, "advise", format, AdviceViewInput{run.analysis, run.advice});
        });
      },
      "The text `tilewave advise PATH --format FORMAT` prints (table or json).", py::arg("batch") = py::none(),
      py::arg("format") = "table");

  def_with_execution_options<const PathArg&, const PathArg&, std::optional<int64_t>, const std::string&, int>(
      m, "check_text", "check",
      [](const PathArg& path, RunOptions o, const PathArg& trace, std::optional<int64_t> batch,
         const std::string& format, int top) {
        o.batch = batch_of(batch);
        require_format("check", format);
        if (top < 0) throw InputError("top", fmt::format("top counts table rows: 0 or more, not {}", top));
        return text_of([&](std::ostream& os) {
          const CheckRun run = check_file(path.string(), trace.string(), o, [&](const Analysis& a) { require_complete(a, o); });
          ViewRegistry::global().write(os, "check", format, CheckViewInput{run.analysis, run.trace, run.check, top});
        });
      },
      "The text `tilewave check PATH --trace TRACE --format FORMAT --top TOP` prints (table or json; top: the pairs "
      "furthest apart the table lists).",
      py::arg("path"), py::arg("trace"), py::kw_only(), py::arg("batch") = py::none(), py::arg("format") = "table",
      py::arg("top") = ViewOptions{}.worst_layers);

  def_with_execution_options<const std::vector<PathArg>&, int64_t, std::optional<int>, const std::string&, bool>(
      m, "rank_text", "rank",
      [](const std::vector<PathArg>& paths, RunOptions o, int64_t batch, std::optional<int> threads,
         const std::string& format, bool keep_going) {
        o.batch = batch_of(batch);
        require_format("rank", format);
        return text_of([&](std::ostream& os) {
          const RankRun run = run_rank(paths, o, threads, keep_going);
          const Ranking ranking = rank_models(run.analyses);
          ViewRegistry::global().write(os, "rank", format, RankViewInput{run.analyses, ranking, run.failed});
        });
      },
      "The text `tilewave rank PATHS... --format FORMAT [--keep-going]` prints (table, json or csv).",
      py::arg("paths"), py::kw_only(), py::arg("batch") = 1, py::arg("threads") = py::none(),
      py::arg("format") = "table", py::arg("keep_going") = false);

  def_with_execution_options<const PathArg&, const PathArg&, std::optional<int64_t>, const std::optional<PathArg>&,
                          const std::vector<std::string>&, const std::vector<int64_t>&>(
      m, "report", "report",
      [](const PathArg& path, RunOptions o, const PathArg& output, std::optional<int64_t> batch,
         const std::optional<PathArg>& vs, const std::vector<std::string>& compare, const std::vector<int64_t>& batches) {
        o.batch = batch_of(batch);
        const std::string vs_path = vs ? vs->string() : std::string();
        refuse_over_inputs(output.string(), {path.string(), vs_path}, o);
        py::gil_scoped_release release;
        const ReportRun run = analyze_for_report(path.string(), vs_path, o, batches, compare);
        write_output(output_file(output), [&](std::ostream& os) { write_html(os, run); });
      },
      "`tilewave report PATH -o OUTPUT`: writes the self-contained HTML report (docs/report.md), whole or not at "
      "all, never over one of its inputs. vs is `--vs`: a second network side by side; compare is `--compare`: "
      "GPU ids also costed (a gpu 'h200,a100' list compares its rest too); batches are the batch chart's.",
      py::arg("path"), py::arg("output"), py::kw_only(), py::arg("batch") = py::none(), py::arg("vs") = py::none(),
      py::arg("compare") = std::vector<std::string>{}, py::arg("batches") = default_sweep_batches());

  def_with_execution_options<const PathArg&, const PathArg&, std::optional<int64_t>>(
      m, "annotate", "annotate",
      [](const PathArg& path, RunOptions o, const PathArg& output, std::optional<int64_t> batch) {
        o.batch = batch_of(batch);
        refuse_over_inputs(output.string(), {path.string()}, o);
        py::gil_scoped_release release;
        const Analysis a = analyze_file(path.string(), resolve_target(o));
        require_complete(a, o);
        const std::string bytes = annotated_onnx(path.string(), a, output.string());
        write_output(output_file(output), [&](std::ostream& os) { os << bytes; });
      },
      "`tilewave annotate PATH -o OUTPUT`: writes the model with each node's prediction in its metadata_props "
      "(tilewave.time_us, tilewave.utilization, ...) and a line of its doc string (Netron shows both), whole or "
      "not at all, never over one of its inputs.",
      py::arg("path"), py::arg("output"), py::kw_only(), py::arg("batch") = py::none());

  m.def(
      "analyze_layers",
      [](const py::object& layers, const std::vector<int64_t>& input, int64_t batch, const py::kwargs& keywords) {
        // input is the image's (channels, height, width) here, not the table's input shapes.
        RunOptions o = keyword_options(keywords, "analyze_layers", "analyze_layers");
        o.batch = batch_of(batch);
        const Target target = resolve_target(o);
        const Model model = model_from_layers(layers, batch, input, target.options.load);
        Analysis a;
        {
          py::gil_scoped_release release;
          a = analyze_model(model, target.gpu, target.options);
        }
        return analysis_result(a, o);
      },
      py::arg("layers"), py::kw_only(), py::arg("input") = std::vector<int64_t>{3, 224, 224}, py::arg("batch") = 1,
      std::string("Analyses a network given as a list of layer dicts (docs/python.md 'Layer lists'), without files; "
      "input is its (channels, height, width). Returns the same dict as analyze()." +
          keywords_doc("analyze_layers")).c_str());

  m.def(
      "layers_to_onnx",
      [](const py::object& layers, const PathArg& path, const std::vector<int64_t>& input, int64_t batch) {
        const json list = from_python(layers, "layers");
        const auto written = space::network_from_layers(list, input_shape(batch_of(batch), input), "layers");
        write_output(output_file(path, "path"), [&](std::ostream& os) { os << written.proto->SerializeAsString(); });
        return written.params;
      },
      py::arg("layers"), py::arg("path"), py::kw_only(), py::arg("input") = std::vector<int64_t>{3, 224, 224},
      py::arg("batch") = 1,
      "Writes a layer list as the ONNX graph tilewave costs for it (weights as shapes only); returns its "
      "parameter count.");

  m.def(
      "predict_layers",
      [](const py::object& layers, const IdOrPath& gpu, const std::optional<PathArg>& gpu_dir) {
        const json list = from_python(layers, "layers");
        if (!list.is_array()) throw InputError("layers", "predict_layers takes a list of layer dicts");
        const GpuModel g = load_gpu(text_of(gpu), gpu_dir ? gpu_dir->string() : default_gpu_dir());
        const CostModel cost_model(g);
        json out = json::array();
        {
          py::gil_scoped_release release;
          for (size_t i = 0; i < list.size(); ++i) {
            Layer layer;
            int64_t hits = 0;
            try {
              layer = layer_from_json(list[i]);
              hits = l2_hit_bytes_from_json(list[i], layer);
            } catch (const std::invalid_argument& e) {
              throw InputError(fmt::format("layers[{}]", i), e.what());
            }
            json row = list[i];
            row.update(cost_to_json(cost_layer(layer, cost_model, double(hits)), true));
            out.push_back(std::move(row));
          }
        }
        return to_python(out);
      },
      py::arg("layers"), py::kw_only(), py::arg("gpu") = "h200", py::arg("gpu_dir") = py::none(),
      "Costs kernel problems in the layer-set form (docs/layerset.md), each alone as `tilewave layers` does; "
      "returns each dict with the prediction's fields added.");

  m.def("execution_options", [] { return to_python(options_to_json()); },
        "The option table every analysing call and the CLI take, as `tilewave options --format json`: keyword, "
        "flag, kind, choices, default, help, execution_key, commands, compare_keyword, python_type.");
  m.def("gpus", [](const std::optional<PathArg>& gpu_dir) { return list_gpu_ids(gpu_dir ? gpu_dir->string() : default_gpu_dir()); },
        py::arg("gpu_dir") = py::none(), "The GPU ids in the database.");
  m.def(
      "gpu_database",
      [](const std::optional<PathArg>& gpu_dir) {
        return to_python(gpus_to_json(load_gpu_database(gpu_dir ? gpu_dir->string() : default_gpu_dir())));
      },
      py::arg("gpu_dir") = py::none(),
      "Every GPU file of the database as `tilewave gpus --format json` lists it: id, name, arch, sms, "
      "boost_clock_mhz, dram_bandwidth_gbs, peaks, trust, memory_type, instruction_family, params, param_origin, "
      "runtime_params.");
  m.def(
      "formats",
      [] {
        json out = json::array();
        for (const ViewEntry& e : ViewRegistry::global().entries())
          out.push_back({{"command", e.command}, {"format", e.format}, {"summary", e.summary}});
        return to_python(out);
      },
      "Every command's --format names, one entry each of the view registry (docs/cli.md \"Formats\"): command, "
      "format, summary (what it shows).");
  m.def("params", [] { return to_python(params_to_json()); },
        "Every parameter of a GPU file and of a host file, as `tilewave params --format json`: name, file, unit, "
        "default, min, max, scope, owner, transfer, meaning.");
  m.def(
      "write_host",
      [](const py::object& host, const PathArg& path) {
        // Read as a host file is, so a value out of its bounds is refused before anything is written.
        const HostModel h = host_from_json(from_python(host, "host"), path.stem().string(), "host");
        const json j = host_to_json(h);
        write_output(output_file(path, "path"), [&](std::ostream& os) { os << json_text(j, 2) << "\n"; });
      },
      py::arg("host"), py::arg("path"),
      "Writes a host file (docs/calibration.md 'Host') through the one host-file writer: `host` is a dict as the "
      "file holds it ({'name', 'trust', 'params', 'machine_spread', 'sources'}); parameters it leaves out get "
      "host_param_table()'s starting values, and a value outside its bounds is an error.");
  m.def(
      "write_gpu",
      [](const py::object& gpu, const PathArg& path, const std::optional<PathArg>& gpu_dir) {
        write_gpu_file(output_file(path, "path"), from_python(gpu, "gpu"),
                       gpu_arch_dir(path.string(), gpu_dir ? gpu_dir->string() : default_gpu_dir()));
      },
      py::arg("gpu"), py::arg("path"), py::kw_only(), py::arg("gpu_dir") = py::none(),
      "Writes a GPU file through the one GPU-file writer (tilewave/gpu_file.h): `gpu` is a dict as the file holds "
      "it; it is read back as `analyze` would read it (its architecture from an arch/ folder beside `path`, else "
      "gpu_dir's), so a file that would be refused is an error and nothing is written.");
  m.def("default_host", [] { return std::string(default_host_id()); },
        "The host every call uses when host= is not given, whatever the GPU.");
  m.def(
      "runtimes",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const RuntimeProfile* r : builtin_runtimes()) out.emplace_back(r->name(), r->summary());
        return out;
      },
      "The runtime profiles: (name, summary) pairs.");
  m.def("data_dirs", [] { return std::make_pair(default_gpu_dir(), default_space_dir()); },
        "Where this copy reads its GPU database and search spaces.");
  m.def("kernel_class_of_name", &kernel_class_of_name, py::arg("name"), py::arg("vocabulary") = "check",
        "The class a profiled kernel's name gives it in a vocabulary of analyzer/data/kernel_names.json "
        "(check, runtime_fit, harness), as `tilewave check` reads it.");
  m.def("kernel_name_vocabularies", &kernel_name_vocabularies, "The vocabularies of analyzer/data/kernel_names.json.");

  space_class.def(py::init<const IdOrPath&>(), py::arg("name_or_path"))
      .def_property_readonly("name", [](const Space& s) { return s.get().name; }, "The space's name, as its file gives it.")
      .def_property_readonly("size", &Space::size, "How many encodings it holds: a Python int, exact however large.")
      .def("sample", &Space::sample, py::arg("seed"), py::arg("index"), py::kw_only(), py::arg("unique") = false,
           "The encoding `tilewave nas --seed SEED` draws at position INDEX; unique=True: `nas --seed SEED --unique`'s, "
           "a seeded permutation of the space (without replacement), so that it depends on SEED and INDEX alone.")
      .def("samples", &Space::samples, py::arg("n"), py::kw_only(), py::arg("seed") = 1, py::arg("unique") = false,
           "The encodings `tilewave nas --samples N --seed SEED [--unique]` costs, in its order: with replacement "
           "(a candidate may come twice) or, unique=True, each distinct (InputError when N is more than the space holds).")
      .def("enumerate", &Space::enumerate,
           "Every encoding of the space once, in the file's order (`tilewave nas --enumerate`); InputError for a "
           "space of more than 10,000,000.")
      .def("options", &Space::options, "Per stage, each choice's options as encodings write them.")
      .def("export_onnx", &Space::export_onnx, py::arg("encoding"), py::arg("path"), py::kw_only(), py::arg("batch") = 1,
           "Writes the candidate as ONNX, as `tilewave nas --export-onnx` does.")
      .def(
          "scorer",
          [](std::shared_ptr<Space> self, int64_t batch, const py::kwargs& keywords) {
            return std::make_unique<Scorer>(std::move(self), keyword_options(keywords, "nas", "scorer"), batch);
          },
          py::kw_only(), py::arg("batch") = 1,
          std::string("A scorer for this space on one GPU, batch and execution configuration, as `tilewave nas SPACE` with the "
          "same options takes them (batch 1 is nas's default: a space has no file batch)." +
          keywords_doc("nas")).c_str());

  scorer_class
      .def("score", &Scorer::score, py::arg("encoding"),
           "One candidate, as a `tilewave nas` row: {'time_us', 'flops', 'params', 'throughput_per_s', "
           "'utilization', 'main_loss', 'kernels', 'loss', 'encoding', and 'latency_us' (time_us's former name, until 1.0)}. An encoding the space does not hold, or does "
           "not write that way, raises InputError.")
      .def("score_many", &Scorer::score_many, py::arg("encodings"), "A list of candidates, in one call: score()'s dicts.")
      .def_property_readonly("distinct_blocks", &Scorer::distinct_blocks,
                             "How many distinct blocks its table holds (the most of any of its evaluators).");
}
