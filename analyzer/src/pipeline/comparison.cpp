// Two networks side by side (tilewave/comparison.h, docs/report.md "Two networks").
#include "tilewave/comparison.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tilewave {

namespace {

// Small shares keep three decimals, so that two tiny utilizations still differ in print.
std::string pct(double f) {
  if (f == 0) return "0%";
  return f < 0.001 ? fmt::format("{:.3f}%", 100 * f) : fmt::format("{:.1f}%", 100 * f);
}

// Throughputs within half a percent of each other are "as fast": the model is not that exact.
constexpr double kAsFastRatio = 1.005;

std::string time_text(double us) { return us >= 1000 ? fmt::format("{:.2f} ms", us / 1000) : fmt::format("{:.1f} us", us); }

// GFLOP per sample, the work throughput divides the GPU's useful rate by.
double gflop_per_sample(const Analysis& x) { return x.batch > 0 ? double(x.total.flops) / 1e9 / double(x.batch) : 0; }

std::vector<GroupPair> pair_groups(const std::vector<KernelGroup>& a, const std::vector<KernelGroup>& b) {
  std::vector<GroupPair> pairs;
  auto find = [&](const std::string& name) {
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const GroupPair& p) { return p.name == name; });
    return it != pairs.end() ? it : pairs.insert(pairs.end(), GroupPair{name, KernelGroup{name}, KernelGroup{name}});
  };
  for (const auto& g : a) find(g.name)->a = g;
  for (const auto& g : b) find(g.name)->b = g;
  std::stable_sort(pairs.begin(), pairs.end(), [](const GroupPair& x, const GroupPair& y) {
    return std::max(x.a.busy_share, x.b.busy_share) > std::max(y.a.busy_share, y.b.busy_share);
  });
  return pairs;
}

// The two networks ranked by `value` (a first on a tie), with their names, and
// the first's value over the second's (0 when the second's is 0).
struct Ranked {
  bool a_first;
  const Analysis &first, &second;
  const std::string &first_name, &second_name;
  double ratio;
};
Ranked rank_by(const Analysis& a, const Analysis& b, const std::string& a_name, const std::string& b_name,
               double (*value)(const Analysis&)) {
  const bool a_first = value(a) >= value(b);
  const Analysis &first = a_first ? a : b, &second = a_first ? b : a;
  return {a_first, first, second, a_first ? a_name : b_name, a_first ? b_name : a_name,
          value(second) > 0 ? value(first) / value(second) : 0};
}

}  // namespace

std::string fastest_gpu(const std::vector<const Analysis*>& runs) {
  if (runs.size() < 2) return "";
  std::vector<const Analysis*> by_rate = runs;
  std::stable_sort(by_rate.begin(), by_rate.end(), [](const Analysis* x, const Analysis* y) {
    return x->total.throughput_per_s > y->total.throughput_per_s;
  });
  const Analysis& fast = *by_rate.front();
  std::string s = fmt::format("Fastest on {}: {:.0f} samples/s, {} per step ({}-bound)", fast.gpu_name,
                              fast.total.throughput_per_s, time_text(fast.total.time_us), fast.total.bound);
  for (size_t i = 1; i < by_rate.size(); ++i) {
    const Analysis& x = *by_rate[i];
    const double ratio = x.total.throughput_per_s > 0 ? fast.total.throughput_per_s / x.total.throughput_per_s : 0;
    const std::string slower = ratio == 0 ? std::string("no throughput")
                               : ratio < kAsFastRatio ? std::string("as fast")
                                               : fmt::format("{:.2f}x slower", ratio);
    s += fmt::format("{} {} {} ({:.0f} samples/s, {}, {}-bound)", i == 1 ? ";" : ",", x.gpu_name, slower,
                     x.total.throughput_per_s, time_text(x.total.time_us), x.total.bound);
  }
  return s + ".";
}

NetworkComparison compare_networks(const Analysis& a, const Analysis& b) {
  NetworkComparison c;
  c.a_name = a.model_name;
  c.b_name = b.model_name;
  if (c.a_name == c.b_name) c.a_name += " (1)", c.b_name += " (2)";
  const Ranked by_use = rank_by(a, b, c.a_name, c.b_name, [](const Analysis& x) { return x.total.utilization; });
  const Analysis &better = by_use.first, &worse = by_use.second;
  const std::string &better_name = by_use.first_name, &worse_name = by_use.second_name;
  c.a_better = by_use.a_first;
  c.utilization_ratio = by_use.ratio;
  const Ranked by_rate = rank_by(a, b, c.a_name, c.b_name, [](const Analysis& x) { return x.total.throughput_per_s; });
  const Analysis &fast = by_rate.first, &slow = by_rate.second;
  const std::string &fast_name = by_rate.first_name, &slow_name = by_rate.second_name;
  c.a_faster = by_rate.a_first;
  c.throughput_ratio = by_rate.ratio;
  const std::string both_rates = fmt::format("{:.0f} samples/s against {:.0f}, {} per step against {}",
                                             fast.total.throughput_per_s, slow.total.throughput_per_s,
                                             time_text(fast.total.time_us), time_text(slow.total.time_us));
  c.faster = c.throughput_ratio > 0 && c.throughput_ratio < kAsFastRatio
                 ? fmt::format("{} and {} are as fast: {}.", fast_name, slow_name, both_rates)
             : c.throughput_ratio > 0
                 ? fmt::format("{} is {:.2f}x as fast as {}: {}.", fast_name, c.throughput_ratio, slow_name, both_rates)
                 : fmt::format("{} is faster: {}.", fast_name, both_rates);
  const auto shares = [](const Analysis& x) {
    const Losses& l = x.total.losses;
    return std::vector<double>{x.total.utilization, l.tile, l.wave, l.efficiency, l.memory, l.fixed, l.idle};
  };
  const char* causes[] = {"useful work", "tile quantization", "wave quantization", "main-loop efficiency",
                          "memory bound", "fixed per-kernel cost", "GPU idle between kernels"};
  const auto sa = shares(a), sb = shares(b);
  for (size_t i = 0; i < sa.size(); ++i) c.shares.push_back({causes[i], sa[i], sb[i]});
  c.by_op = pair_groups(a.by_op, b.by_op);
  c.by_bound = pair_groups(a.by_bound, b.by_bound);
  std::sort(c.by_bound.begin(), c.by_bound.end(), [](const auto& x, const auto& y) { return x.name < y.name; });

  const auto worse_of = [&](const auto& pair) { return c.a_better ? pair.b : pair.a; };
  const auto better_of = [&](const auto& pair) { return c.a_better ? pair.a : pair.b; };
  if (a.gpu_id != b.gpu_id || a.exec.name() != b.exec.name() || a.batch != b.batch)
    c.findings.push_back(fmt::format("Not like for like: {} runs on {}, batch {}, {}; {} on {}, batch {}, {}.",
                                     c.a_name, a.gpu_id, a.batch, a.exec.name(), c.b_name, b.gpu_id, b.batch,
                                     b.exec.name()));
  // What sets each step (docs/model.md "Schedule").
  const bool both_host_bound = fast.total.host_bound && slow.total.host_bound;
  if (both_host_bound)
    c.findings.push_back(fmt::format("Both steps are host-bound: the host issues {}'s {} kernels in {} and {}'s {} in "
                                     "{}, against {} and {} of GPU work.",
                                     fast_name, fast.total.kernels, time_text(fast.total.host_busy_us), slow_name,
                                     slow.total.kernels, time_text(slow.total.host_busy_us),
                                     time_text(fast.total.gpu_busy_us), time_text(slow.total.gpu_busy_us)));
  else
    c.findings.push_back(fmt::format("{}'s step is {}-bound, {}'s {}-bound.", fast_name, fast.total.bound, slow_name,
                                     slow.total.bound));
  // Throughput is utilization times the peak over the FLOPs per sample: which of the two decides.
  // Not when the host sets both steps: then its issue time, said above, decides, and only
  // how well each uses the GPU is said, for the findings on that which follow.
  const double fast_gflop = gflop_per_sample(fast), slow_gflop = gflop_per_sample(slow);
  if (!both_host_bound && fast_gflop > 0 && slow_gflop > 0 && fast.total.utilization > 0 && slow.total.utilization > 0) {
    const std::string work = fmt::format("{:.3g} GFLOP per sample against {:.3g}", fast_gflop, slow_gflop);
    const double use = fast.total.utilization / slow.total.utilization;
    // The one that uses the GPU better first.
    const Analysis &more = use >= 1 ? fast : slow, &less = use >= 1 ? slow : fast;
    const std::string usage = fmt::format("{} of the {:.0f} TFLOP/s peak against {}", pct(more.total.utilization),
                                          more.peak_tflops, pct(less.total.utilization));
    if (use >= 1 && fast_gflop <= slow_gflop)
      c.findings.push_back(fmt::format("{} uses the GPU {:.1f}x as well ({}) and needs {:.1f}x fewer FLOPs per sample ({}).",
                                       fast_name, use, usage, slow_gflop / fast_gflop, work));
    else if (use < 1)
      c.findings.push_back(fmt::format("{} uses the GPU {:.1f}x as well ({}), but {} needs {:.1f}x fewer FLOPs per "
                                       "sample ({}), which more than makes up for it.",
                                       slow_name, 1 / use, usage, fast_name, slow_gflop / fast_gflop, work));
    else
      c.findings.push_back(fmt::format("{} needs {:.1f}x more FLOPs per sample ({}), but uses the GPU {:.1f}x as well "
                                       "({}), which more than makes up for it.",
                                       fast_name, fast_gflop / slow_gflop, work, use, usage));
  } else
    c.findings.push_back(
      c.utilization_ratio > 0
          ? fmt::format("{} uses the GPU {:.1f}x as well as {}: {} of the {:.0f} TFLOP/s peak against {}.", better_name,
                        c.utilization_ratio, worse_name, pct(better.total.utilization), better.peak_tflops,
                        pct(worse.total.utilization))
          : fmt::format("{} does no useful work (no FLOPs); {} uses {} of the peak.", worse_name, better_name,
                        pct(better.total.utilization)));
  // The loss that the worse network pays most over the better one.
  size_t loss = 1;
  for (size_t i = 1; i < c.shares.size(); ++i)
    if (worse_of(c.shares[i]) - better_of(c.shares[i]) > worse_of(c.shares[loss]) - better_of(c.shares[loss])) loss = i;
  if (worse_of(c.shares[loss]) > better_of(c.shares[loss]))
    c.findings.push_back(fmt::format("The largest difference: {} loses {} of its step to {}, {} {}.", worse_name,
                                     pct(worse_of(c.shares[loss])), c.shares[loss].cause, better_name,
                                     pct(better_of(c.shares[loss]))));
  if (worse.exec.launch == Launch::loop && worse.total.host_bound && !better.total.host_bound)
    c.findings.push_back(fmt::format("{}'s step is host-bound: the host issues {} kernels in {:.0f} us against {:.0f} us "
                                     "of GPU work ({} issues {} kernels).",
                                     worse_name, worse.total.kernels, worse.total.host_busy_us, worse.total.gpu_busy_us,
                                     better_name, better.total.kernels));
  // Shares of the GPU's busy time, not the step: a host-bound step hides the kernels' own mix.
  const auto extra_busy = [&](const GroupPair& p) { return worse_of(p).busy_share - better_of(p).busy_share; };
  // The op groups where the worse network spends the most extra GPU time.
  std::vector<const GroupPair*> extra;
  for (const auto& p : c.by_op)
    if (extra_busy(p) > 0) extra.push_back(&p);
  std::stable_sort(extra.begin(), extra.end(), [&](auto* x, auto* y) { return extra_busy(*x) > extra_busy(*y); });
  for (size_t i = 0; i < std::min<size_t>(2, extra.size()); ++i) {
    const KernelGroup& w = worse_of(*extra[i]);
    c.findings.push_back(fmt::format("{} spends {} of its GPU time ({} of the step) in {} kernels ({}, at {} "
                                     "utilization and {} of the memory bandwidth); {} spends {} of its GPU time.",
                                     worse_name, pct(w.busy_share), pct(w.share), extra[i]->name,
                                     w.kernels, pct(w.utilization), pct(w.bandwidth_utilization), better_name,
                                     pct(better_of(*extra[i]).busy_share)));
  }
  const auto weak = [&](const Analysis& x) {
    double s = 0;
    for (const auto& g : x.by_bound)
      if (g.name != "compute") s += g.busy_share;
    return s;
  };
  c.findings.push_back(fmt::format("Memory- and latency-bound kernels take {} of {}'s GPU time and {} of {}'s.",
                                   pct(weak(worse)), worse_name, pct(weak(better)), better_name));
  return c;
}

}  // namespace tilewave
