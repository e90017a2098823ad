// The toy option's chosen value, and whether the extension registered itself (toy_extension.cpp).
#pragma once
#include <string>

namespace tilewave::toy {

std::string& style();  // toy_style: "plain" or "upper"
bool extension_registered();

}  // namespace tilewave::toy
