// Stage 2 of the flow: tilewave's own shape inference (docs/model.md
// "Pipeline"). The engine: it walks the nodes and runs each op's shape
// function from the registry it is given (shape_context.h is what those
// functions see).
#pragma once
#include "tilewave/model.h"
#include "tilewave/shape_context.h"

namespace tilewave {

class OpRegistry;

// Infers every tensor's shape (and small known values) in topological order,
// from the graph inputs' shapes after overrides. Nodes whose op has no shape
// function, or whose inputs stay unknown, leave their outputs unknown with a
// reason in model.unknown_reason, then marks the tensors known at load time
// (model.static_tensors). Throws InputError for an inconsistent model.
void infer_shapes(Model& model, const OpRegistry& registry);

}  // namespace tilewave
