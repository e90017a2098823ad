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
// Two networks on one page (`report A --vs B`): which is faster and by how
// much (throughput, latency), why (the comparison's findings), both
// throughput-vs-batch curves, each step split by cause and by op, both per-op
// tables, both rooflines and both timelines.
void write_html_comparison(std::ostream& os, const ReportInput& a, const ReportInput& b, const NetworkComparison& c);
// The one or the other, as the run holds one network or two.
void write_html(std::ostream& os, const ReportRun& r);

}  // namespace tilewave
