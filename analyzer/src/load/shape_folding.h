// Constant-folds integer shape arithmetic (Shape -> Gather -> Div -> Concat
// -> Reshape/Slice chains) that ONNX 1.12's data propagation leaves unknown,
// by rewriting each fully known value's producer into a Constant node.
#pragma once

namespace onnx {
class ModelProto;
}

namespace tilewave {

// Returns the number of nodes rewritten; shape inference must run again after.
int fold_shape_values(onnx::ModelProto& model);

}  // namespace tilewave
