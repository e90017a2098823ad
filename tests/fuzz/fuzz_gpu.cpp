// libFuzzer harness: GPU-file text -> schema and range checks -> cost a fixed
// model under every runtime profile, as `tilewave analyze --gpu FILE` runs it.
#include <cstdint>
#include <string>

#include "contract.h"
#include "tilewave/gpu_model.h"
#include "tilewave/json_input.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"
#include "tilewave/pipeline.h"
#include "tilewave/run_options.h"

using namespace tilewave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Model model = load_onnx(TILEWAVE_TEST_DATA "/tiny_cnn.onnx");
  const std::string text(reinterpret_cast<const char*>(data), size);
  return fuzz::guarded([&] {
    const GpuModel gpu = gpu_from_json(parse_json_bytes(text, "fuzz.json"), "fuzz", "fuzz.json", TILEWAVE_GPU_DIR "/arch");
    // Each runtime's own defaults, resolved as the CLI resolves --runtime and --dtype.
    for (const char* runtime : {"eager", "inductor", "tensorrt"})
      for (const char* dtype : {"fp16", "fp32", "int8"}) {
        RunOptions o;
        o.gpu_dir = TILEWAVE_GPU_DIR;
        o.runtime = runtime;
        o.dtype = dtype;
        fuzz::check_analysis(analyze_model(model, gpu, analyze_options(o)));
      }
  });
}
