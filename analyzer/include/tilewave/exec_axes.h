// The axes of how a network is run that stages before the runtimes name
// too: the memory layout of activations and how the host launches a step
// (docs/model.md "Execution configuration"). ExecutionConfig (exec_config.h)
// holds them with the runtime and the precision.
#pragma once
#include <string>

namespace tilewave {

// The memory layout of 4-D activations as the libraries see them.
// nchw: PyTorch's default (contiguous); nhwc: torch.channels_last.
enum class Layout { nchw, nhwc };
const char* layout_name(Layout l);

// How the host launches a step. graph: the forward replayed as one CUDA
// graph; loop: a plain Python loop, every op issued from the CPU, then
// torch.cuda.synchronize() (docs/model.md "Schedule").
enum class Launch { graph, loop };
const char* launch_name(Launch l);

// Parses the CLI's and the Python module's spellings; InputError naming the
// option on a bad value. Empty strings keep the default.
Layout layout_named(const std::string& s, const std::string& where);
Launch launch_named(const std::string& s, const std::string& where);

}  // namespace tilewave
