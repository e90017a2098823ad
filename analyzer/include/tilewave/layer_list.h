// A network described as a list of layers (docs/python.md "Layer lists"):
// a producer of models without files, for architecture search in Python.
// The list becomes the ONNX graph torch.onnx would export for it, so that it
// is lowered and costed by the same rules as a model file.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "tilewave/search_space.h"

namespace tilewave::space {

// `layers`: a JSON array of objects, each with "op" and that op's fields; a
// layer reads the one before it unless "input" names another ("input" is the
// network's input). `input`: N, C, H, W. Throws InputError "<where>: layer
// <i> (<op>): <problem>" on any bad field, unknown field or impossible shape.
WrittenModel network_from_layers(const nlohmann::json& layers, const Shape4& input, const std::string& where);

}  // namespace tilewave::space
