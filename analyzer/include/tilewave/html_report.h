// The HTML report (`tilewave report`, docs/report.md): one self-contained
// file, inline SVG and CSS, no network access. It only presents: every
// figure comes from the analyses passed in.
#pragma once
#include <ostream>
#include <vector>

#include "tilewave/analysis.h"

namespace tilewave {

struct ReportInput {
  Analysis main;                      // the model at the chosen GPU and batch
  std::vector<Analysis> batch_sweep;  // the same model and GPU over batch sizes (ascending)
  std::vector<Analysis> other_gpus;   // the same model and batch on the --compare GPUs
};

void write_html_report(std::ostream& os, const ReportInput& in);

}  // namespace tilewave
