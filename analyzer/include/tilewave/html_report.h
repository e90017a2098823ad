// The HTML report (`tilewave report`, docs/report.md): one self-contained
// file, inline SVG and CSS, no network access. It only presents: every
// figure comes from the analyses passed in.
#pragma once
#include <ostream>
#include <vector>

#include "tilewave/analysis.h"
#include "tilewave/comparison.h"

namespace tilewave {

struct ReportInput {
  Analysis main;                      // the model at the chosen GPU and batch
  std::vector<Analysis> batch_sweep;  // the same model and GPU over batch sizes (ascending)
  std::vector<Analysis> other_gpus;   // the same model and batch on the --compare GPUs
};

void write_html_report(std::ostream& os, const ReportInput& in);
// Two networks on one page (`report A --vs B`): the comparison's findings,
// each step split by cause and by op, both per-op tables, both rooflines,
// both batch curves on one chart and both timelines.
void write_html_comparison(std::ostream& os, const ReportInput& a, const ReportInput& b, const NetworkComparison& c);

}  // namespace tilewave
