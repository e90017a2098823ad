// The options the analysing commands share, as the CLI's flags and the
// Python module's keywords give them, and the one translation of them into
// the library's configuration: `tilewave analyze --batch 8 --attention
// unfused` and `tilewave.analyze(..., batch=8, attention="unfused")` build
// their AnalyzeOptions here, so they cannot drift apart (docs/python.md).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"
#include "tilewave/comparison.h"
#include "tilewave/progress.h"
#include "tilewave/ranking.h"

namespace tilewave {

struct RunOptions {
  std::string gpu = "h200";      // id in the database or a GPU .json
  std::string gpu_dir;           // empty: default_gpu_dir()
  std::string dtype = "fp16";
  std::string runtime = "eager";
  std::string attention = "fused";  // fused | unfused
  int64_t batch = 0;                // 0: as in the file
  std::map<std::string, std::vector<int64_t>> input_shapes;  // --input NAME=1x3x224x224
  // The execution configuration's other axes in its JSON form
  // (execution_from_json): {"layout": "nhwc", "amp": false, "launch": "loop"};
  // a missing key is the runtime's default.
  nlohmann::json execution = nlohmann::json::object();
  std::string host;               // host description; empty: default_host_id(), whatever the GPU
  bool allow_unmodelled = false;  // partial totals instead of an error (docs/errors.md)
  // How errors name an option: "--" for the CLI's flags ("--batch: …"), ""
  // for the Python module's keywords ("batch: …").
  std::string option_prefix = "--";
};

// The GPU the options name.
GpuModel gpu_of(const RunOptions& o);
// The execution configuration (InputError naming the option on a bad value).
ExecutionConfig execution_of(const RunOptions& o);
// The host a plain loop under `exec` is scheduled on: `host`, else
// default_host_id(); null for graph replay without a --host.
std::shared_ptr<const HostModel> host_of(const RunOptions& o, const ExecutionConfig& exec);
// The host `o` names (--host / host=), else the default host, whatever the
// launch: for callers that issue a loop themselves (calibrate from-benchmark).
HostModel host_named(const RunOptions& o);
// Everything analyze_file / ModelFile::analyze read: the configuration
// checked once, the host loaded when one issues the step, batch and inputs.
AnalyzeOptions analyze_options(const RunOptions& o);
// The options resolved once into what an analysis runs on: the GPU file
// parsed once, with analyze_options(). Every command and Python call that
// analyses one model on one GPU takes this.
struct Target {
  GpuModel gpu;
  AnalyzeOptions options;
};
Target resolve_target(const RunOptions& o);
inline Analysis analyze_file(const std::string& path, const Target& t) { return analyze_file(path, t.gpu, t.options); }
// "NAME=1x3x224x224" as the name and its dims; InputError naming --input otherwise.
std::pair<std::string, std::vector<int64_t>> parse_input_spec(const std::string& spec);
// An error when the totals cannot stand for the model (incomplete_reason)
// and partial answers were not asked for; the message says how to ask.
void require_complete(const Analysis& a, const RunOptions& o);

// `sweep`'s and the report's batches when none are given: 1, 2, 4, ..., 256.
std::vector<int64_t> default_sweep_batches();
// `sweep`: the model at each batch (each >= 1), in the order given.
std::vector<Analysis> analyze_batches(const ModelFile& model, const RunOptions& o, const std::vector<int64_t>& batches);

// `compare`'s axes: every combination, GPUs outermost, batches innermost.
// An empty layouts or batches list: each runtime's default, the file's
// batch. The launch is one for every combination (--graph/--no-graph).
struct CompareAxes {
  std::vector<std::string> gpus{"h200", "a100", "l4"};
  std::vector<std::string> runtimes{"eager"};
  std::vector<std::string> dtypes{"fp16"};
  std::vector<std::string> layouts;
  std::vector<int64_t> batches;
};
// `each` sees every analysis as it is made (the CLI checks and notes there).
std::vector<Analysis> analyze_combinations(const ModelFile& model, const RunOptions& o, const CompareAxes& axes,
                                           const std::function<void(const Analysis&, size_t)>& each = {});

// `compare MODEL... `: every model's combinations, models in the order
// given; two models in one configuration also get compare_networks()'s
// verdict and findings (which is faster, and why). `each` sees every analysis and its
// index among all of them.
struct CompareRun {
  std::vector<Analysis> analyses;
  std::optional<NetworkComparison> networks;
};
CompareRun compare_models(const std::vector<std::string>& model_paths, const RunOptions& o, const CompareAxes& axes,
                          const std::function<void(const Analysis&, size_t)>& each = {});

// Runs fn on a new thread of `pool`, or here when the system refuses another
// thread (a process or memory limit): fewer threads, the same answers.
template <class Fn>
void start_or_run(std::vector<std::thread>& pool, Fn fn) {
  try {
    pool.emplace_back(fn);
  } catch (const std::system_error&) {
    fn();
  }
}

// `rank`'s models: ONNX files, folders (their *.onnx, recursively) and list
// files (.txt or .list: one path per line, '#' comments, relative paths from
// the list's folder), in the order given, each model once. InputError for a
// folder without models, an unreadable list, or no model at all.
std::vector<std::string> expand_model_args(const std::vector<std::string>& args);

// `rank`: each model of expand_model_args(args) analysed on its own, `threads`
// at once, at o.batch (1 when not given: files declare different batches).
// A model that cannot be analysed, or is incomplete without
// allow_unmodelled, becomes a failure row, never a stop; InputError when no
// model could be ranked. `progress` is called on the calling thread as
// models finish.
struct RankRun {
  std::vector<Analysis> analyses;  // in the order given
  std::vector<RankFailure> failed;
};
RankRun analyze_models(const std::vector<std::string>& args, const RunOptions& o, int threads,
                       const ProgressFn& progress = {});
// A ranking that leaves models out would look complete: unless `keep_going`
// (--keep-going, keep_going=True), a run with failures is an error. The
// line that ends the failures' list ("2 of 5 models failed; --keep-going
// ranks the rest"), the option spelled as the caller spells it; empty when
// nothing failed.
std::string rank_failures_summary(const RankRun& run, const RunOptions& o);

// A comma-separated list (--gpu, --runtime, --dtype, --compare): its
// non-empty entries; UsageError naming `what` when it names nothing.
std::vector<std::string> split_list(const std::string& s, const std::string& what);

// What the HTML report presents (`tilewave report`, docs/report.md).
struct ReportInput {
  Analysis main;                      // the model at the chosen GPU and batch
  std::vector<Analysis> batch_sweep;  // the same model and GPU over batch sizes (ascending)
  std::vector<Analysis> other_gpus;   // the same model and batch on the compared GPUs
  // batch_sweep on each of other_gpus, in their order: the throughput-vs-batch chart's other lines.
  std::vector<std::vector<Analysis>> other_gpu_sweeps;
  // With other_gpus: which GPU runs `main`'s model fastest, and by how much (fastest_gpu()).
  std::string fastest_gpu;
};
// A report of one network, or of two side by side (`report A --vs B`).
struct ReportRun {
  ReportInput first;
  std::optional<ReportInput> second;
  std::optional<NetworkComparison> comparison;  // with `second`: first against second
};
// The report's analyses: `model` (and `vs` when not empty) on o.gpu at
// o.batch, each an error when incomplete (require_complete), over `batches`,
// and on every `compare` GPU but the report's own. o.gpu may be a list,
// "h200,a100,l4": its first is the report's GPU, the rest are compared before
// `compare`'s.
ReportRun analyze_for_report(const std::string& model, const std::string& vs, const RunOptions& o,
                             const std::vector<int64_t>& batches, const std::vector<std::string>& compare);

}  // namespace tilewave
