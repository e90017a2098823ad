// Shared fixtures for the unit tests.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

#include "tilewave/gpu_model.h"

namespace tilewave::test {

inline std::string data(const std::string& file) { return std::string(TILEWAVE_TEST_DATA) + "/" + file; }
inline std::string zoo(const std::string& file) { return std::string(TILEWAVE_ONNX_MODELS) + "/" + file; }
// Writes text to a file in the system temp folder (never the working directory) and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}
inline GpuModel gpu(const std::string& id) { return load_gpu(id, TILEWAVE_GPU_DIR); }
inline std::string gpu_dir() { return TILEWAVE_GPU_DIR; }

// A hand-made GPU with one tile shape, for counting tiles and waves on paper.
GpuModel paper_gpu(int sms, int tile_m, int tile_n, int tile_k = 32);

}  // namespace tilewave::test
