#include "header.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <ctime>

#include "check.hpp"
#include "context.hpp"

namespace tw {

namespace {

// NVML is loaded at run time (it ships with the driver), so the binary links
// nothing beyond CUDA/cuDNN/cuBLASLt and still runs where NVML is missing.
struct NvmlClocks {
  int sm_mhz = -1;
  int mem_mhz = -1;
  std::string driver_version;
};

NvmlClocks read_nvml(int device) {
  NvmlClocks clocks;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return clocks;
  using InitFn = int (*)();
  using ByPciFn = int (*)(const char*, void**);
  using ClockFn = int (*)(void*, int, unsigned*);
  using DriverFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto by_pci = reinterpret_cast<ByPciFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  auto driver = reinterpret_cast<DriverFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
  char pci[64] = {0};
  void* handle = nullptr;
  if (init && by_pci && clock && init() == 0) {
    if (cudaDeviceGetPCIBusId(pci, sizeof(pci), device) == cudaSuccess && by_pci(pci, &handle) == 0) {
      constexpr int kClockSm = 1, kClockMem = 2;  // nvmlClockType_t values
      unsigned mhz = 0;
      if (clock(handle, kClockSm, &mhz) == 0) clocks.sm_mhz = static_cast<int>(mhz);
      if (clock(handle, kClockMem, &mhz) == 0) clocks.mem_mhz = static_cast<int>(mhz);
    }
    char version[96] = {0};
    if (driver && driver(version, sizeof(version)) == 0) clocks.driver_version = version;
    if (shutdown) shutdown();
  }
  cudaGetLastError();
  dlclose(lib);
  return clocks;
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  TW_CUDA(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

}  // namespace

Json device_header(const Context& ctx, const std::string& command) {
  cudaDeviceProp prop{};
  TW_CUDA(cudaGetDeviceProperties(&prop, ctx.device));
  int driver = 0, runtime = 0;
  TW_CUDA(cudaDriverGetVersion(&driver));
  TW_CUDA(cudaRuntimeGetVersion(&runtime));
  const NvmlClocks nvml = read_nvml(ctx.device);
  const int max_sm_mhz = attribute(cudaDevAttrClockRate, ctx.device) / 1000;
  const int max_mem_mhz = attribute(cudaDevAttrMemoryClockRate, ctx.device) / 1000;

  Json h;
  h["header"] = true;
  h["gpu"] = prop.name;
  h["compute_capability"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  h["sm_count"] = attribute(cudaDevAttrMultiProcessorCount, ctx.device);
  h["sm_clock_mhz"] = nvml.sm_mhz > 0 ? nvml.sm_mhz : max_sm_mhz;
  h["sm_clock_source"] = nvml.sm_mhz > 0 ? "nvml_current" : "cuda_max";
  h["sm_clock_max_mhz"] = max_sm_mhz;
  h["mem_clock_mhz"] = nvml.mem_mhz > 0 ? nvml.mem_mhz : max_mem_mhz;
  h["mem_bus_bits"] = attribute(cudaDevAttrGlobalMemoryBusWidth, ctx.device);
  h["l2_bytes"] = attribute(cudaDevAttrL2CacheSize, ctx.device);
  h["mem_bytes"] = prop.totalGlobalMem;
  h["driver"] = driver;
  if (!nvml.driver_version.empty()) h["driver_version"] = nvml.driver_version;
  h["cuda_runtime"] = runtime;
  h["cuda"] = runtime;  // the name docs/layerset.md uses
  h["cudnn"] = cudnnGetVersion();
  h["cublaslt"] = cublasLtGetVersion();
  h["date"] = utc_now_iso8601();
  h["command"] = command;
  return h;
}

}  // namespace tw
