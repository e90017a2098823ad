// Ops that only move data (Concat, Transpose, Slice, Pad, Resize, Gather …):
// copy kernels reading their dynamic inputs and writing their outputs.
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

int64_t dynamic_input_elems(const LowerContext& ctx) {
  int64_t n = 0;
  for (size_t i = 0; i < ctx.node.inputs.size(); ++i)
    if (ctx.has_input(i) && !ctx.input_is_static(i)) n += ctx.input(i).numel();
  return n;
}

int64_t output_elems(const LowerContext& ctx) {
  int64_t n = 0;
  for (size_t i = 0; i < ctx.node.outputs.size(); ++i)
    if (!ctx.node.outputs[i].empty()) n += ctx.output(i).numel();
  return n;
}

std::optional<Layer> make_copy(const LowerContext& ctx, int64_t elems_in, int64_t elems_out) {
  MemoryProblem m;
  m.op = MemoryOp::copy;
  m.elems_in = elems_in;
  m.elems_out = elems_out;
  Layer l;
  l.problem = m;
  l.dtype = ctx.dtype;
  return l;
}

// Reads what it writes, wherever it comes from.
std::optional<Layer> lower_move(const LowerContext& ctx) {
  const int64_t out = output_elems(ctx);
  return make_copy(ctx, std::min(dynamic_input_elems(ctx), out), out);
}

// Reads all of its input (Concat reads every part; Expand/Tile/Resize/Pad
// read the smaller input once and write the larger output).
std::optional<Layer> lower_read_all(const LowerContext& ctx) {
  return make_copy(ctx, dynamic_input_elems(ctx), output_elems(ctx));
}

// tilewave keeps 4-D activations channels-last (NHWC, as cuDNN's tensor-core
// convs and PyTorch's channels_last run them), so the permutes between the
// NCHW and NHWC views of one tensor are relabelings, not copies
// (docs/model.md "Framework ops").
std::optional<Layer> lower_transpose(const LowerContext& ctx) {
  const std::vector<int64_t> perm = attr_ints(ctx.node, "perm");
  const bool layout_view = ctx.input(0).dims.size() == 4 &&
                           (perm == std::vector<int64_t>{0, 2, 3, 1} || perm == std::vector<int64_t>{0, 3, 1, 2});
  if (layout_view) return std::nullopt;
  return lower_read_all(ctx);
}

}  // namespace

void register_data_movement_ops(OpRegistry& r) {
  for (const char* op : {"Slice", "Gather", "GatherElements", "GatherND", "Split", "Compress"})
    r.add({"", op, FusionRole::opaque, lower_move, TILEWAVE_HERE});
  r.add({"", "Transpose", FusionRole::opaque, lower_transpose, TILEWAVE_HERE});
  for (const char* op : {"Concat", "Pad", "Resize", "Upsample", "Expand", "Tile", "DepthToSpace",
                         "SpaceToDepth", "ScatterND", "ScatterElements", "ReverseSequence", "Trilu", "CumSum",
                         "TopK", "OneHot", "NonZero"})
    r.add({"", op, FusionRole::opaque, lower_read_all, TILEWAVE_HERE});
}

}  // namespace tilewave
