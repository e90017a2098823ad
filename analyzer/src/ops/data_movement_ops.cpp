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

}  // namespace

void register_data_movement_ops(OpRegistry& r) {
  for (const char* op : {"Slice", "Gather", "GatherElements", "GatherND", "Split", "Compress"})
    r.add({"", op, FusionRole::opaque, lower_move, TILEWAVE_HERE});
  for (const char* op : {"Concat", "Transpose", "Pad", "Resize", "Upsample", "Expand", "Tile", "DepthToSpace",
                         "SpaceToDepth", "ScatterND", "ScatterElements", "ReverseSequence", "Trilu", "CumSum",
                         "TopK", "OneHot", "NonZero"})
    r.add({"", op, FusionRole::opaque, lower_read_all, TILEWAVE_HERE});
}

}  // namespace tilewave
