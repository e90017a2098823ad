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
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/analysis.h"

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
  std::string host;               // host description; empty: the GPU file's
  bool allow_unmodelled = false;  // partial totals instead of an error (docs/errors.md)
  // How errors name an option: "--" for the CLI's flags ("--batch: …"), ""
  // for the Python module's keywords ("batch: …").
  std::string option_prefix = "--";
};

// The GPU the options name.
GpuModel gpu_of(const RunOptions& o);
// The execution configuration (InputError naming the option on a bad value).
ExecutionConfig execution_of(const RunOptions& o);
// The host a plain loop is scheduled on: `host`, else the GPU file's; null for graph replay.
std::shared_ptr<const HostModel> host_of(const RunOptions& o);
// Everything analyze_file / ModelFile::analyze read.
AnalyzeOptions analyze_options(const RunOptions& o);
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
// An empty layouts, launches or batches list: each runtime's default, the file's batch.
struct CompareAxes {
  std::vector<std::string> gpus{"h200", "a100", "l4"};
  std::vector<std::string> runtimes{"eager"};
  std::vector<std::string> dtypes{"fp16"};
  std::vector<std::string> layouts, launches;
  std::vector<int64_t> batches;
};
// `each` sees every analysis as it is made (the CLI checks and notes there).
std::vector<Analysis> analyze_combinations(const ModelFile& model, const RunOptions& o, const CompareAxes& axes,
                                           const std::function<void(const Analysis&, size_t)>& each = {});

}  // namespace tilewave
