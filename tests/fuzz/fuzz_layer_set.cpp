// libFuzzer harness: layer-set text (docs/layerset.md) -> parse -> cost each
// line, as `tilewave layers` runs it.
#include <cstdint>
#include <sstream>
#include <string>

#include "contract.h"
#include "tilewave/gpu_model.h"
#include "tilewave/layer_set.h"

using namespace tilewave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const GpuModel gpu = load_gpu("h200", TILEWAVE_GPU_DIR);
  static const CostModel cost_model(gpu);
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  return fuzz::guarded([&] {
    scan_layer_set(in, "fuzz.jsonl", [&](const LayerSetEntry& e, const std::string& text) {
      const KernelCost c = cost_layer(e.layer, cost_model);
      fuzz::check_cost(c);
      (void)append_fields(text, cost_fields(c));
    });
  });
}
