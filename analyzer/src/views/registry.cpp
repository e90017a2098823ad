// Every command's formats (view_registry.h): the shipped views, one entry
// each, over results their commands computed before them.
#include "tilewave/view_registry.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tilewave/error.h"
#include "tilewave/exec_options.h"
#include "tilewave/json_input.h"
#include "tilewave/report.h"

namespace tilewave {

namespace {

// A JSON document and its line end, as every json format prints one.
void print_json(std::ostream& os, const nlohmann::json& document) { os << json_text(document, 2) << "\n"; }

void add_builtin_views(ViewRegistry& r) {
  r.add<AnalysisViewInput>("analyze", "table", "a person's view at 80 columns: summary, per-op split, slowest kernels",
                           [](std::ostream& os, const AnalysisViewInput& in) {
                             write_table(os, in.analysis, in.options.worst_layers, in.options.by);
                           });
  r.add<AnalysisViewInput>("analyze", "json", "every kernel and node, all fields",
                           [](std::ostream& os, const AnalysisViewInput& in) { write_json(os, in.analysis); });
  r.add<AnalysisViewInput>(
      "analyze", "csv", "a row per kernel (--by node: per ONNX node; op, name: per group), the run's facts in each",
      [](std::ostream& os, const AnalysisViewInput& in) { write_csv(os, in.analysis, in.options.by); });

  r.add<LayersViewInput>("layers", "jsonl", "the set's lines with the cost fields appended",
                         [](std::ostream& os, const LayersViewInput& in) {
                           write_layer_predictions(os, in.path, in.cost_model, false);
                         });
  r.add<LayersViewInput>("layers", "table", "a line per layer: time, utilization, bound, kernel",
                         [](std::ostream& os, const LayersViewInput& in) {
                           write_layer_predictions(os, in.path, in.cost_model, true);
                         });

  r.add<RankViewInput>("rank", "table", "the models fastest first, beside the FLOPs order",
                       [](std::ostream& os, const RankViewInput& in) {
                         write_rank_table(os, in.analyses, in.ranking, in.failed);
                       });
  r.add<RankViewInput>("rank", "json", "every model's totals, both orders and Kendall's tau",
                       [](std::ostream& os, const RankViewInput& in) {
                         print_json(os, rank_to_json(in.analyses, in.ranking, in.failed));
                       });
  r.add<RankViewInput>("rank", "csv", "a row per model", [](std::ostream& os, const RankViewInput& in) {
    write_rank_csv(os, in.analyses, in.ranking, in.failed);
  });

  r.add<SweepViewInput>("sweep", "table", "a line per batch",
                        [](std::ostream& os, const SweepViewInput& in) { write_sweep_table(os, in.analyses); });
  r.add<SweepViewInput>("sweep", "json", "every batch's totals",
                        [](std::ostream& os, const SweepViewInput& in) { print_json(os, sweep_to_json(in.analyses)); });
  r.add<SweepViewInput>("sweep", "csv", "a row of totals per batch",
                        [](std::ostream& os, const SweepViewInput& in) { write_totals_csv(os, in.analyses); });

  r.add<CompareViewInput>("compare", "table", "a line per combination, then two models' findings",
                          [](std::ostream& os, const CompareViewInput& in) {
                            write_compare_table(os, in.analyses, in.networks);
                          });
  r.add<CompareViewInput>("compare", "json", "every combination's totals and two models' findings",
                          [](std::ostream& os, const CompareViewInput& in) {
                            print_json(os, compare_to_json(in.analyses, in.networks));
                          });
  r.add<CompareViewInput>("compare", "csv", "a row of totals per combination",
                          [](std::ostream& os, const CompareViewInput& in) { write_totals_csv(os, in.analyses); });

  r.add<AdviceViewInput>("advise", "table", "the suggestions, best first",
                         [](std::ostream& os, const AdviceViewInput& in) {
                           write_advice_table(os, in.analysis, in.advice);
                         });
  r.add<AdviceViewInput>("advise", "json", "every suggestion with its totals before and after",
                         [](std::ostream& os, const AdviceViewInput& in) {
                           print_json(os, advice_to_json(in.analysis, in.advice));
                         });

  r.add<CheckViewInput>("check", "table", "the totals, the pairs furthest apart, the unpaired kernels",
                        [](std::ostream& os, const CheckViewInput& in) {
                          write_check_table(os, in.analysis, in.trace, in.check, in.rows);
                        });
  r.add<CheckViewInput>("check", "json", "every pair", [](std::ostream& os, const CheckViewInput& in) {
    print_json(os, check_to_json(in.analysis, in.trace, in.check));
  });

  // nas streams its rows as the search formats them (the entry's row); the entry writes the header and a row list.
  r.add_streamed<NasRowsViewInput, space::SearchRow>(
      "nas", "csv", "a row per candidate, the header beside the file",
      [](std::ostream& os, const NasRowsViewInput& in) { write_nas_rows(os, in.header, in.rows, NasRowFormat::csv); },
      nas_csv_row);
  r.add_streamed<NasRowsViewInput, space::SearchRow>(
      "nas", "jsonl", "JSON Lines: the header, then a line per candidate",
      [](std::ostream& os, const NasRowsViewInput& in) { write_nas_rows(os, in.header, in.rows, NasRowFormat::jsonl); },
      nas_jsonl_row);

  r.add<GpusViewInput>("gpus", "table", "a line per GPU",
                       [](std::ostream& os, const GpusViewInput& in) { write_gpus_table(os, in.gpus); });
  r.add<GpusViewInput>("gpus", "json", "every GPU's fields",
                       [](std::ostream& os, const GpusViewInput& in) { print_json(os, gpus_to_json(in.gpus)); });

  r.add<TablesViewInput>("params", "table", "a line per parameter",
                         [](std::ostream& os, const TablesViewInput&) { write_params_table(os); });
  r.add<TablesViewInput>("params", "json", "every parameter's fields",
                         [](std::ostream& os, const TablesViewInput&) { print_json(os, params_to_json()); });

  r.add<OpsViewInput>("ops", "table", "a line per op",
                      [](std::ostream& os, const OpsViewInput& in) { write_ops_table(os, in.registry); });
  r.add<OpsViewInput>("ops", "md", "docs/ops.md's tables",
                      [](std::ostream& os, const OpsViewInput& in) { write_ops_markdown(os, in.registry); });
  r.add<OpsViewInput>("ops", "json", "every op's fields",
                      [](std::ostream& os, const OpsViewInput& in) { print_json(os, ops_to_json(in.registry)); });

  r.add<TablesViewInput>("options", "md", "the docs' table",
                         [](std::ostream& os, const TablesViewInput&) { write_options_markdown(os); });
  r.add<TablesViewInput>("options", "pyi", "the type stub's ExecutionOptions",
                         [](std::ostream& os, const TablesViewInput&) { write_options_stub(os); });
  r.add<TablesViewInput>("options", "json", "every option's fields",
                         [](std::ostream& os, const TablesViewInput&) { print_json(os, options_to_json()); });

  r.add<ValidationViewInput>("calibrate validate", "table", "error statistics per op class",
                             [](std::ostream& os, const ValidationViewInput& in) {
                               write_validation_table(os, in.run, in.stats);
                             });
  r.add<ValidationViewInput>("calibrate validate", "json", "the run and its statistics",
                             [](std::ostream& os, const ValidationViewInput& in) {
                               print_json(os, validation_to_json(in.run, in.stats));
                             });
}

}  // namespace

ViewRegistry& ViewRegistry::global() {
  static ViewRegistry* registry = [] {
    auto* r = new ViewRegistry();
    add_builtin_views(*r);
    return r;
  }();
  return *registry;
}

void ViewRegistry::add_entry(ViewEntry entry) {
  for (const ViewEntry& v : entries_)
    if (v.command == entry.command && v.format == entry.format)
      throw std::logic_error(fmt::format("{} has a format '{}' already", entry.command, entry.format));
  entries_.push_back(std::move(entry));
}

std::vector<std::string> ViewRegistry::formats(const std::string& command) const {
  std::vector<std::string> out;
  for (const ViewEntry& v : entries_)
    if (v.command == command) out.push_back(v.format);
  return out;
}

std::vector<std::string> ViewRegistry::formats() const {
  std::vector<std::string> out;
  for (const ViewEntry& v : entries_)
    if (std::find(out.begin(), out.end(), v.format) == out.end()) out.push_back(v.format);
  return out;
}

std::string ViewRegistry::help(const std::string& command) const {
  std::vector<std::string> parts;
  for (const ViewEntry& v : entries_)
    if (v.command == command) parts.push_back(fmt::format("{} ({})", v.format, v.summary));
  return fmt::format("{}", fmt::join(parts, ", "));
}

const ViewEntry& ViewRegistry::find(const std::string& command, const std::string& format,
                                    const std::string& option) const {
  for (const ViewEntry& v : entries_)
    if (v.command == command && v.format == format) return v;
  throw InputError(option, fmt::format("unknown format '{}' ({})", format, fmt::join(formats(command), ", ")));
}

void ViewRegistry::check_input(const ViewEntry& view, std::type_index given) {
  if (view.input != given)
    throw std::logic_error(fmt::format("{} --format {} is written from another result", view.command, view.format));
}

void ViewRegistry::check_row(const ViewEntry& view, std::type_index given) {
  if (!view.row || view.row_input != given)
    throw std::logic_error(fmt::format("{} --format {} streams no rows of that kind", view.command, view.format));
}

}  // namespace tilewave
