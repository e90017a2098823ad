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

std::vector<GroupPair> pair_groups(const std::vector<KernelGroup>& a, const std::vector<KernelGroup>& b) {
  std::vector<GroupPair> pairs;
  auto find = [&](const std::string& name) {
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const GroupPair& p) { return p.name == name; });
    return it != pairs.end() ? it : pairs.insert(pairs.end(), GroupPair{name, KernelGroup{name}, KernelGroup{name}});
  };
  for (const auto& g : a) find(g.name)->a = g;
  for (const auto& g : b) find(g.name)->b = g;
  std::stable_sort(pairs.begin(), pairs.end(), [](const GroupPair& x, const GroupPair& y) {
    return std::max(x.a.gpu_busy_share, x.b.gpu_busy_share) > std::max(y.a.gpu_busy_share, y.b.gpu_busy_share);
  });
  return pairs;
}

}  // namespace

NetworkComparison compare_networks(const Analysis& a, const Analysis& b) {
  NetworkComparison c;
  c.a_name = a.model_name;
  c.b_name = b.model_name;
  if (c.a_name == c.b_name) c.a_name += " (1)", c.b_name += " (2)";
  c.a_better = a.total.utilization >= b.total.utilization;
  const Analysis& better = c.a_better ? a : b;
  const Analysis& worse = c.a_better ? b : a;
  const std::string& better_name = c.a_better ? c.a_name : c.b_name;
  const std::string& worse_name = c.a_better ? c.b_name : c.a_name;
  c.utilization_ratio = worse.total.utilization > 0 ? better.total.utilization / worse.total.utilization : 0;
  // Useful work, then each loss as loss_cause_names spells it.
  c.shares.push_back({"useful work", a.total.utilization, b.total.utilization});
  for (LossCause cause : kLossCauses)
    c.shares.push_back({loss_cause_names(cause).label, loss_share(a.total.losses, cause), loss_share(b.total.losses, cause)});
  c.by_op = pair_groups(a.by_op, b.by_op);
  c.by_bound = pair_groups(a.by_bound, b.by_bound);
  std::sort(c.by_bound.begin(), c.by_bound.end(), [](const auto& x, const auto& y) { return x.name < y.name; });

  const auto worse_of = [&](const auto& pair) { return c.a_better ? pair.b : pair.a; };
  const auto better_of = [&](const auto& pair) { return c.a_better ? pair.a : pair.b; };
  if (a.gpu_id != b.gpu_id || a.exec.name() != b.exec.name() || a.batch != b.batch)
    c.findings.push_back(fmt::format("Not like for like: {} runs on {}, batch {}, {}; {} on {}, batch {}, {}.",
                                     c.a_name, a.gpu_id, a.batch, a.exec.name(), c.b_name, b.gpu_id, b.batch,
                                     b.exec.name()));
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
  if (worse.exec.launch == Launch::loop && worse.total.host_bound)
    c.findings.push_back(fmt::format("{}'s step is host-bound: the host issues {} kernels in {:.0f} us against {:.0f} us "
                                     "of GPU work ({} issues {} kernels).",
                                     worse_name, worse.total.kernels, worse.total.host_busy_us, worse.total.gpu_busy_us,
                                     better_name, better.total.kernels));
  // Shares of the GPU's busy time, not the step: a host-bound step hides the kernels' own mix.
  const auto extra_busy = [&](const GroupPair& p) { return worse_of(p).gpu_busy_share - better_of(p).gpu_busy_share; };
  // The op groups where the worse network spends the most extra GPU time.
  std::vector<const GroupPair*> extra;
  for (const auto& p : c.by_op)
    if (extra_busy(p) > 0) extra.push_back(&p);
  std::stable_sort(extra.begin(), extra.end(), [&](auto* x, auto* y) { return extra_busy(*x) > extra_busy(*y); });
  for (size_t i = 0; i < std::min<size_t>(2, extra.size()); ++i) {
    const KernelGroup& w = worse_of(*extra[i]);
    c.findings.push_back(fmt::format("{} spends {} of its GPU time ({} of the step) in {} kernels ({}, at {} "
                                     "utilization and {} of the memory bandwidth); {} spends {} of its GPU time.",
                                     worse_name, pct(w.gpu_busy_share), pct(w.step_share), extra[i]->name,
                                     w.kernels, pct(w.utilization), pct(w.bandwidth_utilization), better_name,
                                     pct(better_of(*extra[i]).gpu_busy_share)));
  }
  const auto weak = [&](const Analysis& x) {
    double s = 0;
    for (const auto& g : x.by_bound)
      if (g.name != "compute") s += g.gpu_busy_share;
    return s;
  };
  c.findings.push_back(fmt::format("Memory- and latency-bound kernels take {} of {}'s GPU time and {} of {}'s.",
                                   pct(weak(worse)), worse_name, pct(weak(better)), better_name));
  return c;
}

}  // namespace tilewave
