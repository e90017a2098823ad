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

#include "tilewave/report.h"
#include "tilewave/text.h"

namespace tilewave {

namespace {

const char* bound_colour(Bound b) {
  switch (b) {
    case Bound::compute: return "#2b7bb9";
    case Bound::memory: return "#d95f02";
    case Bound::latency: return "#7570b3";
  }
  return "#999";
}

// Utilization and the loss causes, in the order the stacked bars draw them.
struct Share {
  const char* name;
  const char* colour;
};
const Share kShares[] = {{"useful work", "#1b9e77"},     {"tile quantization", "#e6ab02"},
                         {"wave quantization", "#a6761d"}, {"main-loop efficiency", "#66a61e"},
                         {"memory bound", "#d95f02"},     {"fixed per-kernel cost", "#7570b3"},
                         {"GPU idle between kernels", "#bbbbbb"}};
std::array<double, 7> shares_of(double utilization, const Losses& l) {
  return {utilization, l.tile, l.wave, l.efficiency, l.memory, l.fixed, l.idle};
}

std::string fmt_us(double us) { return us >= 1000 ? fmt::format("{:.2f} ms", us / 1000) : fmt::format("{:.1f} µs", us); }
std::string fmt_pct(double f) { return f < 0.001 ? fmt::format("{:.3f}%", 100 * f) : fmt::format("{:.1f}%", 100 * f); }

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
                 p, other_a, other_b, other_b + 14, label, unit);
    else
      fmt::print(os, R"~(<line y1="{0:.1f}" y2="{0:.1f}" x1="{1:.1f}" x2="{2:.1f}" class="grid"/><text y="{0:.1f}" x="{3:.1f}" class="tick" text-anchor="end" dominant-baseline="middle">{4}{5}</text>)~",
                 p, other_a, other_b, other_a - 4, label, unit);
  }
}

void summary(std::ostream& os, const Analysis& a) {
  const auto& t = a.total;
  const auto sh = shares_of(t.utilization, t.losses);
  fmt::print(os, R"~(<section id="summary"><table class="facts">
<tr><th>predicted latency</th><td>{}</td><th>throughput</th><td>{:.0f} samples/s</td></tr>
<tr><th>utilization</th><td><b>{}</b> of the {:.0f} TFLOP/s {} peak</td><th>kernels</th><td>{}{}</td></tr>
<tr><th>useful work</th><td>{:.2f} GFLOP</td><th>DRAM traffic</th><td>{:.3f} GB</td></tr>
</table>
<p>Time lost to: )~",
             fmt_us(t.time_us), t.throughput_per_s, fmt_pct(t.utilization), a.peak_tflops, dtype_name(a.dtype), t.kernels,
             a.partial ? " (PARTIAL: some kernels unmodelled)" : "", double(t.flops) / 1e9, double(t.bytes) / 1e9);
  for (size_t i = 1; i < sh.size(); ++i)
    fmt::print(os, R"~({}<span class="key" style="background:{}"></span>{} {})~", i > 1 ? ", " : "", kShares[i].colour,
               kShares[i].name, fmt_pct(sh[i]));
  fmt::print(os, ".</p>\n<p class=\"note\">Run as {}. Kernel times include L2 reuse between kernels; the "
                 "schedule adds the GPU's idle time between them ({}); docs/model.md explains every number.</p></section>\n",
             html_escape(a.exec.name()),
             a.exec.launch == Launch::graph ? fmt::format("a {:.2f} µs launch gap per kernel in CUDA-graph replay",
                                                          a.launch_gap_us)
                                            : fmt::format("the host {} issuing each op: {}", html_escape(a.host_id),
                                                          t.host_bound ? "host-bound" : "GPU-bound"));
}

// Both timelines of one step (docs/model.md "Schedule"): the host issuing
// ops (a plain loop only) and the GPU running kernels, coloured by bound.
void timeline(std::ostream& os, const Analysis& a) {
  const Schedule& s = a.schedule;
  if (s.kernels.empty() || s.step_us <= 0) return;
  const double w = 940, l = 60, r = w - 10, lane = 26, h = 2 * lane + 60;
  const auto x = [&](double us) { return l + (r - l) * us / s.step_us; };
  fmt::print(os, R"~(<section id="timeline-section"><h2>One step on both timelines</h2>
<svg id="timeline" class="chart" viewBox="0 0 {0} {1}" width="{0}" height="{1}" role="img" aria-label="timeline">
<text x="{2:.0f}" y="{3:.0f}" class="label" text-anchor="end">host</text><text x="{2:.0f}" y="{4:.0f}" class="label" text-anchor="end">GPU</text>)~",
             w, h, l - 6, 10 + lane / 2 + 4, 20 + lane * 1.5 + 4);
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

void roofline(std::ostream& os, const Analysis& a) {
  const double w = 760, h = 420, l = 70, r = w - 20, top = 20, bottom = h - 45;
  const double peak = a.peak_tflops, bw_tbs = a.dram_gbs / 1000;
  LogScale x{0.01, 1e4, l, r}, y{1e-4, std::pow(10.0, std::ceil(std::log10(peak))), bottom, top};
  fmt::print(os, R"~(<section id="roofline-section"><h2>Roofline</h2>
<svg id="roofline" class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="roofline">)~", w, h, w, h);
  log_ticks(os, x, true, top, bottom, "");
  log_ticks(os, y, false, l, r, "");
  fmt::print(os, R"~(<text x="{:.0f}" y="{:.0f}" class="axis" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>)~", (l + r) / 2, h - 8);
  fmt::print(os, R"~(<text x="14" y="{:.0f}" class="axis" text-anchor="middle" transform="rotate(-90 14 {:.0f})">achieved TFLOP/s</text>)~",
             (top + bottom) / 2, (top + bottom) / 2);
  // The ceilings: DRAM bandwidth times intensity, then the peak.
  const double ridge = peak / bw_tbs;
  fmt::print(os, R"~(<polyline class="ceiling" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)~", x(x.lo), y(bw_tbs * x.lo),
             x(ridge), y(peak), x(x.hi), y(peak));
  fmt::print(os, R"~(<text x="{:.1f}" y="{:.1f}" class="tick">{:.0f} TFLOP/s peak, {:.1f} TB/s DRAM</text>)~", x(ridge) + 6,
             y(peak) + 14, peak, bw_tbs);
  int no_flops = 0;
  for (const auto& k : a.kernels) {
    if (!k.cost) continue;
    const KernelCost& c = *k.cost;
    if (c.flops <= 0 || c.bytes <= 0 || c.time_us <= 0) {
      ++no_flops;
      continue;
    }
    const double share = a.total.time_us > 0 ? c.time_us / a.total.time_us : 0;
    const double achieved = double(c.flops) / (c.time_us * 1e-6) / 1e12;
    fmt::print(os, R"~(<circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}" class="pt"><title>{} ({}): {}, {} of time, {} utilization, {}-bound</title></circle>)~",
               x(double(c.flops) / double(c.bytes)), y(achieved), 2 + 40 * std::sqrt(share), bound_colour(c.bound),
               html_escape(k.kernel.name), html_escape(k.kernel.ops), fmt_us(c.time_us), fmt_pct(share),
               fmt_pct(c.utilization), bound_name(c.bound));
  }
  os << "</svg>\n<p class=\"note\">Each kernel is a circle whose area is its share of the time, coloured by what "
        "bounds it: <span class=\"key\" style=\"background:#2b7bb9\"></span>compute, "
        "<span class=\"key\" style=\"background:#d95f02\"></span>memory, "
        "<span class=\"key\" style=\"background:#7570b3\"></span>latency (fixed cost, too little work). "
        "A kernel far below the line loses to tiles, waves, main-loop efficiency or fixed cost.";
  if (no_flops) fmt::print(os, " {} kernels without FLOPs (copies, layout changes) are not drawn.", no_flops);
  os << "</p></section>\n";
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
               html_escape(middle_ellipsis(compact_name(k.kernel.name) + " " + k.kernel.ops, 48)));
    fmt::print(os, R"~(<rect x="{:.0f}" y="{:.1f}" width="{:.1f}" height="{:.0f}" fill="{}"><title>{}: {} ({}), {}, {}-bound, main loss: {}</title></rect>)~",
               label_w, yy + 2, std::max(1.0, bar_w * c.time_us / longest), row - 4, bound_colour(c.bound),
               html_escape(k.kernel.name), html_escape(k.kernel.ops), html_escape(shape_text(k.kernel)), fmt_us(c.time_us),
               bound_name(c.bound), main_loss(c));
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.1f}" class="label">{}  util {}  {}</text>)~", label_w + bar_w + 8, yy + 12,
               fmt_us(c.time_us), fmt_pct(c.utilization), html_escape(shape_text(k.kernel)));
  }
  os << "</svg>\n<p class=\"note\">Bars: predicted time, coloured by bound as on the roofline; hover for the "
        "kernel's main loss.</p></section>\n";
}

void loss_bars(std::ostream& os, const Analysis& a) {
  const auto ks = slowest(a, 10);
  const double row = 22, label_w = 330, bar_w = 560, w = label_w + bar_w + 20, h = row * double(ks.size() + 1) + 40;
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
  double at = 10;
  const double yy = h - 18;
  for (const auto& s : kShares) {
    fmt::print(os, R"~(<rect x="{:.0f}" y="{:.0f}" width="10" height="10" fill="{}"/><text x="{:.0f}" y="{:.0f}" class="tick">{}</text>)~",
               at, yy, s.colour, at + 14, yy + 9, s.name);
    at += 14 + 6.0 * double(std::string(s.name).size()) + 16;
  }
  os << "</svg>\n<p class=\"note\">Each bar is 100% of a kernel's (or the network's) time: the useful-work share "
        "is its utilization, the rest is lost to each cause (docs/model.md \"Losses\").</p></section>\n";
}

void batch_chart(std::ostream& os, const std::vector<Analysis>& sweep) {
  if (sweep.size() < 2) return;
  const double w = 760, h = 300, l = 70, r = w / 2 - 20, top = 24, bottom = h - 45;
  os << R"~(<section id="batch-section"><h2>Utilization and throughput against batch size</h2>)~";
  fmt::print(os, R"~(<svg id="batch" class="chart" viewBox="0 0 {} {}" width="{}" height="{}" role="img" aria-label="batch size">)~", w, h, w, h);
  LogScale x1{double(sweep.front().batch), double(sweep.back().batch), l, r};
  double max_u = 0, max_t = 0;
  for (const auto& a : sweep) max_u = std::max(max_u, a.total.utilization), max_t = std::max(max_t, a.total.throughput_per_s);
  auto panel = [&](double offset, const char* title, double max_v, auto value, auto label) {
    fmt::print(os, R"~(<text x="{:.0f}" y="14" class="axis">{}</text>)~", l + offset, title);
    fmt::print(os, R"~(<line x1="{0:.0f}" x2="{0:.0f}" y1="{1:.0f}" y2="{2:.0f}" class="grid"/><line x1="{0:.0f}" x2="{3:.0f}" y1="{2:.0f}" y2="{2:.0f}" class="grid"/>)~",
               l + offset, top, bottom, r + offset);
    std::string points;
    for (const auto& a : sweep) {
      const double px = x1(double(a.batch)) + offset, py = bottom - (bottom - top) * value(a) / (max_v > 0 ? max_v : 1);
      points += fmt::format("{:.1f},{:.1f} ", px, py);
      fmt::print(os, R"~(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="#2b7bb9"><title>batch {}: {}</title></circle><text x="{:.1f}" y="{:.0f}" class="tick" text-anchor="middle">{}</text>)~",
                 px, py, a.batch, label(value(a)), px, bottom + 14, a.batch);
    }
    fmt::print(os, R"~(<polyline class="series" points="{}"/>)~", points);
    fmt::print(os, R"~(<text x="{:.0f}" y="{:.0f}" class="tick" text-anchor="end">{}</text>)~", l + offset - 4, top + 4,
               label(max_v));
  };
  panel(0, "utilization", max_u, [](const Analysis& a) { return a.total.utilization; },
        [](double v) { return fmt_pct(v); });
  panel(w / 2, "throughput (samples/s)", max_t, [](const Analysis& a) { return a.total.throughput_per_s; },
        [](double v) { return fmt::format("{:.0f}/s", v); });
  fmt::print(os, R"~(<text x="{:.0f}" y="{:.0f}" class="axis" text-anchor="middle">batch size</text></svg>)~", w / 2, h - 6);
  os << "<p class=\"note\">Larger batches fill more tiles and waves and spread fixed costs; the last partial wave "
        "and memory traffic set where the curve flattens.</p></section>\n";
}

void compare_gpus(std::ostream& os, const Analysis& main, const std::vector<Analysis>& others) {
  if (others.empty()) return;
  std::vector<const Analysis*> all = {&main};
  for (const auto& a : others) all.push_back(&a);
  os << R"~(<section id="compare-section"><h2>Other GPUs, same model and batch</h2><table class="cmp"><tr><th>GPU</th><th>trust</th><th>latency</th><th>throughput</th><th>utilization</th><th>time lost to tile / wave / efficiency / memory / fixed</th></tr>)~";
  for (const Analysis* a : all) {
    const Losses& l = a->total.losses;
    fmt::print(os, "<tr><td>{} ({})</td><td>{}</td><td>{}</td><td>{:.0f}/s</td><td>{}</td><td>{} / {} / {} / {} / {}</td></tr>",
               html_escape(a->gpu_name), html_escape(a->gpu_id), html_escape(a->gpu_trust), fmt_us(a->total.time_us),
               a->total.throughput_per_s, fmt_pct(a->total.utilization), fmt_pct(l.tile), fmt_pct(l.wave),
               fmt_pct(l.efficiency), fmt_pct(l.memory), fmt_pct(l.fixed));
  }
  os << "</table>";
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

}  // namespace

void write_html_report(std::ostream& os, const ReportInput& in) {
  const Analysis& a = in.main;
  const std::string title = fmt::format("{} on {}, batch {}, {}", a.model_name, a.gpu_name, a.batch, a.exec.name());
  fmt::print(os, R"~(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tilewave: {0}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 980px; margin: 1.5em auto; color: #222; }}
h1 {{ font-size: 1.4em; }} h2 {{ font-size: 1.15em; margin-top: 1.6em; }}
table.facts th, table.cmp th {{ text-align: left; font-weight: 600; padding: 2px 10px 2px 0; }}
table.facts td, table.cmp td {{ padding: 2px 18px 2px 0; }}
table.cmp {{ border-collapse: collapse; }} table.cmp tr:nth-child(even) {{ background: #f4f4f4; }}
.key {{ display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 2px; }}
.note {{ color: #555; font-size: 0.9em; }}
svg text {{ font-size: 11px; fill: #333; }} svg .axis {{ font-size: 12px; }}
.grid {{ stroke: #ddd; stroke-width: 1; }} .ceiling {{ fill: none; stroke: #111; stroke-width: 2; }}
.series {{ fill: none; stroke: #2b7bb9; stroke-width: 2; }} .pt {{ fill-opacity: 0.6; stroke: #fff; stroke-width: 0.5; }}
</style></head><body>
<h1>{0}</h1>
<p class="note">{1} ({2}, {3}); predicted by tilewave from {4}.</p>
)~",
             html_escape(title), html_escape(a.gpu_name), html_escape(a.gpu_id), html_escape(a.gpu_trust),
             html_escape(a.model_path));
  summary(os, a);
  timeline(os, a);
  roofline(os, a);
  layer_bars(os, a);
  loss_bars(os, a);
  batch_chart(os, in.batch_sweep);
  compare_gpus(os, a, in.other_gpus);
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

}  // namespace tilewave
