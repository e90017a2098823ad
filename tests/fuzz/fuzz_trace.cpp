// libFuzzer harness: profiler trace text (plain or gzip) -> kernels of the
// last step -> pairing with a fixed model's prediction -> both check views,
// as `tilewave check --trace` runs it.
#include <cstdint>
#include <sstream>
#include <string>

#include "contract.h"
#include "tilewave/gpu_model.h"
#include "tilewave/json_input.h"
#include "tilewave/report.h"
#include "tilewave/trace_check.h"

using namespace tilewave;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Analysis a = [] {
    AnalyzeOptions o;
    o.load.batch = 1;
    return analyze_file(TILEWAVE_TEST_DATA "/tiny_cnn.onnx", load_gpu("h200", TILEWAVE_GPU_DIR), o);
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  return fuzz::guarded([&] {
    const MeasuredTrace t = trace_from_json(parse_json_bytes(text, "fuzz.json"), "fuzz.json");
    const TraceCheck c = check_against_trace(a, t);
    fuzz::check_number("measured_device_us", c.measured_device_us);
    fuzz::check_number("predicted_device_us", c.predicted_device_us);
    fuzz::check_number("median_abs_error", c.median_abs_error);
    std::ostringstream out;
    write_check_table(out, a, t, c, 15);
    out << check_to_json(a, t, c).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  });
}
