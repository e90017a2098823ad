// The HTML report (docs/report.md): summary, roofline, slowest kernels, the
// utilization lost by cause, batch size, other GPUs. Inline SVG and CSS only;
// a small inline script checks that every chart was drawn (the browser test
// reads its verdict). Geometry is the only thing computed here.
#include "tilewave/html_report.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "format.h"
#include "tilewave/comparison.h"
#include "tilewave/report.h"
#include "tilewave/text.h"
#include "tilewave/version.h"

namespace tilewave {

namespace {

const char* bound_colour(Bound b) {
  switch (b) {
    case Bound::compute: return "#2b7bb9";
    case Bound::memory: return "#d95f02";
    case Bound::latency: return "#7570b3";
    case Bound::tile:
    case Bound::wave: return "#e7298a";
    case Bound::cuda_core: return "#66a61e";
  }
  return "#999";
}

// Utilization and the loss causes (kLossCauses), in the order the stacked
// bars draw them; the losses named as loss_cause_names spells them.
struct Share {
  std::string name;
  const char* colour;
};
const std::array<Share, 7> kShares = [] {
  const char* colours[] = {"#e6ab02", "#a6761d", "#66a61e", "#d95f02", "#7570b3", "#bbbbbb"};
  std::array<Share, 7> shares{Share{"useful work", "#1b9e77"}};
  for (size_t i = 0; i < std::size(kLossCauses); ++i) shares[i + 1] = {loss_cause_names(kLossCauses[i]).label, colours[i]};
  return shares;
}();
std::array<double, 7> shares_of(double utilization, const Losses& l) {
  std::array<double, 7> out{utilization};
  for (size_t i = 0; i < std::size(kLossCauses); ++i) out[i + 1] = loss_share(l, kLossCauses[i]);
  return out;
}

std::string fmt_us(double us) { return us >= 1000 ? fmt::format("{:.2f} ms", us / 1000) : fmt::format("{:.1f} µs", us); }
std::string fmt_pct(double f) { return f < 0.001 ? fmt::format("{:.3f}%", 100 * f) : fmt::format("{:.1f}%", 100 * f); }

// A chart's legend: a coloured key and a name each, wrapped into rows within
// [left, right] from `top`; each name's width is estimated from its length
// at the 11 px tick font (the browser test checks that none is cut). Draws
// when `os` is not null; returns the bottom of the last row either way.
using LegendItem = std::pair<std::string, std::string>;  // name, colour
double legend(std::ostream* os, const std::vector<LegendItem>& items, double left, double right, double top) {
  const double row = 16;
  double at = left, line = top;
  for (const auto& [name, colour] : items) {
    const double width = 14 + 6.6 * double(name.size()) + 16;
    if (at > left && at + width > right) at = left, line += row;
    if (os)
      fmt::print(*os, R"~(<rect x="{:.0f}" y="{:.0f}" width="10" height="10" fill="{}"/><text x="{:.0f}" y="{:.0f}" class="tick">{}</text>)~",
                 at, line, colour, at + 14, line + 9, html_escape(name));
    at += width;
  }
  return line + row;
}

// A log axis from lo to hi over [a, b] pixels.
struct LogScale {
  double lo, hi, a, b;
  double operator()(double v) const {
    v = std::clamp(v, lo, hi);
    return a + (b - a) * (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  }
};

void log_ticks(std::ostream& os, const LogScale& s, bool x, double other_a, double other_b, const char* unit) {
  for (double d = std::pow(10.0, std::ceil(std::log10(s.lo))); d <= s.hi * 1.0001; d *= 10) {
    const double p = s(d);
    const std::string label = fmt::format("{:g}", d);
    if (x)
      fmt::print(os, R"~(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}" class="grid"/><text x="{0:.1f}" y="{3:.1f}" class="tick" text-anchor="middle">{4}{5}</text>)~",
                 p, other_a, other_b, other_b + 17, label, unit);
    else
      fmt::print(os, R"~(<line y1="{0:.1f}" y2="{0:.1f}" x1="{1:.1f}" x2="{2:.1f}" class="grid"/><text y="{0:.1f}" x="{3:.1f}" class="tick" text-anchor="end" dominant-baseline="middle">{4}{5}</text>)~",
                 p, other_a, other_b, other_a - 4, label, unit);
  }
}

// `fastest_gpu`: with --compare, which GPU runs the model fastest, first on the page.
void summary(std::ostream& os, const Analysis& a, const std::string& fastest_gpu) {
  const auto& t = a.total;
  const auto sh = shares_of(t.utilization, t.losses);
  os << "<section id=\"summary\">";
  if (!fastest_gpu.empty())
    fmt::print(os, R"~(<p class="lead">{} <a href="#compare-section">All GPUs below.</a></p>)~", html_escape(fastest_gpu));
  fmt::print(os, R"~(<div class="scroll"><table class="facts">
<tr><th>predicted latency</th><td>{}</td><th>throughput</th><td>{:.0f} samples/s</td></tr>
<tr><th>utilization</th><td><b>{}</b> of the {:.0f} TFLOP/s {} peak</td><th>kernels</th><td>{}{}</td></tr>
<tr><th>bandwidth utilization</th><td><b>{}</b> of the memory's rate</td><th>GPU busy</th><td>{} of the step</td></tr>
<tr><th>useful work</th><td>{:.2f} GFLOP</td><th>traffic</th><td>{:.3f} GB ({:.3f} GB from DRAM)</td></tr>
<tr><th>parameters</th><td>{:.2f} M, {:.1f} MB of weights</td><th>peak activations</th><td>{:.1f} MB</td></tr>
</table></div>
<p>{}: {}.</p>
<p>Time lost to: )~",
             fmt_us(t.time_us), t.throughput_per_s, fmt_pct(t.utilization), a.peak_tflops, dtype_name(a.dtype), t.kernels,
             a.partial ? " (PARTIAL: some kernels unmodelled)" : "", fmt_pct(t.bandwidth_utilization),
             fmt_pct(a.schedule.step_us > 0 ? a.schedule.gpu_busy_us / a.schedule.step_us : 0), double(t.flops) / 1e9,
             double(t.bytes) / 1e9, double(t.dram_bytes) / 1e9, double(a.memory.params) / 1e6,
             double(a.memory.weight_bytes) / 1e6, double(a.memory.peak_activation_bytes) / 1e6,
             views::interval_label(), html_escape(views::interval_text(a.interval)));
  for (size_t i = 1; i < sh.size(); ++i)
    fmt::print(os, R"~({}<span class="key" style="background:{}"></span>{} {})~", i > 1 ? ", " : "", kShares[i].colour,
               kShares[i].name, fmt_pct(sh[i]));
  fmt::print(os, ".</p>\n<p class=\"note\">Run as {}. Kernel times include L2 reuse between kernels; the "
                 "schedule adds the GPU's idle time between them ({}); docs/model.md explains every number.</p></section>\n",
             html_escape(a.exec.name()),
             a.exec.launch == Launch::graph ? fmt::format("a {:.2f} µs launch gap per kernel in CUDA-graph replay",
                                                          a.launch_gap_us)
                                            : fmt::format("the host {} issuing each op: {}", html_escape(a.host_id),
                                                          html_escape(views::bound_with_range(t))));
}

// Both timelines of one step (docs/model.md "Schedule"): the host issuing
// ops (a plain loop only) and the GPU running kernels, coloured by bound.
void timeline(std::ostream& os, const Analysis& a, const std::string& id) {
  const Schedule& s = a.schedule;
  if (s.kernels.empty() || s.step_us <= 0) return;
  const double w = 940, l = 60, r = w - 10, lane = 26, h = 2 * lane + 60;
  const auto x = [&](double us) { return l + (r - l) * us / s.step_us; };
  fmt::print(os, R"~(<section id="{5}-section"><h2>One step of {6} on both timelines</h2>
<svg id="{5}" class="chart" viewBox="0 0 {0} {1}" width="{0}" height="{1}" role="img" aria-label="timeline">
<text x="{2:.0f}" y="{3:.0f}" class="label" text-anchor="end">host</text><text x="{2:.0f}" y="{4:.0f}" class="label" text-anchor="end">GPU</text>)~",
             w, h, l - 6, 10 + lane / 2 + 4, 20 + lane * 1.5 + 4, id, html_escape(a.model_name));
  for (const auto& k : s.kernels) {
    if (k.host_end_us > k.host_start_us)
      fmt::print(os, R"~(<rect x="{:.2f}" y="10" width="{:.2f}" height="{:.0f}" fill="#888"/>)~", x(k.host_start_us),
                 std::max(0.3, x(k.host_end_us) - x(k.host_start_us)), lane);
    const auto& res = a.kernels[size_t(k.kernel)];
    fmt::print(os, R"~(<rect x="{:.2f}" y="{:.0f}" width="{:.2f}" height="{:.0f}" fill="{}"><title>{} {}</title></rect>)~",
               x(k.gpu_start_us), 20 + lane, std::max(0.3, x(k.gpu_end_us) - x(k.gpu_start_us)), lane,
               bound_colour(res.cost->bound), html_escape(res.kernel.name), fmt_us(k.gpu_end_us - k.gpu_start_us));
  }
  for (int i = 0; i <= 4; ++i)
    fmt::print(os, R"~(<text x="{:.1f}" y="{:.0f}" class="tick" text-anchor="{}">{}</text>)~", x(s.step_us * i / 4),
               h - 12, i == 0 ? "start" : i == 4 ? "end" : "middle", fmt_us(s.step_us * i / 4));
  fmt::print(os, "</svg><p class=\"note\">Step {}: GPU busy {} ({} of the step), host issue {}{}. Utilization "
                 "{} of the step, {} of the GPU's busy time.</p></section>\n",
             fmt_us(s.step_us), fmt_us(s.gpu_busy_us), fmt_pct(s.gpu_busy_us / s.step_us), fmt_us(s.host_busy_us),
             s.launch == Launch::graph ? " (one graph launch, overlapped)" : s.host_bound ? ": host-bound" : ": GPU-bound",
             fmt_pct(a.total.utilization), fmt_pct(a.total.gpu_busy_utilization));
}

// A decade-aligned log range around [lo, hi] (positive values).
LogScale fitted(double lo, double hi, double a, double b) {
  lo = std::pow(10.0, std::floor(std::log10(lo)));
  hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  return {lo, hi, a, b};
}

void kernel_point(std::ostream& os, const Analysis& a, const KernelResult& k, double px, double py) {
  const KernelCost& c = *k.cost;
  const double share = a.total.time_us > 0 ? c.time_us / a.total.time_us : 0;
  fmt::print(os, R"~(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}" class="pt{}"><title>{} ({}, {}): {}, {} of the step, utilization {}, bandwidth {}, {}-bound, main loss: {}</title></circle>)~",
             px, py, 2 + 30 * std::sqrt(share), bound_colour(c.bound), k.grouped_conv ? " ring" : "",
             html_escape(k.kernel.name), html_escape(k.kernel.ops.text()), html_escape(k.op_group), fmt_us(c.time_us), fmt_pct(share), fmt_pct(c.utilization),
             fmt_pct(c.bandwidth_utilization), bound_name(c.bound), main_loss(c));
}

// docs/report.md "tilewave report" (the roofline): the compute roofline of the kernels with FLOPs,
// and beside it every kernel against the memory roof, those without FLOPs in
// their own column: each panel's axes fitted to its points.
void roofline(std::ostream& os, const Analysis& a, const std::string& id) {
  const double w = 470, h = 380, l = 62, r = w - 14, top = 18, bottom = h - 42;
  const double peak = a.peak_tflops, bw_tbs = a.dram_gbs / 1000, ridge = bw_tbs > 0 ? peak / bw_tbs : 1;
  std::vector<const KernelResult*> with_flops, all;
  for (const auto& k : a.kernels) {
    if (!k.cost || k.cost->time_us <= 0 || k.cost->bytes <= 0) continue;
    all.push_back(&k);
    if (k.cost->flops > 0) with_flops.push_back(&k);
  }
  double with_flops_us = 0, all_us = 0;
  for (auto* k : all) all_us += k->cost->time_us;
  for (auto* k : with_flops) with_flops_us += k->cost->time_us;
  fmt::print(os, R"~(<section id="{0}-section"><h2>Roofline: compute and memory</h2><div class="pair">)~", id);
  // Compute: achieved FLOP/s (utilization x peak) against FLOP/byte.
  {
    double xlo = ridge, xhi = ridge, ylo = peak, yhi = peak;
    for (auto* k : with_flops) {
      const double achieved = k->cost->utilization * peak;
      xlo = std::min(xlo, k->cost->intensity), xhi = std::max(xhi, k->cost->intensity);
      if (achieved > 0) ylo = std::min(ylo, achieved);
    }
    const LogScale x = fitted(xlo, xhi * 1.5, l, r), y = fitted(ylo, yhi, bottom, top);
    fmt::print(os, R"~(<div><svg id="{0}" class="chart" viewBox="0 0 {1} {2}" width="{1}" height="{2}" role="img" aria-label="compute roofline">)~",
               id, w, h);
    log_ticks(os, x, true, top, bottom, "");
    log_ticks(os, y, false, l, r, "");
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.0f}" class="axis" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>)~",
               (l + r) / 2, h - 6);
    fmt::print(os, R"~(<text x="12" y="{0:.0f}" class="axis" text-anchor="middle" transform="rotate(-90 12 {0:.0f})">achieved TFLOP/s</text>)~",
               (top + bottom) / 2);
    fmt::print(os, R"~(<polyline class="ceiling" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)~", x(x.lo),
               y(bw_tbs * x.lo), x(ridge), y(peak), x(x.hi), y(peak));
    fmt::print(os, R"~(<text x="{:.1f}" y="{:.1f}" class="tick" text-anchor="end">{:.0f} TFLOP/s {} peak</text>)~", r - 4,
               y(peak) + 14, peak, dtype_name(a.dtype));
    for (auto* k : with_flops) kernel_point(os, a, *k, x(k->cost->intensity), y(k->cost->utilization * peak));
    fmt::print(os, "</svg><p class=\"note\">The {} kernels with FLOPs ({} of the kernels' time), against the "
                   "DRAM slope and the peak.</p></div>",
               with_flops.size(), fmt_pct(all_us > 0 ? with_flops_us / all_us : 0));
  }
  // Memory: bandwidth utilization against FLOP/byte; no FLOPs at the left.
  {
    const double strip = 44;  // the column of kernels without FLOPs
    double xlo = ridge, xhi = ridge, ylo = 1;
    for (auto* k : all) {
      if (k->cost->flops > 0) xlo = std::min(xlo, k->cost->intensity), xhi = std::max(xhi, k->cost->intensity);
      if (k->cost->bandwidth_utilization > 0) ylo = std::min(ylo, k->cost->bandwidth_utilization);
    }
    const LogScale x = fitted(xlo, xhi * 1.5, l + strip, r), y = fitted(std::max(ylo, 1e-6), 1, bottom, top);
    fmt::print(os, R"~(<div><svg id="{0}-memory" class="chart" viewBox="0 0 {1} {2}" width="{1}" height="{2}" role="img" aria-label="memory roofline">)~",
               id, w, h);
    log_ticks(os, x, true, top, bottom, "");
    for (double d = y.lo; d <= y.hi * 1.0001; d *= 10)
      fmt::print(os, R"~(<line y1="{0:.1f}" y2="{0:.1f}" x1="{1:.1f}" x2="{2:.1f}" class="grid"/><text y="{0:.1f}" x="{3:.1f}" class="tick" text-anchor="end" dominant-baseline="middle">{4:g}%</text>)~",
                 y(d), l, r, l - 4, 100 * d);
    fmt::print(os, R"~(<rect x="{0:.0f}" y="{1:.0f}" width="{2:.0f}" height="{3:.0f}" class="strip"/><text x="{4:.0f}" y="{5:.0f}" class="tick" text-anchor="middle" transform="rotate(-90 {4:.0f} {5:.0f})">no FLOPs</text>)~",
               l, top, strip - 6, bottom - top, l + (strip - 6) / 2 + 4, bottom - 30);
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.0f}" class="axis" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>)~",
               (l + strip + r) / 2, h - 6);
    fmt::print(os, R"~(<text x="12" y="{0:.0f}" class="axis" text-anchor="middle" transform="rotate(-90 12 {0:.0f})">bandwidth utilization</text>)~",
               (top + bottom) / 2);
    // The memory roof, and where the compute peak caps a kernel's DRAM traffic.
    const double cap_end = std::min(x.hi, ridge / y.lo);
    fmt::print(os, R"~(<polyline class="ceiling" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)~", l, y(1.0),
               x(ridge), y(1.0), x(cap_end), y(ridge / cap_end));
    fmt::print(os, R"~(<text x="{:.1f}" y="{:.1f}" class="tick" text-anchor="middle">memory roof: DRAM {:.1f} TB/s, L2 {:.1f} TB/s</text>)~",
               (l + strip + r) / 2, y(1.0) - 5, bw_tbs, a.l2_gbs / 1000);
    // Kernels without FLOPs spread across their column by launch order, so they do not hide each other.
    size_t i = 0, n_strip = 0;
    for (auto* k : all) n_strip += k->cost->flops == 0;
    for (auto* k : all) {
      const double py = y(std::max(k->cost->bandwidth_utilization, y.lo));
      if (k->cost->flops > 0) kernel_point(os, a, *k, x(k->cost->intensity), py);
      else kernel_point(os, a, *k, l + 4 + (strip - 14) * double(i++) / double(std::max<size_t>(1, n_strip - 1)), py);
    }
    fmt::print(os, "</svg><p class=\"note\">All {} kernels; the {} without FLOPs (copies, casts, activations, "
                   "pools) in the left column. Bandwidth utilization: the busier of DRAM and L2, of its rate "
                   "(docs/model.md \"Bandwidth utilization\").</p></div>",
               all.size(), n_strip);
  }
  os << "</div><p class=\"note\">Each kernel is a circle whose area is its share of the step, coloured by what "
        "bounds it: <span class=\"key\" style=\"background:#2b7bb9\"></span>compute, "
        "<span class=\"key\" style=\"background:#d95f02\"></span>memory, "
        "<span class=\"key\" style=\"background:#7570b3\"></span>latency (fixed cost, too little work), "
        "<span class=\"key\" style=\"background:#e7298a\"></span>tile or wave (padded work, idle SMs), "
        "<span class=\"key\" style=\"background:#66a61e\"></span>cuda-core (a slower unit than the tensor cores); "
        "ringed in black: depthwise and grouped convolutions. A kernel far below both roofs wastes the GPU: it loses to tiles, waves, main-loop efficiency or fixed "
        "cost. Hover for its figures.</p></section>\n";
}

// The --by op summary as a table, convolution kinds apart.
void op_table(std::ostream& os, const Analysis& a, const std::string& id) {
  fmt::print(os, R"~(<section id="{}-section"><h2>Time by op</h2><div class="scroll"><table class="cmp ops" id="{}"><tr><th>op</th><th>kernels</th><th>time</th><th>share of the step</th><th>of GPU time</th><th>GFLOP</th><th>utilization</th><th>bandwidth</th></tr>)~",
             id, id);
  for (const auto& g : a.by_op)
    fmt::print(os, R"~(<tr><td>{}</td><td>{}</td><td>{}</td><td><span class="bar" style="width:{:.0f}px"></span> {}</td><td>{}</td><td>{:.2f}</td><td>{}</td><td>{}</td></tr>)~",
               html_escape(g.name), g.kernels, fmt_us(g.time_us), 120 * g.step_share, fmt_pct(g.step_share), fmt_pct(g.gpu_busy_share),
               double(g.flops) / 1e9,
               fmt_pct(g.utilization), fmt_pct(g.bandwidth_utilization));
  os << "</table></div><p class=\"note\">Kernels grouped by the op they run first, depthwise and grouped convolutions "
        "apart from dense ones (`tilewave analyze --by op`). Utilization: useful FLOPs over the group's time at the "
        "peak; bandwidth: its memory traffic over its time at the memory's rate.</p></section>\n";
}

std::vector<const KernelResult*> slowest(const Analysis& a, size_t n) {
  std::vector<const KernelResult*> ks;
  for (const auto& k : a.kernels)
    if (k.cost) ks.push_back(&k);
  std::stable_sort(ks.begin(), ks.end(), [](auto* p, auto* q) { return p->cost->time_us > q->cost->time_us; });
  if (ks.size() > n) ks.resize(n);
  return ks;
}

void layer_bars(std::ostream& os, const Analysis& a) {
  const auto ks = slowest(a, 30);
  const double row = 18, label_w = 330, bar_w = 260, w = label_w + bar_w + 330, h = row * double(ks.size()) + 10;
  const double longest = ks.empty() ? 1 : ks.front()->cost->time_us;
  fmt::print(os, R"~(<section id="layers-section"><h2>The {} slowest of {} kernels</h2>
<svg id="layers" class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="slowest kernels">)~",
             ks.size(), a.kernels.size(), w, h, w, h);
  for (size_t i = 0; i < ks.size(); ++i) {
    const auto& k = *ks[i];
    const KernelCost& c = *k.cost;
    const double yy = 5 + row * double(i);
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.1f}" class="label" text-anchor="end">{}</text>)~", label_w - 6, yy + 12,
               html_escape(middle_ellipsis(compact_name(k.kernel.name) + " " + k.kernel.ops.text(), 48)));
    fmt::print(os, R"~(<rect x="{:.0f}" y="{:.1f}" width="{:.1f}" height="{:.0f}" fill="{}"><title>{}: {} ({}), {}, {}-bound, main loss: {}</title></rect>)~",
               label_w, yy + 2, std::max(1.0, bar_w * c.time_us / longest), row - 4, bound_colour(c.bound),
               html_escape(k.kernel.name), html_escape(k.kernel.ops.text()), html_escape(shape_text(k.kernel)), fmt_us(c.time_us),
               bound_name(c.bound), main_loss(c));
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.1f}" class="label">{}  util {}  {}</text>)~", label_w + bar_w + 8, yy + 12,
               fmt_us(c.time_us), fmt_pct(c.utilization), html_escape(shape_text(k.kernel)));
  }
  os << "</svg>\n<p class=\"note\">Bars: predicted time, coloured by bound as on the roofline; hover for the "
        "kernel's main loss.</p></section>\n";
}

void loss_bars(std::ostream& os, const Analysis& a) {
  const auto ks = slowest(a, 10);
  const double row = 22, label_w = 330, bar_w = 560, w = label_w + bar_w + 20;
  const double legend_top = row * double(ks.size() + 1) + 22;
  std::vector<LegendItem> keys;
  for (const auto& s : kShares) keys.emplace_back(s.name, s.colour);
  const double h = legend(nullptr, keys, 10, w - 10, legend_top) + 4;
  fmt::print(os, R"~(<section id="losses-section"><h2>Where the time goes, by cause</h2>
<svg id="losses" class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="loss split">)~", w, h, w, h);
  auto bar = [&](double yy, const std::string& label, double utilization, const Losses& l) {
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.1f}" class="label" text-anchor="end">{}</text>)~", label_w - 6, yy + 14,
               html_escape(label));
    double at = label_w;
    const auto sh = shares_of(utilization, l);
    for (size_t i = 0; i < sh.size(); ++i) {
      const double wi = bar_w * std::max(0.0, sh[i]);
      if (wi <= 0) continue;
      fmt::print(os, R"~(<rect x="{:.1f}" y="{:.1f}" width="{:.2f}" height="{:.0f}" fill="{}"><title>{}: {}</title></rect>)~", at,
                 yy + 2, wi, row - 5, kShares[i].colour, kShares[i].name, fmt_pct(sh[i]));
      at += wi;
    }
  };
  bar(4, "whole network", a.total.utilization, a.total.losses);
  for (size_t i = 0; i < ks.size(); ++i)
    bar(10 + row * double(i + 1), middle_ellipsis(compact_name(ks[i]->kernel.name), 48), ks[i]->cost->utilization, ks[i]->cost->losses);
  legend(&os, keys, 10, w - 10, legend_top);
  os << "</svg>\n<p class=\"note\">Each bar is 100% of a kernel's (or the network's) time: the useful-work share "
        "is its utilization, the rest is lost to each cause (docs/model.md \"Utilization and losses\").</p></section>\n";
}

// Ticks at 1, 2 or 5 times a power of ten, about five from zero to `top`.
double tick_step(double top) {
  if (!(top > 0)) return 1;
  const double raw = top / 5, decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

// Colours of op groups in the side-by-side split, by rank, and of the batch chart's lines.
const char* kGroupColours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e",
                               "#e6ab02", "#a6761d", "#1f78b4", "#999999"};

// One network's (or GPU's) curves over batch size.
struct BatchSeries {
  std::string label, colour;
  const std::vector<Analysis>* sweep;
};

// docs/report.md "tilewave report" (batch size): throughput, the step's
// latency and utilization over the batches swept, one line per network or
// GPU, each panel from zero and its own chart, so that the three reflow on a
// narrow page; the report's batch marked.
void batch_chart(std::ostream& os, const std::vector<BatchSeries>& series, int64_t chosen, const std::string& id,
                 const std::string& heading) {
  int64_t lo = 0, hi = 0;
  for (const auto& s : series)
    for (const auto& a : *s.sweep) lo = lo ? std::min(lo, a.batch) : a.batch, hi = std::max(hi, a.batch);
  if (hi <= lo) return;
  // Room above the plot for the title and, below it, the report's batch; right of it for the last batch's label.
  const double w = 310, h = 254, l = 58, r = w - 24, top = 48, bottom = h - 40;
  const LogScale x{double(lo), double(hi), l, r};
  fmt::print(os, R"~(<section id="{}-section"><h2>{}</h2><div class="panels">)~", id, heading);
  auto panel = [&](const char* name, const char* title, auto value, auto label) {
    double top_v = 0;
    for (const auto& s : series)
      for (const auto& a : *s.sweep) top_v = std::max(top_v, value(a));
    const double step = tick_step(top_v);
    const double y_hi = std::max(step, std::ceil(top_v / step) * step);
    const auto y = [&](double v) { return bottom - (bottom - top) * v / y_hi; };
    fmt::print(os, R"~(<svg id="{0}-{1}" class="chart" viewBox="0 0 {2} {3}" width="{2}" height="{3}" role="img" aria-label="{4}"><text x="4" y="16" class="axis">{4}</text>)~",
               id, name, w, h, title);
    for (double v = 0; v <= y_hi * 1.0001; v += step)
      fmt::print(os, R"~(<line x1="{0:.0f}" x2="{1:.0f}" y1="{2:.1f}" y2="{2:.1f}" class="grid"/><text x="{3:.0f}" y="{2:.1f}" class="tick" text-anchor="end" dominant-baseline="middle">{4}</text>)~",
                 l, r, y(v), l - 4, label(v));
    // Every batch swept is ticked; a label too close to the last one drawn is left out.
    double last_label = -1e9;
    for (const auto& a : *series.front().sweep) {
      const double px = x(double(a.batch));
      fmt::print(os, R"~(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.0f}" y2="{2:.0f}" class="grid"/>)~", px, top, bottom);
      if (px - last_label < 24) continue;
      fmt::print(os, R"~(<text x="{:.1f}" y="{:.0f}" class="tick" text-anchor="middle">{}</text>)~", px, bottom + 15,
                 a.batch);
      last_label = px;
    }
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.0f}" class="axis" text-anchor="middle">batch size (samples per step)</text>)~",
               (l + r) / 2, h - 6);
    if (chosen >= lo && chosen <= hi) {
      // The label runs into the plot, away from the nearer edge.
      const double px = x(double(chosen));
      const bool left_half = px < (l + r) / 2;
      fmt::print(os, R"~(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1:.0f}" y2="{2:.0f}" class="chosen"/><text x="{3:.1f}" y="{4:.0f}" class="tick" text-anchor="{5}">batch {6} (this report)</text>)~",
                 px, top - 2, bottom, left_half ? px + 3 : px - 3, top - 12, left_half ? "start" : "end", chosen);
    }
    for (const auto& s : series) {
      std::string points;
      for (const auto& a : *s.sweep) {
        const double px = x(double(a.batch)), py = y(value(a));
        points += fmt::format("{:.1f},{:.1f} ", px, py);
        fmt::print(os, R"~(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}, batch {}: {:.0f} samples/s, {} per step, utilization {}, {}-bound</title></circle>)~",
                   px, py, s.colour, html_escape(s.label), a.batch, a.total.throughput_per_s,
                   fmt_us(a.total.time_us), fmt_pct(a.total.utilization), html_escape(a.total.bound));
      }
      fmt::print(os, R"~(<polyline class="series" style="stroke:{}" points="{}"/>)~", s.colour, points);
    }
    os << "</svg>";
  };
  // Six digits and more in thousands: {:g} would print 1e+06.
  panel("throughput", "throughput (samples/s)", [](const Analysis& a) { return a.total.throughput_per_s; },
        [](double v) { return v >= 1e5 ? fmt::format("{:g}k", v / 1000) : fmt::format("{:g}", v); });
  panel("latency", "latency per step (ms)", [](const Analysis& a) { return a.total.time_us / 1000; },
        [](double v) { return fmt::format("{:g}", v); });
  panel("utilization", "utilization (% of the peak)", [](const Analysis& a) { return a.total.utilization; },
        [](double v) { return fmt::format("{:g}%", 100 * v); });
  os << "</div>";
  if (series.size() > 1) {
    os << "<p class=\"note\">";
    for (size_t i = 0; i < series.size(); ++i)
      fmt::print(os, R"~({}<span class="key" style="background:{}"></span>{})~", i ? ", " : "", series[i].colour,
                 html_escape(series[i].label));
    os << ".</p>";
  }
  os << "<p class=\"note\">Larger batches fill more tiles and waves and spread fixed and host costs, so throughput "
        "rises while the step's latency grows; the last partial wave and memory traffic set where throughput "
        "flattens. Hover a point for its figures and what bounds its step.</p></section>\n";
}

void compare_gpus(std::ostream& os, const Analysis& main, const std::vector<Analysis>& others) {
  if (others.empty()) return;
  std::vector<const Analysis*> all = {&main};
  for (const auto& a : others) all.push_back(&a);
  os << R"~(<section id="compare-section"><h2>Other GPUs, same model and batch</h2><div class="scroll"><table class="cmp"><tr><th>GPU</th><th>trust</th><th>throughput</th><th>latency</th><th>bound</th><th>utilization</th><th>time lost to tile / wave / efficiency / memory / fixed</th></tr>)~";
  for (const Analysis* a : all) {
    const Losses& l = a->total.losses;
    fmt::print(os, "<tr><td>{} ({})</td><td>{}</td><td>{:.0f} samples/s</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {} / {} / {} / {}</td></tr>",
               html_escape(a->gpu_name), html_escape(a->gpu_id), html_escape(trust_name(a->gpu_trust)),
               a->total.throughput_per_s, fmt_us(a->total.time_us), html_escape(a->total.bound), fmt_pct(a->total.utilization), fmt_pct(l.tile), fmt_pct(l.wave),
               fmt_pct(l.efficiency), fmt_pct(l.memory), fmt_pct(l.fixed));
  }
  os << "</table></div>";
  double longest = 0;
  for (const Analysis* a : all) longest = std::max(longest, a->total.time_us);
  const double row = 22, label_w = 260, bar_w = 400, w = label_w + bar_w + 100, h = row * double(all.size()) + 8;
  fmt::print(os, R"~(<svg id="compare" class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="GPUs compared">)~", w, h, w, h);
  for (size_t i = 0; i < all.size(); ++i) {
    const double yy = 4 + row * double(i);
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.1f}" class="label" text-anchor="end">{}</text><rect x="{:.0f}" y="{:.1f}" width="{:.1f}" height="{:.0f}" fill="#2b7bb9"/><text x="{:.1f}" y="{:.1f}" class="label">{}</text>)~",
               label_w - 6, yy + 14, html_escape(all[i]->gpu_name), label_w, yy + 2,
               std::max(1.0, bar_w * all[i]->total.time_us / longest), row - 5,
               label_w + bar_w * all[i]->total.time_us / longest + 6, yy + 14, fmt_us(all[i]->total.time_us));
  }
  os << "</svg><p class=\"note\">Trust: <i>calibrated</i> GPUs were measured; <i>fitted-from-benchmark</i> ones "
        "were fitted to published step times; <i>carried-over</i> ones take calibrated GPUs' constants by what each "
        "is a property of; <i>datasheet</i> ones only their datasheet (docs/calibration.md \"Other GPUs\", "
        "`tilewave gpus`).</p></section>\n";
}

void page_head(std::ostream& os, const std::string& title, const std::string& subtitle) {
  fmt::print(os, R"~(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="generator" content="tilewave {2}"><title>tilewave: {0}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 980px; margin: 1.5em auto; padding: 0 8px; color: #222; }}
svg.chart {{ max-width: 100%; height: auto; }} .scroll {{ overflow-x: auto; }} td {{ white-space: nowrap; }}
@media (max-width: 800px) {{ table.facts tr {{ display: grid; grid-template-columns: 12em 1fr; }} }}
.panels {{ display: flex; flex-wrap: wrap; gap: 8px 16px; }}
h1 {{ font-size: 1.4em; }} h2 {{ font-size: 1.15em; margin-top: 1.6em; }} h3 {{ font-size: 1em; }}
table.facts th, table.cmp th {{ text-align: left; font-weight: 600; padding: 2px 10px 2px 0; }}
table.facts td, table.cmp td {{ padding: 2px 18px 2px 0; }}
table.cmp {{ border-collapse: collapse; }} table.cmp tr:nth-child(even) {{ background: #f4f4f4; }}
table.ops td:nth-child(n+2) {{ text-align: right; }} .bar {{ display: inline-block; height: 9px; background: #2b7bb9; }}
.key {{ display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 2px; }}
.note {{ color: #555; font-size: 0.9em; }} .lead {{ font-size: 1.1em; font-weight: 600; }} .findings li {{ margin: 0.3em 0; }}
.pair {{ display: flex; gap: 8px; }} .pair > div {{ flex: 1; min-width: 0; }} .pair svg {{ width: 100%; height: auto; }}
svg text {{ font-size: 11px; fill: #333; }} svg .axis {{ font-size: 12px; }}
.grid {{ stroke: #ddd; stroke-width: 1; }} .ceiling {{ fill: none; stroke: #111; stroke-width: 2; }}
.chosen {{ stroke: #c00; stroke-width: 1.5; stroke-dasharray: 4 3; }} .strip {{ fill: #f3f3f3; }}
.series {{ fill: none; stroke-width: 2; }} svg .inbar {{ fill: #fff; font-size: 10px; dominant-baseline: middle; }} .pt {{ fill-opacity: 0.6; stroke: #fff; stroke-width: 0.5; }} .pt.ring {{ stroke: #000; stroke-width: 1.5; }}
</style></head><body>
<h1>{0}</h1>
<p class="note">{1}</p>
)~",
             html_escape(title), subtitle, version());
}

void page_end(std::ostream& os) {
  os << R"~(<script>
// The browser test's check: every chart drawn, with marks in it.
const charts = [...document.querySelectorAll('svg.chart')];
const empty = charts.filter(c => c.querySelectorAll('circle, rect, polyline').length === 0).map(c => c.id);
if (empty.length) console.error('tilewave report: empty charts: ' + empty.join(', '));
document.body.dataset.charts = String(charts.length - empty.length);
</script>
</body></html>
)~";
}

std::string source_line(const Analysis& a) {
  return fmt::format("{} ({}, {}); predicted by tilewave {} from {}.", html_escape(a.gpu_name), html_escape(a.gpu_id),
                     html_escape(trust_name(a.gpu_trust)), version(), html_escape(a.model_path));
}


// Each network's step as one bar, split by `parts` (name, share, title); the
// rest of the step is "other".
void split_bars(std::ostream& os, const std::string& id, const std::string& a_name, const std::string& b_name,
                const std::vector<std::tuple<std::string, const char*, double, double, std::string, std::string>>& parts) {
  const double row = 34, label_w = 170, bar_w = 740, w = label_w + bar_w + 20, legend_top = 2 * row + 16;
  std::vector<LegendItem> keys;
  for (const auto& part : parts) keys.emplace_back(std::get<0>(part), std::get<1>(part));
  const double h = legend(nullptr, keys, 10, w - 10, legend_top) + 4;
  fmt::print(os, R"~(<svg id="{0}" class="chart" viewBox="0 0 {1} {2}" width="{1}" height="{2}" role="img" aria-label="{0}">)~",
             id, w, h);
  for (int n = 0; n < 2; ++n) {
    const double yy = 6 + row * n;
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.1f}" class="label" text-anchor="end">{}</text>)~", label_w - 6,
               yy + row / 2 + 2, html_escape(n == 0 ? a_name : b_name));
    double at = label_w;
    for (const auto& [name, colour, share_a, share_b, title_a, title_b] : parts) {
      const double share = n == 0 ? share_a : share_b, wi = bar_w * std::max(0.0, share);
      if (wi <= 0) continue;
      fmt::print(os, R"~(<rect x="{:.1f}" y="{:.1f}" width="{:.2f}" height="{:.0f}" fill="{}"><title>{}</title></rect>)~",
                 at, yy, wi, row - 8, colour, html_escape(n == 0 ? title_a : title_b));
      if (wi > 44)
        fmt::print(os, R"~(<text x="{:.1f}" y="{:.1f}" class="inbar" text-anchor="middle">{}</text>)~", at + wi / 2,
                   yy + row / 2, fmt_pct(share));
      at += wi;
    }
  }
  legend(&os, keys, 10, w - 10, legend_top);
  os << "</svg>";
}

}  // namespace

void write_html_report(std::ostream& os, const ReportInput& in) {
  const Analysis& a = in.main;
  views::require_parts(a, ResultParts{}, "report");
  page_head(os, fmt::format("{} on {}, batch {}, {}", a.model_name, a.gpu_name, a.batch, a.exec.name()), source_line(a));
  summary(os, a, in.fastest_gpu);
  timeline(os, a, "timeline");
  roofline(os, a, "roofline");
  op_table(os, a, "ops");
  layer_bars(os, a);
  loss_bars(os, a);
  // One line per GPU: the report's own and each compared one.
  std::vector<BatchSeries> gpus = {{a.gpu_name, kGroupColours[0], &in.batch_sweep}};
  for (size_t i = 0; i < in.other_gpu_sweeps.size() && i < in.other_gpus.size(); ++i)
    gpus.push_back({in.other_gpus[i].gpu_name, kGroupColours[(i + 1) % std::size(kGroupColours)], &in.other_gpu_sweeps[i]});
  batch_chart(os, gpus, a.batch, "batch",
              gpus.size() > 1 ? "Throughput and latency against batch size, on each GPU" : "Throughput and latency against batch size");
  compare_gpus(os, a, in.other_gpus);
  page_end(os);
}

void write_html_comparison(std::ostream& os, const ReportInput& in_a, const ReportInput& in_b,
                           const NetworkComparison& c) {
  const Analysis &a = in_a.main, &b = in_b.main;
  page_head(os, fmt::format("{} vs {} on {}, batch {}, {}", c.a_name, c.b_name, a.gpu_name, a.batch, a.exec.name()),
            source_line(a) + "<br>" + source_line(b));
  fmt::print(os, R"~(<section id="summary"><h2>Which is faster</h2><p class="lead">{}</p><div class="scroll"><table class="cmp">)~",
             html_escape(c.faster));
  fmt::print(os, "<tr><th></th><th>{}</th><th>{}</th></tr>", html_escape(c.a_name), html_escape(c.b_name));
  const auto row = [&](const char* what, const std::string& x, const std::string& y) {
    fmt::print(os, "<tr><th>{}</th><td>{}</td><td>{}</td></tr>", what, x, y);
  };
  const auto both = [&](const char* what, auto text) { row(what, text(a), text(b)); };
  both("throughput", [](const Analysis& x) { return fmt::format("<b>{:.0f} samples/s</b>", x.total.throughput_per_s); });
  both("predicted latency", [](const Analysis& x) { return fmt_us(x.total.time_us) + " per step"; });
  both("what sets the step", [](const Analysis& x) { return html_escape(x.total.bound); });
  both("utilization", [](const Analysis& x) { return fmt_pct(x.total.utilization); });
  both("utilization of the GPU's busy time", [](const Analysis& x) { return fmt_pct(x.total.gpu_busy_utilization); });
  both("bandwidth utilization", [](const Analysis& x) { return fmt_pct(x.total.bandwidth_utilization); });
  both("useful work", [](const Analysis& x) { return fmt::format("{:.2f} GFLOP", double(x.total.flops) / 1e9); });
  both("traffic", [](const Analysis& x) { return fmt::format("{:.3f} GB", double(x.total.bytes) / 1e9); });
  both("parameters", [](const Analysis& x) { return fmt::format("{:.2f} M", double(x.memory.params) / 1e6); });
  both("kernels", [](const Analysis& x) { return fmt::format("{}", x.total.kernels); });
  both("GPU busy", [](const Analysis& x) {
    return fmt::format("{} of the step", fmt_pct(x.schedule.step_us > 0 ? x.schedule.gpu_busy_us / x.schedule.step_us : 0));
  });
  // A host-bound step on the fastest and slowest machines of the host's kind (docs/model.md "Schedule").
  if (a.total.host_bound || b.total.host_bound)
    both("step across machines", [](const Analysis& x) {
      return x.total.host_bound ? fmt::format("{} to {}", fmt_us(x.total.time_low_us), fmt_us(x.total.time_high_us))
                                : std::string("-");
    });
  os << "</table></div></section>\n<section id=\"findings-section\"><h2>Why</h2><ul class=\"findings\">";
  for (const auto& f : c.findings) fmt::print(os, "<li>{}</li>", html_escape(f));
  os << "</ul></section>\n";
  batch_chart(os, {{c.a_name, kGroupColours[0], &in_a.batch_sweep}, {c.b_name, kGroupColours[1], &in_b.batch_sweep}},
              a.batch, "batch", "Throughput and latency against batch size, both networks");

  os << R"~(<section id="split-section"><h2>Where each step goes</h2><h3>By cause</h3>)~";
  {
    std::vector<std::tuple<std::string, const char*, double, double, std::string, std::string>> parts;
    for (size_t i = 0; i < c.shares.size(); ++i)
      parts.emplace_back(c.shares[i].cause, kShares[i].colour, c.shares[i].a, c.shares[i].b,
                         fmt::format("{}: {}", c.shares[i].cause, fmt_pct(c.shares[i].a)),
                         fmt::format("{}: {}", c.shares[i].cause, fmt_pct(c.shares[i].b)));
    split_bars(os, "split-cause", c.a_name, c.b_name, parts);
  }
  os << "<h3>The GPU's busy time by op, convolution kinds apart</h3>";
  {
    std::vector<std::tuple<std::string, const char*, double, double, std::string, std::string>> parts;
    const size_t shown = std::min<size_t>(c.by_op.size(), 7);
    double rest_a = 1, rest_b = 1;
    const auto title = [](const KernelGroup& g) {
      return fmt::format("{}: {} kernels, {} of the GPU's time, utilization {}, bandwidth {}", g.name, g.kernels,
                         fmt_pct(g.gpu_busy_share), fmt_pct(g.utilization), fmt_pct(g.bandwidth_utilization));
    };
    for (size_t i = 0; i < shown; ++i) {
      const GroupPair& p = c.by_op[i];
      parts.emplace_back(p.name, kGroupColours[i], p.a.gpu_busy_share, p.b.gpu_busy_share, title(p.a), title(p.b));
      rest_a -= p.a.gpu_busy_share, rest_b -= p.b.gpu_busy_share;
    }
    parts.emplace_back("other ops", "#aaaaaa", std::max(0.0, rest_a), std::max(0.0, rest_b),
                       fmt::format("other ops: {}", fmt_pct(rest_a)), fmt::format("other ops: {}", fmt_pct(rest_b)));
    split_bars(os, "split-op", c.a_name, c.b_name, parts);
  }
  os << "<p class=\"note\">Above, each bar is one network's step (100%): useful work (the utilization) and the "
        "time lost to each cause (docs/model.md \"Utilization and losses\"); below, the kernels' own time (the "
        "GPU's busy time, 100%) by the op each runs. "
        "Hover a part for its figures.</p></section>\n";

  os << R"~(<section id="pair-ops-section"><h2>Time by op, both networks</h2><div class="scroll"><table class="cmp ops" id="pair-ops"><tr><th>op</th>)~";
  for (const auto* name : {&c.a_name, &c.b_name})
    fmt::print(os, "<th>{0}: kernels</th><th>of GPU time</th><th>utilization</th><th>bandwidth</th>", html_escape(*name));
  os << "</tr>";
  for (const auto& p : c.by_op) {
    fmt::print(os, "<tr><td>{}</td>", html_escape(p.name));
    for (const KernelGroup* g : {&p.a, &p.b})
      if (g->kernels)
        fmt::print(os, "<td>{}</td><td>{}</td><td>{}</td><td>{}</td>", g->kernels, fmt_pct(g->gpu_busy_share),
                   fmt_pct(g->utilization), fmt_pct(g->bandwidth_utilization));
      else
        os << "<td>-</td><td></td><td></td><td></td>";
    os << "</tr>";
  }
  os << "</table></div></section>\n";
  for (const auto* in : {&in_a, &in_b}) {
    fmt::print(os, "<h2>{}</h2>", html_escape(in == &in_a ? c.a_name : c.b_name));
    roofline(os, in->main, in == &in_a ? "roofline-a" : "roofline-b");
  }
  timeline(os, a, "timeline-a");
  timeline(os, b, "timeline-b");
  page_end(os);
}

void write_html(std::ostream& os, const ReportRun& r) {
  if (r.second && r.comparison) write_html_comparison(os, r.first, *r.second, *r.comparison);
  else write_html_report(os, r.first);
}

}  // namespace tilewave
