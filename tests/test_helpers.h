// Shared fixtures for the unit tests.
#pragma once
#include <string>

#include "tilewave/gpu_model.h"

namespace tilewave::test {

inline std::string data(const std::string& file) { return std::string(TILEWAVE_TEST_DATA) + "/" + file; }
inline std::string zoo(const std::string& file) { return std::string(TILEWAVE_ONNX_MODELS) + "/" + file; }
inline GpuModel gpu(const std::string& id) { return load_gpu(id, TILEWAVE_GPU_DIR); }

// A hand-made GPU with one tile shape, for counting tiles and waves on paper.
GpuModel paper_gpu(int sms, int tile_m, int tile_n, int tile_k = 32);

}  // namespace tilewave::test
