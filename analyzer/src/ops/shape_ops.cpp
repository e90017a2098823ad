// Ops that change only metadata: runtimes alias the buffer or fold them at
// load time, so they launch no kernel.
#include "tilewave/op_registry.h"

namespace tilewave {

void register_shape_ops(OpRegistry& r) {
  auto no_work = [](const LowerContext&) -> std::optional<Layer> { return std::nullopt; };
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape", "Size", "Constant",
                         "ConstantOfShape", "Dropout", "Range", "EyeLike"})
    r.add({"", op, FusionRole::none, no_work, TILEWAVE_HERE});
}

}  // namespace tilewave
