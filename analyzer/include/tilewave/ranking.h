// Several analysed models ordered (`tilewave rank`): by predicted latency,
// by FLOPs, and how well the two orders agree. Computed before any view.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "tilewave/analysis.h"

namespace tilewave {

struct Ranking {
  std::vector<size_t> by_time;     // indices, fastest first
  std::vector<size_t> by_flops;    // indices, fewest FLOPs first
  std::vector<size_t> flops_rank;  // per model, its 1-based place in by_flops
  double kendall_tau_flops = 0;    // tau-b of the FLOPs order against the predicted-latency order
  // Per model, what a row calls it: its name, or its path where two models
  // share a name (four files all named resnet18 read apart).
  std::vector<std::string> labels;
  size_t host_bound = 0;  // models whose step the host sets (Totals::bound "host")
};

// A model `rank` could not analyse: its file and why, a row after the ranking.
struct RankFailure {
  std::string model_path, reason;
};

// Orders are stable: models of equal time (or FLOPs) keep their given order.
Ranking rank_models(const std::vector<Analysis>& models);
// The analyses whose step the host sets (Totals::bound "host").
size_t count_host_bound(const std::vector<Analysis>& as);
// Kendall's tau-b between two orderings of the same items.
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace tilewave
