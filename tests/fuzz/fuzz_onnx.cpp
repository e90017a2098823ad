// libFuzzer harness: ONNX bytes -> load (own shape inference) -> lower under
// one runtime profile -> cost -> the views, as `tilewave analyze` runs them.
#include <cstdint>
#include <memory>

#include "contract.h"
#include "tilewave/gpu_model.h"
#include "tilewave/lowering.h"
#include "tilewave/model.h"
#include "tilewave/pipeline.h"
#include "tilewave_onnx.pb.h"

using namespace tilewave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const GpuModel gpu = load_gpu("h200", TILEWAVE_GPU_DIR);
  auto proto = std::make_shared<onnx::ModelProto>();
  if (!proto->ParseFromArray(data, int(size))) return 0;
  // The input's length picks the runtime and the attention mode, so that
  // every profile's lowering sees mutated graphs.
  static const char* const runtimes[] = {"eager", "inductor", "tensorrt"};
  AnalyzeOptions options;
  options.exec.runtime = find_runtime(runtimes[size % 3]);
  options.exec.fuse_attention = size % 2 == 0;
  return fuzz::guarded([&] {
    const Model model = load_onnx_proto(proto, "fuzz.onnx", options.load);
    const Analysis a = analyze_model(model, gpu, options);
    (void)incomplete_reason(a);
    fuzz::check_analysis(a);
  });
}
