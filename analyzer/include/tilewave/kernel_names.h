// What a profiled kernel's name says it is: the rules of
// analyzer/data/kernel_names.json (compiled in), the one file of kernel-name
// patterns that check and the calibrate/ scripts (calibrate/pair/kernel_names.py)
// share; docs/model.md "Kernel classes".
#pragma once
#include <string>
#include <vector>

namespace tilewave {

// The class of a kernel named `name` in `vocabulary` ("check",
// "runtime_fit", "harness"): the first matching rule's, else the
// vocabulary's "otherwise". The reference lives as long as the program.
// std::invalid_argument for a vocabulary the file does not define.
const std::string& kernel_class_of_name(const std::string& name, const std::string& vocabulary);
// The vocabularies the file defines, in its order.
std::vector<std::string> kernel_name_vocabularies();

}  // namespace tilewave
