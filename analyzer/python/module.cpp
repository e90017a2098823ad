// The Python module `tilewave` (docs/python.md): the analyzer in-process, for
// architecture search written in Python. Every function returns the fields
// the CLI's JSON has; errors a user can cause raise tilewave.InputError (a
// ValueError) with the CLI's one-line message. Work runs without the GIL, so
// Python threads can score in parallel.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/error.h"
#include "tilewave/layer_list.h"
#include "tilewave/layer_set.h"
#include "tilewave/output_file.h"
#include "tilewave/report.h"
#include "tilewave/space_cost.h"
#include "tilewave_onnx.pb.h"

namespace py = pybind11;
using nlohmann::json;

namespace tilewave::python {

namespace {

// Values cross the boundary as JSON values converted node by node: one
// definition of every field (the CLI's JSON), no text in between.
py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::object: {
      py::dict d;
      for (const auto& item : j.items()) d[py::str(item.key())] = to_python(item.value());
      return std::move(d);
    }
    case json::value_t::array: {
      py::list l(j.size());
      for (size_t i = 0; i < j.size(); ++i) l[i] = to_python(j[i]);
      return std::move(l);
    }
    case json::value_t::string: return py::str(j.get_ref<const std::string&>());
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

// What every entry point shares: the GPU, runtime, dtype and batch.
struct Target {
  GpuModel gpu;
  AnalyzeOptions options;
};
Target target_of(const std::string& gpu, int64_t batch, const std::string& runtime, const std::string& dtype,
                 const std::optional<std::string>& gpu_dir) {
  if (batch < 1) throw InputError("batch", fmt::format("batch must be positive, not {}", batch));
  Target t{load_gpu(gpu, gpu_dir ? *gpu_dir : default_gpu_dir()), {}};
  t.options.load.batch = batch;
  t.options.exec.dtype = dtype_named(dtype, "dtype");
  t.options.exec.runtime = &runtime_named(runtime, "runtime");
  return t;
}

// The execution configuration's other axes, as the CLI's --layout, --amp,
// --graph/--no-graph and --host (docs/python.md).
// None keeps the runtime's default, as a flag not given does.
void set_execution(Target& t, const std::optional<std::string>& layout, std::optional<bool> amp,
                   std::optional<bool> graph, const std::optional<std::string>& host,
                   const std::optional<std::string>& gpu_dir) {
  nlohmann::json j = {{"runtime", t.options.exec.runtime_profile().name()},
                      {"dtype", dtype_name(t.options.exec.dtype)},
                      {"attention", t.options.exec.fuse_attention ? "fused" : "unfused"}};
  if (layout) j["layout"] = *layout;
  if (amp) j["amp"] = *amp;
  if (graph) j["launch"] = *graph ? "graph" : "loop";
  t.options.exec = execution_from_json(j, "execution");
  const std::string id = host ? *host : t.gpu.host;
  if (t.options.exec.launch == Launch::loop || host)
    t.options.host = std::make_shared<const HostModel>(
        id.empty() ? default_host() : load_host(id, gpu_dir ? *gpu_dir : default_gpu_dir()));
}

// As `tilewave analyze`: an incomplete model is an error unless partial answers are allowed.
py::object analysis_result(const Analysis& a, bool allow_unmodelled) {
  if (!allow_unmodelled)
    if (auto why = incomplete_reason(a)) throw InputError(a.model_path, *why + " (allow_unmodelled=True gives partial totals)");
  json j = analysis_to_json(a);
  j["notes"] = a.notes;
  return to_python(j);
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

std::string space_file(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".json") return name_or_path;
  return (fs::path(default_space_dir()) / (name_or_path + ".json")).string();
}

// A search space with a scorer for one target; keeps the evaluator's block table across calls.
class Space {
 public:
  explicit Space(const std::string& name_or_path) : space_(space::load_space(space_file(name_or_path))) {}
  const space::SearchSpace& get() const { return space_; }
  std::string sample(uint64_t seed, uint64_t index) const { return space::encode(space_, space::sample(space_, seed, index)); }
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
  void export_onnx(const std::string& encoding, const std::string& path, int64_t batch) const {
    const auto c = space::decode(space_, encoding);
    if (batch < 1) throw InputError("batch", "batch must be positive");
    const auto written = space::write_blocks(space_, space::blocks_of(space_, c), {batch, space_.channels, space_.height, space_.width});
    write_output(path, [&](std::ostream& os) { os << written.proto->SerializeAsString(); });
  }

 private:
  space::SearchSpace space_;
};

class Scorer {
 public:
  Scorer(std::shared_ptr<Space> space, const std::string& gpu, int64_t batch, const std::string& runtime,
         const std::string& dtype, const std::optional<std::string>& gpu_dir, const std::optional<std::string>& layout,
         std::optional<bool> amp, std::optional<bool> graph, const std::optional<std::string>& host)
      : space_(std::move(space)) {
    Target t = target_of(gpu, batch, runtime, dtype, gpu_dir);
    set_execution(t, layout, amp, graph, host, gpu_dir);
    first_ = std::make_unique<space::SpaceEvaluator>(space_->get(), t.gpu, t.options.exec, t.options.host, batch);
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
            "See docs/python.md.";
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      input_error(e.what());
    } catch (const std::invalid_argument& e) {  // layer dicts: layer_from_json names the field
      input_error(e.what());
    }
  });

  m.def(
      "analyze",
      [](const std::string& path, const std::string& gpu, int64_t batch, const std::string& runtime,
         const std::string& dtype, const std::optional<std::string>& gpu_dir, bool allow_unmodelled,
         const std::optional<std::string>& layout, std::optional<bool> amp, std::optional<bool> graph,
         const std::optional<std::string>& host) {
        Target t = target_of(gpu, batch, runtime, dtype, gpu_dir);
        set_execution(t, layout, amp, graph, host, gpu_dir);
        Analysis a;
        {
          py::gil_scoped_release release;
          a = analyze_file(path, t.gpu, t.options);
        }
        return analysis_result(a, allow_unmodelled);
      },
      py::arg("path"), py::kw_only(), py::arg("gpu") = "h200", py::arg("batch") = 1, py::arg("runtime") = "eager",
      py::arg("dtype") = "fp16", py::arg("gpu_dir") = py::none(), py::arg("allow_unmodelled") = false,
      py::arg("layout") = py::none(), py::arg("amp") = py::none(), py::arg("graph") = py::none(), py::arg("host") = py::none(),
      "Analyses an ONNX file as `tilewave analyze --format json` does; returns that document as a dict "
      "(plus 'notes'). layout, amp, graph and host are the CLI's --layout, --amp, --graph/--no-graph, --host; "
      "None: the runtime's default (eager: nchw, amp, a plain loop).");

  m.def(
      "analyze_layers",
      [](const py::object& layers, const std::vector<int64_t>& input, const std::string& gpu, int64_t batch,
         const std::string& runtime, const std::string& dtype, const std::optional<std::string>& gpu_dir,
         const std::optional<std::string>& layout, std::optional<bool> amp, std::optional<bool> graph,
         const std::optional<std::string>& host) {
        Target t = target_of(gpu, batch, runtime, dtype, gpu_dir);
        set_execution(t, layout, amp, graph, host, gpu_dir);
        const Model model = model_from_layers(layers, batch, input, t.options.load);
        Analysis a;
        {
          py::gil_scoped_release release;
          a = analyze_model(model, t.gpu, t.options);
        }
        return analysis_result(a, false);
      },
      py::arg("layers"), py::kw_only(), py::arg("input") = std::vector<int64_t>{3, 224, 224}, py::arg("gpu") = "h200",
      py::arg("batch") = 1, py::arg("runtime") = "eager", py::arg("dtype") = "fp16", py::arg("gpu_dir") = py::none(),
      py::arg("layout") = py::none(), py::arg("amp") = py::none(), py::arg("graph") = py::none(), py::arg("host") = py::none(),
      "Analyses a network given as a list of layer dicts (docs/python.md 'Layer lists'), without files; "
      "returns the same dict as analyze().");

  m.def(
      "layers_to_onnx",
      [](const py::object& layers, const std::string& path, const std::vector<int64_t>& input, int64_t batch) {
        if (batch < 1) throw InputError("batch", "batch must be positive");
        const json list = from_python(layers, "layers");
        const auto written = space::network_from_layers(list, input_shape(batch, input), "layers");
        write_output(path, [&](std::ostream& os) { os << written.proto->SerializeAsString(); });
        return written.params;
      },
      py::arg("layers"), py::arg("path"), py::kw_only(), py::arg("input") = std::vector<int64_t>{3, 224, 224},
      py::arg("batch") = 1,
      "Writes a layer list as the ONNX graph tilewave costs for it (weights as shapes only); returns its "
      "parameter count.");

  m.def(
      "predict_layers",
      [](const py::object& layers, const std::string& gpu, const std::optional<std::string>& gpu_dir) {
        const json list = from_python(layers, "layers");
        if (!list.is_array()) throw InputError("layers", "predict_layers takes a list of layer dicts");
        const GpuModel g = load_gpu(gpu, gpu_dir ? *gpu_dir : default_gpu_dir());
        const CostModel cost_model(g);
        json out = json::array();
        {
          py::gil_scoped_release release;
          for (size_t i = 0; i < list.size(); ++i) {
            Layer layer;
            try {
              layer = layer_from_json(list[i]);
            } catch (const std::invalid_argument& e) {
              throw InputError(fmt::format("layers[{}]", i), e.what());
            }
            json row = list[i];
            row.update(cost_to_json(cost_layer(layer, cost_model)));
            out.push_back(std::move(row));
          }
        }
        return to_python(out);
      },
      py::arg("layers"), py::kw_only(), py::arg("gpu") = "h200", py::arg("gpu_dir") = py::none(),
      "Costs kernel problems in the layer-set form (docs/layerset.md), each alone as `tilewave layers` does; "
      "returns each dict with the prediction's fields added.");

  m.def("gpus", [](const std::optional<std::string>& gpu_dir) { return list_gpu_ids(gpu_dir ? *gpu_dir : default_gpu_dir()); },
        py::arg("gpu_dir") = py::none(), "The GPU ids in the database.");
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

  py::class_<Space, std::shared_ptr<Space>>(m, "Space", "A search space (docs/nas.md), by name or file path.")
      .def(py::init<const std::string&>(), py::arg("name_or_path"))
      .def_property_readonly("name", [](const Space& s) { return s.get().name; })
      .def_property_readonly("size", [](const Space& s) { return s.get().size(); }, "How many encodings it holds.")
      .def("sample", &Space::sample, py::arg("seed"), py::arg("index"),
           "The encoding `tilewave nas --seed SEED` draws at position INDEX.")
      .def("options", &Space::options, "Per stage, each choice's options as encodings write them.")
      .def("export_onnx", &Space::export_onnx, py::arg("encoding"), py::arg("path"), py::kw_only(), py::arg("batch") = 1,
           "Writes the candidate as ONNX, as `tilewave nas --export-onnx` does.")
      .def(
          "scorer",
          [](std::shared_ptr<Space> self, const std::string& gpu, int64_t batch, const std::string& runtime,
             const std::string& dtype, const std::optional<std::string>& gpu_dir, const std::optional<std::string>& layout,
             std::optional<bool> amp, std::optional<bool> graph, const std::optional<std::string>& host) {
            return std::make_unique<Scorer>(std::move(self), gpu, batch, runtime, dtype, gpu_dir, layout, amp, graph,
                                            host);
          },
          py::kw_only(), py::arg("gpu") = "h200", py::arg("batch") = 1, py::arg("runtime") = "eager",
          py::arg("dtype") = "fp16", py::arg("gpu_dir") = py::none(), py::arg("layout") = py::none(),
          py::arg("amp") = py::none(), py::arg("graph") = py::none(), py::arg("host") = py::none(),
          "A scorer for this space on one GPU, batch and execution configuration (runtime, dtype, layout, amp, "
          "graph, host as analyze() takes them): the same figures as `tilewave nas` rows.");

  py::class_<Scorer>(m, "Scorer", "Scores encodings of one space; keeps its table of costed blocks between calls.")
      .def("score", &Scorer::score, py::arg("encoding"), "One candidate: latency_us, flops, params, utilization, ...")
      .def("score_many", &Scorer::score_many, py::arg("encodings"), "A list of candidates, in one call.")
      .def_property_readonly("distinct_blocks", &Scorer::distinct_blocks);
}
