// The HTML report (`tilewave report`, docs/report.md): one self-contained
// file, inline SVG and CSS, no network access. It only presents: every
// figure comes from the analyses passed in.
#pragma once
#include <ostream>
#include <vector>

#include "tilewave/analysis.h"
#include "tilewave/comparison.h"
#include "tilewave/run_options.h"

namespace tilewave {

void write_html_report(std::ostream& os, const ReportInput& in);
// Two networks on one page (`report A --vs B`): the comparison's findings,
// each step split by cause and by op, both per-op tables, both rooflines,
// both batch curves on one chart and both timelines.
void write_html_comparison(std::ostream& os, const ReportInput& a, const ReportInput& b, const NetworkComparison& c);
// The one or the other, as the run holds one network or two.
void write_html(std::ostream& os, const ReportRun& r);

}  // namespace tilewave
