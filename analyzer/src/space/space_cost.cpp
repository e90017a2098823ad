#include "tilewave/space_cost.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "tilewave/analysis.h"
#include "tilewave/error.h"
#include "tilewave/pipeline.h"

namespace tilewave::space {

SpaceEvaluator::SpaceEvaluator(const SearchSpace& space, const GpuModel& gpu, const ExecutionConfig& exec,
                               std::shared_ptr<const HostModel> host, int64_t batch)
    : SpaceEvaluator(space, gpu, exec, std::move(host), batch, std::make_shared<SharedTable>()) {}

SpaceEvaluator::SpaceEvaluator(const SearchSpace& space, const GpuModel& gpu, const ExecutionConfig& exec,
                               std::shared_ptr<const HostModel> host, int64_t batch,
                               std::shared_ptr<SharedTable> shared)
    : space_(space),
      gpu_(gpu.runtime == exec.runtime_profile().name() ? gpu : gpu_for(gpu, exec)),
      cost_model_(gpu_),
      exec_(exec),
      host_(host ? std::move(host) : std::make_shared<const HostModel>(builtin_host())),
      batch_(batch),
      peak_flops_(gpu_.peak_flops(exec.dtype)),
      shared_(std::move(shared)) {}

std::unique_ptr<SpaceEvaluator> SpaceEvaluator::sibling() const {
  // gpu_ is already specialised: it is taken as it is.
  return std::unique_ptr<SpaceEvaluator>(new SpaceEvaluator(space_, gpu_, exec_, host_, batch_, shared_));
}

const SegmentCost& SpaceEvaluator::segment_cost(const Block* blocks, size_t count, const Shape4& in, bool first,
                                                bool last) {
  SegmentKey key;
  size_t at = 0;
  for (int64_t v : {int64_t(first), int64_t(last), in.n, in.c, in.h, in.w}) key.v[at++] = v;
  for (size_t i = 0; i < count; ++i) {
    key.v[at++] = int64_t(blocks[i].kind) + 1;
    for (int64_t v : blocks[i].params) key.v[at++] = v;
  }
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    const auto at = shared_->segments.find(key);
    if (at != shared_->segments.end()) return memo_.emplace(key, at->second).first->second;
  }
  // Costed outside the lock: two threads may cost one block at once, with equal results.
  const SegmentCost cost = cost_segment(blocks, count, in, first, last);
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->segments.emplace(key, cost);
  }
  return memo_.emplace(key, cost).first->second;
}

SegmentCost SpaceEvaluator::cost_segment(const Block* blocks, size_t count, const Shape4& in, bool first,
                                         bool last) const {
  const WrittenModel written = write_blocks(space_, std::vector<Block>(blocks, blocks + count), in);
  LoadOptions load;
  Model model = load_onnx_proto(written.proto, space_.source_file, load);
  // Only the network's first block reads the fp32 input autocast casts; a
  // later block's input is the block before it's half output (eager's type
  // flow reads it from the input's type, inductor's casts are dropped below).
  constexpr int32_t kOnnxFloat16 = 10;
  if (auto input = model.tensors.find(written.input_name); !first && input != model.tensors.end())
    input->second.elem_type = kOnnxFloat16;
  KernelGraph lowered = lower_model(model, exec_, &cost_model_);
  if (!first)
    lowered.kernels.erase(std::remove_if(lowered.kernels.begin(), lowered.kernels.end(),
                                         [&](const Kernel& k) {
                                           return k.host_call == HostCall::cast &&
                                                  std::any_of(k.reads.begin(), k.reads.end(), [&](const TensorRef& r) {
                                                    return r.name == written.input_name;
                                                  });
                                         }),
                          lowered.kernels.end());
  // The chain's context (docs/nas.md): a kernel before that wrote the input
  // (none for the first block: the network's input comes from DRAM), and one
  // after that reads the output first. Neither is costed.
  const KernelIndex index(lowered);
  auto bytes_of = [&](const std::string& tensor) { return index.tensor_bytes(tensor); };
  Kernel before, after;
  before.name = "(previous block)";
  before.writes.push_back({written.input_name, bytes_of(written.input_name)});
  after.name = "(next block)";
  after.reads.push_back({written.output_name, bytes_of(written.output_name)});
  if (!first) lowered.kernels.insert(lowered.kernels.begin(), std::move(before));
  if (!last) lowered.kernels.push_back(std::move(after));
  SegmentCost cost;
  std::vector<std::optional<KernelCost>> per_kernel;
  cost.totals = cost_network(lowered, cost_model_, &per_kernel, space_.source_file);
  for (size_t k = 0; k < lowered.kernels.size(); ++k)
    if (per_kernel[k])
      cost.items.push_back({per_kernel[k]->time_us, host_call_of(lowered.kernels[k]), lowered.kernels[k].host_views});
  const int context_kernels = (first ? 0 : 1) + (last ? 0 : 1);
  if (cost.totals.unmodelled != context_kernels)
    for (const auto& k : lowered.kernels)
      if (!k.layer && !k.reads.empty() && !k.writes.empty())
        throw InputError(space_.source_file, fmt::format("a block's kernel {} ({}) cannot be modelled: {}", k.name,
                                                         k.ops.text(), k.unmodelled_reason));
  cost.output = written.output;
  cost.params = written.params;
  return cost;
}

CandidateCost SpaceEvaluator::evaluate(const Candidate& c) {
  blocks_of(space_, c, blocks_);
  const std::vector<Block>& blocks = blocks_;
  Shape4 shape{batch_, space_.channels, space_.height, space_.width};
  NetworkTotals sum;
  CandidateCost out;
  std::vector<LaunchItem>& items = items_;  // a plain loop is scheduled once, over the whole candidate
  items.clear();
  for (size_t i = 0; i < blocks.size();) {
    if (shape.h < 1 || shape.w < 1)
      throw InputError(space_.source_file, fmt::format("candidate '{}' shrinks its feature map below 1x1",
                                                       encode(space_, c)));
    // A segment ends where the next block starts with a convolution: no
    // runtime fuses across that. A head without a conv (pooling first) is
    // costed with the block before it, since inductor fuses that block's
    // last pointwise ops into the pooling.
    size_t count = 1;
    if (i + 2 == blocks.size() && blocks[i + 1].kind == Block::Kind::head && blocks[i + 1].params[0] == 0) count = 2;
    const SegmentCost& b = segment_cost(&blocks[i], count, shape, i == 0, i + count == blocks.size());
    i += count;
    // 64-bit totals checked as cost_network() checks them: a wrapped sum
    // would be a wrong row, not a big one.
    int64_t unused;
    if (__builtin_add_overflow(sum.flops, b.totals.flops, &unused) ||
        __builtin_add_overflow(sum.bytes, b.totals.bytes, &unused))
      throw InputError(space_.source_file, fmt::format("candidate '{}': its total FLOPs or bytes exceed 2^63, the most "
                                                       "tilewave counts; use a smaller --batch",
                                                       encode(space_, c)));
    sum += b.totals;
    if (exec_.launch == Launch::loop) items.insert(items.end(), b.items.begin(), b.items.end());
    out.params += b.params;
    shape = b.output;
  }
  if (exec_.launch == Launch::loop) {
    const Schedule s = schedule_step(items, Launch::loop, *host_, cost_model_.get<param_index("launch_gap_us")>(), false);
    sum.time_us = s.step_us;
    sum.time_low_us = s.step_low_us;
    sum.time_high_us = s.step_high_us;
    sum.host_busy_us = s.host_busy_us;
    sum.host_bound = s.host_bound;
    sum.weighted_us.idle = s.gpu_idle_us;
  }
  out.time_us = sum.time_us;
  out.flops = sum.flops;
  out.bytes = sum.bytes;
  out.kernels = sum.kernels;
  out.losses = sum.losses();
  if (sum.time_us > 0) {
    out.utilization = double(sum.flops) / (sum.time_us * 1e-6 * peak_flops_);
    out.throughput_per_s = double(batch_) / (sum.time_us * 1e-6);
  }
  out.bound = sum.bound();
  out.main_loss = loss_cause_names(main_loss(out.losses).value_or(LossCause::tile)).key;
  return out;
}

}  // namespace tilewave::space
