#include "tilewave/ranking.h"

#include <unordered_map>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tilewave {

// Kendall's tau-b between two orderings of the same items.
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y) {
  long concordant = 0, discordant = 0, tx = 0, ty = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) ++tx;
      else if (dy == 0) ++ty;
      else if ((dx > 0) == (dy > 0)) ++concordant;
      else ++discordant;
    }
  const double denom = std::sqrt(double(concordant + discordant + tx) * double(concordant + discordant + ty));
  return denom > 0 ? (concordant - discordant) / denom : 0.0;
}

size_t count_host_bound(const std::vector<Analysis>& as) {
  return size_t(std::count_if(as.begin(), as.end(), [](const Analysis& a) { return a.total.bound == "host"; }));
}

Ranking rank_models(const std::vector<Analysis>& as) {
  Ranking r;
  r.by_time.resize(as.size());
  r.by_flops.resize(as.size());
  std::iota(r.by_time.begin(), r.by_time.end(), 0);
  std::iota(r.by_flops.begin(), r.by_flops.end(), 0);
  std::stable_sort(r.by_time.begin(), r.by_time.end(), [&](size_t x, size_t y) { return as[x].total.time_us < as[y].total.time_us; });
  std::stable_sort(r.by_flops.begin(), r.by_flops.end(), [&](size_t x, size_t y) { return as[x].total.flops < as[y].total.flops; });
  r.flops_rank.resize(as.size());
  for (size_t i = 0; i < r.by_flops.size(); ++i) r.flops_rank[r.by_flops[i]] = i + 1;
  std::vector<double> time, flops;
  for (const auto& a : as) time.push_back(a.total.time_us), flops.push_back(double(a.total.flops));
  r.kendall_tau_flops = kendall_tau(time, flops);
  std::unordered_map<std::string, int> named;
  for (const auto& a : as) ++named[a.model_name];
  for (const auto& a : as) r.labels.push_back(named[a.model_name] > 1 ? a.model_path : a.model_name);
  r.host_bound = count_host_bound(as);
  return r;
}

}  // namespace tilewave
