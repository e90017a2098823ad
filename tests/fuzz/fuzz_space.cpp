// libFuzzer harness: search-space text (docs/nas.md) -> schema checks ->
// a few sampled candidates costed under eager, as `tilewave nas` runs them.
#include <cstdint>
#include <string>

#include "contract.h"
#include "tilewave/gpu_model.h"
#include "tilewave/search_space.h"
#include "tilewave/space_cost.h"

using namespace tilewave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const GpuModel gpu = load_gpu("h200", TILEWAVE_GPU_DIR);
  const std::string text(reinterpret_cast<const char*>(data), size);
  return fuzz::guarded([&] {
    const space::SearchSpace s = space::space_from_text(text, "fuzz.json");
    space::SpaceEvaluator eval(s, gpu, default_execution(default_runtime()), nullptr, 1 + int64_t(size % 4));
    for (uint64_t i = 0; i < 3; ++i) {
      const space::Candidate c = space::sample(s, 1, i);
      if (space::encode(s, space::decode(s, space::encode(s, c))) != space::encode(s, c))
        fuzz::finding("encoding round trip", double(i));
      const space::CandidateCost cost = eval.evaluate(c);
      fuzz::check_number("candidate time_us", cost.time_us);
      fuzz::check_number("candidate utilization", cost.utilization);
      if (cost.utilization > 1 + 1e-9) fuzz::finding("candidate utilization", cost.utilization);
    }
  });
}
