// Stage 10: views over an Analysis (analyzer/src/views/, one file per view).
// Each writes to a stream; none computes: every figure comes from the result.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/advise.h"
#include "tilewave/analysis.h"
#include "tilewave/benchmark_fit.h"
#include "tilewave/calibration.h"
#include "tilewave/comparison.h"
#include "tilewave/ranking.h"
#include "tilewave/op_registry.h"
#include "tilewave/search.h"
#include "tilewave/trace_check.h"
#include "tilewave/view_registry.h"

namespace tilewave {

// Facts every view shows the same way: the largest loss of a kernel (why it
// is slow), and its problem in one line (conv NxCxHxW->K RxS/stride gG, GEMM
// MxNxK, memory kernels by elements moved).
std::string main_loss(const KernelCost& c);
std::string shape_text(const Kernel& k);
// Trust, shown wherever a figure for a GPU is printed (docs/cli.md
// "Trust"): a mark beside a GPU id ("" calibrated, "+" fitted from a
// published benchmark, "*" carried-over, "**" datasheet) and the legend
// line of a mark ("" for calibrated).
const char* trust_mark(Trust trust);
std::string trust_legend(Trust trust);

// How `analyze`'s table and CSV are cut (--top, --by).
struct ViewOptions {
  int worst_layers = 15;  // the table's slowest kernels
  // The table's summary (--by): op (head op, convolution kinds apart), name
  // (what each kernel runs, as nsys sums kernel names), node (ONNX nodes with
  // their facts) or kernel (kernels in launch order). Empty: the format's
  // own, op for the table, kernel for CSV (which has a row per kernel, node or
  // group); JSON holds every summary whatever this is.
  std::string by;
};
// The table's summaries (--by, Python's by=), the table's default first.
const std::vector<std::string>& table_summaries();
// What `analyze`'s formats are written from (ViewRegistry, view_registry.h).
struct AnalysisViewInput {
  const Analysis& analysis;
  ViewOptions options;
};

// The JSON document of `analyze`; with_layers false: without its per-kernel
// rows (write_json streams them).
nlohmann::json analysis_to_json(const Analysis& a, bool with_layers = true);
// A network's totals, one schema wherever totals appear (analyze's `total`,
// sweep's points, rank's rows, advise's before and after, compare's rows).
nlohmann::json totals_to_json(const Totals& t);
// Its run facts and totals alone, without node fates or kernels (CSV's
// first line, compare's rows).
nlohmann::json analysis_summary_json(const Analysis& a);
void write_json(std::ostream& os, const Analysis& a);
// Rows per kernel (by "" or "kernel"), per ONNX node ("node") or per kernel
// group ("op", "name"), after the version's comment line.
void write_csv(std::ostream& os, const Analysis& a, const std::string& by = "");
// A person's view: summary, where the time goes, the worst layers.
void write_table(std::ostream& os, const Analysis& a, int worst_layers = 15, const std::string& by = "");

// `tilewave layers` (views/layers.cpp, docs/layerset.md): each layer of the
// set at `path` costed alone, as the table or (jsonl) its line with the cost
// fields appended; and `--extract`: the costed kernels of a lowered model as
// a layer set, `unmodelled` told of each kernel left out.
void write_layer_predictions(std::ostream& os, const std::string& path, const CostModel& cost_model, bool table);
void write_extracted_layers(std::ostream& os, const Model& model, const KernelGraph& lowered, const std::string& stem,
                            const std::function<void(const Kernel&)>& unmodelled);

// `tilewave calibrate` (views/calibrate.cpp): error statistics per op class
// as a table and as JSON rows; `calibrate validate`'s whole output (table or
// json) for a run; from-benchmark's errors per results file under a title.
void write_error_stats_table(std::ostream& os, const std::vector<ErrorStats>& stats);
nlohmann::json error_stats_json(const std::vector<ErrorStats>& stats);
struct ValidationRun {
  const GpuModel& gpu;
  const std::vector<std::string>& files;
  std::string dtype;
  double holdout;
  int seed;
  size_t layers;  // the layers the statistics are over
};
void write_validation_table(std::ostream& os, const ValidationRun& run, const std::vector<ErrorStats>& stats);
nlohmann::json validation_to_json(const ValidationRun& run, const std::vector<ErrorStats>& stats);
void write_benchmark_errors(std::ostream& os, const std::vector<BenchmarkError>& rows, const std::string& title);
// calibrate fit-networks' median errors per batch of one stage ("before" or
// "after" the fit), and fit-runtime's losses, errors per batch and
// parameters (`runs`: the runs read), as the fits print them on stderr.
void write_network_fit_errors(std::ostream& os, const NetworkFit& fit, const std::string& stage);
void write_runtime_fit(std::ostream& os, const RuntimeFit& r, size_t runs);

// Several models side by side (`tilewave rank`); `failed` lists the models
// that could not be analysed, as (file, reason), shown after the ranking.
// `ranking` is rank_models(analyses) (ranking.h), computed before the view.
void write_rank_table(std::ostream& os, const std::vector<Analysis>& analyses, const Ranking& ranking,
                      const std::vector<RankFailure>& failed = {});
nlohmann::json rank_to_json(const std::vector<Analysis>& analyses, const Ranking& ranking,
                            const std::vector<RankFailure>& failed = {});
void write_rank_csv(std::ostream& os, const std::vector<Analysis>& analyses, const Ranking& ranking,
                    const std::vector<RankFailure>& failed = {});
// The note of rank, sweep, compare and nas when most of their rows are
// host-bound (their order is then the host's, docs/model.md "Schedule"),
// naming what ranks the GPU's work; nullopt otherwise.
std::optional<std::string> host_bound_note(size_t host_bound_rows, size_t rows, const char* what = "rows");
// host_bound_note() of these analyses, as a JSON array (empty or one line): `what` names the rows.
nlohmann::json notes_json(const std::vector<Analysis>& as, const char* what);
// A search-space candidate's predicted figures (`tilewave nas` rows, the
// Python module's scores); `with_losses` adds the loss split.
nlohmann::json candidate_to_json(const space::CandidateCost& c, bool with_losses = false);
// `tilewave nas` (views/nas.cpp, docs/nas.md): a row as CSV (the
// nas_columns, appended to `out`) or as a JSON Lines object; the view
// registry's nas entries stream them (ViewRegistry::row_writer).
const std::vector<std::string>& nas_columns();
// A nas CSV's column line, read by name (nas-merge): shards from before
// time_us name it latency_us and lack bound, shards from before bound lack
// it alone (docs/report.md "Field names"). row() gives a row's cells in
// today's nas_columns() order, the time in both time columns and an unknown
// bound empty, every figure checked (a finite number, none negative, the
// time positive); InputError naming `where` otherwise.
// A cell of a nas row in `column` (views/nas.cpp says what passes);
// InputError naming `where` otherwise. nas-merge holds CSV and JSON rows to it.
void check_nas_cell(const std::string& column, const std::string& cell, const std::string& where);
class NasCsvColumns {
 public:
  NasCsvColumns() = default;
  NasCsvColumns(const std::string& names_line, const std::string& where);
  std::vector<std::string> row(const std::string& line, const std::string& where) const;
  static size_t today(const std::string& name);  // a column's position in nas_columns()
  static std::string text(const std::vector<std::string>& cells);  // the cells as a CSV line

 private:
  std::map<std::string, size_t> at_;
  size_t width_ = 0;
};
void nas_csv_row(const space::SearchRow& r, std::string& out);
nlohmann::json nas_json_row(const space::SearchRow& r);
void nas_jsonl_row(const space::SearchRow& r, std::string& out);
enum class NasRowFormat { csv, jsonl };
// The header (CSV: the version and column lines; JSON Lines: the header
// object; none where `header` is null) and rows already formatted.
void write_nas_rows(std::ostream& os, const nlohmann::json* header, const std::vector<space::SearchRow>& rows,
                    NasRowFormat format);
// What a run's header says of it, which nas-merge compares shard against shard.
struct NasRun {
  const space::SearchSpace& space;
  std::string space_file;
  const space::SearchOptions& options;
  uint64_t total;  // the whole sampling's candidates (space::sampling_total)
  const GpuModel& gpu;
  const ExecutionConfig& exec;
  int64_t batch;
  std::string dtype;
  std::string host;  // the host issuing a plain loop; empty under graph replay
};
nlohmann::json nas_header(const NasRun& run);
// The header when `header` is not null (JSON Lines: its first line; CSV: the
// column names, the header itself going beside the file), then the rows' texts.
void write_nas_rows(std::ostream& os, const nlohmann::json& header, const std::vector<space::SearchRow>& rows,
                    const std::string& format);
// Where nas keeps a CSV's header: FILE.meta.json beside -o FILE.
std::string nas_meta_path(const std::string& csv_path);
// `tilewave nas-merge` (docs/nas.md "Sharding on existing engines"): the shards' outputs, checked
// to come from one run (InputError naming the file otherwise), each shard
// once, each candidate once and in its shard; `rows` are the row texts in
// index order (CSV rows in today's columns), the --pareto front recomputed
// over all parts; `header` the merged run's ("shard": "0/1").
struct NasMerge {
  nlohmann::json header;
  std::string format;  // "csv" or "jsonl" (JSON Lines), nas's format names
  uint64_t shards = 0;
  size_t candidates = 0;  // rows read, before the front is taken
  std::vector<std::string> rows;
};
NasMerge merge_nas_outputs(const std::vector<std::string>& files);
// `tilewave params` (views/params.cpp): every parameter of a GPU file and of
// a host file, from param_table() and host_param_table(), the one definition
// the loaders, the fits, the Python module and the doc figures read.
nlohmann::json params_to_json();
void write_params_table(std::ostream& os);
// `tilewave options` (views/options.cpp): the table of execution options
// (exec_options.h) as docs/python.md's table, the type stub's option dicts
// and JSON (Python's execution_options()).
void write_options_markdown(std::ostream& os);
void write_options_stub(std::ostream& os);
nlohmann::json options_to_json();
// `tilewave gpus` (views/gpus.cpp): the GPU database.
void write_gpus_table(std::ostream& os, const std::vector<GpuModel>& gpus);
nlohmann::json gpus_to_json(const std::vector<GpuModel>& gpus);
// `tilewave ops` (views/ops.cpp, docs/ops.md): the registry's ops, and what
// each runtime one chooses between launches for them.
void write_ops_table(std::ostream& os, const OpRegistry& registry);
void write_ops_markdown(std::ostream& os, const OpRegistry& registry);
nlohmann::json ops_to_json(const OpRegistry& registry);
// Models on several GPUs, runtimes, dtypes or batches (`tilewave compare`);
// `networks`: two models' comparison, whose findings follow the rows.
void write_compare_table(std::ostream& os, const std::vector<Analysis>& analyses,
                         const NetworkComparison* networks = nullptr);
nlohmann::json compare_to_json(const std::vector<Analysis>& analyses, const NetworkComparison* networks = nullptr);
// The predicted step as Chrome trace JSON (torch.profiler's export format):
// a GPU-stream lane of kernels and, for a plain loop, the host's lane of ops.
nlohmann::json chrome_trace_json(const Analysis& a);
void write_chrome_trace(std::ostream& os, const Analysis& a);
// The model file at `path` with each node's prediction in its doc_string
// (Netron shows it) and the network's in metadata_props["tilewave"];
// nothing else changes, weights included, except that external data files
// are named relative to `output`'s folder when it is another (InputError
// where that takes ".."). Serialized bytes.
std::string annotated_onnx(const std::string& path, const Analysis& a, const std::string& output = "");
// `tilewave check --trace`: the totals, the `rows` pairs furthest apart and
// the unpaired kernels; JSON with every pair.
void write_check_table(std::ostream& os, const Analysis& a, const MeasuredTrace& t, const TraceCheck& c, int rows);
nlohmann::json check_to_json(const Analysis& a, const MeasuredTrace& t, const TraceCheck& c);
// `tilewave advise`: the suggestions, best first, with their predicted gains.
void write_advice_table(std::ostream& os, const Analysis& a, const std::vector<Advice>& advice);
nlohmann::json advice_to_json(const Analysis& a, const std::vector<Advice>& advice);
// One model over batch sizes (`tilewave sweep`).
void write_sweep_table(std::ostream& os, const std::vector<Analysis>& analyses);
nlohmann::json sweep_to_json(const std::vector<Analysis>& analyses);
// One row of totals per analysis, for `sweep` and `compare` (docs/cli.md "Formats").
void write_totals_csv(std::ostream& os, const std::vector<Analysis>& analyses);

// What the other commands' formats are written from (ViewRegistry,
// view_registry.h; views/registry.cpp registers the shipped ones).
struct RankViewInput {
  const std::vector<Analysis>& analyses;
  const Ranking& ranking;
  const std::vector<RankFailure>& failed;
};
struct SweepViewInput {
  const std::vector<Analysis>& analyses;  // one per batch
};
struct CompareViewInput {
  const std::vector<Analysis>& analyses;
  const NetworkComparison* networks;  // two models' comparison, or null
};
struct CheckViewInput {
  const Analysis& analysis;
  const MeasuredTrace& trace;
  const TraceCheck& check;
  int rows;  // the pairs the table shows
};
struct AdviceViewInput {
  const Analysis& analysis;
  const std::vector<Advice>& advice;
};
struct LayersViewInput {
  const std::string& path;  // the layer set
  const CostModel& cost_model;
};
struct ValidationViewInput {
  const ValidationRun& run;
  const std::vector<ErrorStats>& stats;
};
struct NasRowsViewInput {
  const nlohmann::json* header;  // null: the rows alone (--pareto's front after the rows)
  const std::vector<space::SearchRow>& rows;
};
struct GpusViewInput {
  const std::vector<GpuModel>& gpus;
};
struct OpsViewInput {
  const OpRegistry& registry;
};
struct TablesViewInput {};  // params and options: tables of the program itself

}  // namespace tilewave
