// Two networks on one GPU and configuration, side by side (`report --vs`,
// `compare A.onnx B.onnx`): which is faster, what each spends its step on and
// why, and why one uses the GPU better (docs/report.md "Two networks"). Computed from two analyses;
// the views only present it.
#pragma once
#include <string>
#include <vector>

#include "tilewave/analysis.h"

namespace tilewave {

// One group (an op, convolution kinds apart, or a bound) in both networks; a
// network without such kernels has a zero group.
struct GroupPair {
  std::string name;
  KernelGroup a, b;
};

// A share of the step in both networks: useful work or one loss cause.
struct ShareDifference {
  std::string cause;  // "useful work", "tile quantization", ..., "GPU idle between kernels"
  double a = 0, b = 0;
};

struct NetworkComparison {
  std::string a_name, b_name;
  // What a user asks first: which one is faster. a_faster: a's throughput
  // (samples/s) is at least b's; throughput_ratio: the faster one's over the
  // other's (0 when the other's is 0); `faster`: that, with both latencies,
  // in one sentence.
  bool a_faster = true;
  double throughput_ratio = 0;
  std::string faster;
  bool a_better = true;  // a's utilization is at least b's
  double utilization_ratio = 0;  // the better one's over the other's (0 when the other's is 0)
  std::vector<ShareDifference> shares;  // useful work and the six losses, in kShare order
  std::vector<GroupPair> by_op;         // every op group of either, the larger share of GPU time first
  std::vector<GroupPair> by_bound;      // compute, latency, memory
  // Why, most telling first: what sets each step; utilization against the
  // FLOPs each sample needs (throughput is utilization times the peak over
  // them); then why one uses the GPU better: the loss that differs most, a
  // host-bound step, the op groups where the worse network spends the most
  // extra time at low utilization, and the share of time in memory- and
  // latency-bound kernels.
  std::vector<std::string> findings;
};

// One model's runs on several GPUs (the report's and its --compare ones),
// fastest first, in one sentence: "Fastest on X: N samples/s, T per step
// (bound); Y 1.62x slower (...), ...". Empty for fewer than two runs.
std::string fastest_gpu(const std::vector<const Analysis*>& runs);

// `a` and `b` should share the GPU and configuration; a note in `findings`
// says when they do not.
NetworkComparison compare_networks(const Analysis& a, const Analysis& b);

}  // namespace tilewave
