// A GPU as data: datasheet facts, candidate CTA tiles per precision, and the
// model's named parameters (docs/model.md defines each one). Loaded from
// gpu_models/<id>.json layered over gpu_models/arch/<arch>.json.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tilewave/dtype.h"

namespace tilewave {

// One CTA (thread-block) tile of a GEMM kernel; its name is its identity in
// reports, calibration data and GPU files (CUTLASS-style "128x256x64").
struct TileShape {
  int m = 128, n = 128, k = 32;
  int ctas_per_sm = 1;  // CTAs of this tile resident per SM at once
  std::string name() const;
};

enum class Unit { tensor, cuda };
const char* unit_name(Unit u);

// How one precision runs GEMM-like kernels on this GPU.
struct PrecisionSpec {
  Unit unit = Unit::tensor;
  double peak_tflops = 0;  // dense peak of that unit for this precision
  int align = 1;           // channel/dim multiple the fast path needs
  std::vector<TileShape> tiles;
};

// Which measurements can fit a parameter: single layers (rotated buffers, no
// reuse between kernels), kernels timed inside networks (L2 reuse between
// them), or whole networks (everything between kernels).
// `runtime`: classes of kernels only a runtime's lowering emits (PyTorch's
// BatchNorm pass, inductor's generated kernels, separate layout transforms),
// fitted by `calibrate fit-runtime` alone.
// `host`: the CPU and framework that issue a plain loop (host descriptions,
// gpu_models/hosts/; docs/model.md "Schedule"), never in a GPU file.
enum class ParamScope { layer, network_kernel, network, runtime, host };
const char* param_scope_name(ParamScope s);

// What a parameter is a property of, which says how it carries over to a
// GPU that was never measured (docs/calibration.md "Carry-over"):
// architecture: the tensor-core instruction family's main loop (mma.sync,
//   wgmma, …): kept only between architectures of one family;
// memory_system: DRAM and L2 rates as fractions of the datasheet's: taken
//   from a GPU of the same memory type, else of the same family (HBM, GDDR);
// launch: a kernel's fixed costs on the GPU's front end: kept;
// runtime: what the framework adds between kernels: kept;
// host: the CPU issuing a plain loop, in a host description, not a GPU file;
// validation: how far this GPU's measured networks fell from their
//   predictions (docs/model.md "Prediction intervals"): never carried, a GPU
//   not measured states no interval of its own.
enum class ParamOwner { architecture, memory_system, launch, runtime, host, validation };
const char* param_owner_name(ParamOwner o);

// How a value carried to another GPU scales with it: not at all, with the
// DRAM bandwidth (a size in MB that a rate fills), inversely with the SMs
// times the clock (a time per row the SMs work through), or, for a
// bandwidth fraction, as a rate the SMs limit: a kernel that reached a
// fraction f of the donor's DRAM bandwidth moves f x BW_donor / (SMs x clock)_donor
// bytes per SM cycle, and reaches f x ratio of the target's bandwidth,
// ratio = (BW/(SMs x clock))_donor / (BW/(SMs x clock))_target, capped at the
// parameter's upper bound (docs/calibration.md "Carry-over").
enum class ParamScale { none, dram_bandwidth, inverse_sm_clock, inverse_clock, sm_limited_rate };
// How `tilewave params` spells it: "kept", "with DRAM bandwidth", ...
const char* param_scale_name(ParamScale s);

// A named model constant with its default and the bounds a fit may move it in.
struct ParamInfo {
  const char* name;
  double default_value;
  double fit_min, fit_max;
  const char* unit;
  const char* meaning;
  ParamScope scope = ParamScope::layer;
  ParamOwner owner = ParamOwner::architecture;
  ParamScale scale = ParamScale::none;
};
// Every parameter the cost model reads (kGpuParams, gpu_params.h); the
// single list the loader, the `gpus` view and the calibration fit iterate over.
const std::vector<ParamInfo>& param_table();

// The interval parameters' names (owner validation; docs/model.md
// "Prediction intervals"): interval_<regime>_<class>_<bound> is a GPU's own,
// carried_interval_<regime>_<class>_<bound> the one it keeps for the files
// carried from it. The one place these spellings are composed.
std::string interval_param(std::string_view regime, std::string_view network_class, std::string_view bound);
// interval_<rest> for carried_interval_<rest>; "" for any other name.
std::string interval_of_carried(std::string_view name);

// How far a GPU file's parameters can be trusted (docs/calibration.md
// "Other GPUs"): measured and fitted on the card; fitted to a published
// benchmark; carried from calibrated GPUs; datasheet facts over defaults.
enum class Trust { calibrated, fitted_from_benchmark, carried_over, datasheet };
// Its spelling in GPU files and outputs: "calibrated", "fitted-from-benchmark", "carried-over", "datasheet".
const char* trust_name(Trust t);
// InputError naming `where` for any other spelling.
Trust trust_named(const std::string& s, const std::string& where);

struct GpuModel {
  std::string id;      // file stem, e.g. "h200"
  std::string name;    // marketing name
  std::string arch;
  std::string source_file;
  Trust trust = Trust::datasheet;
  std::string memory_type;         // "HBM3e", "GDDR6X" … ("" = not given)
  std::string instruction_family;  // of its architecture's tensor cores: "mma-sm80", "wgmma-sm90" … ("" = not given)
  // Where each parameter not at its architecture default came from: "fitted
  // on <data>" or "<gpu>: <carry-over rule>" (docs/calibration.md "Carry-over").
  std::map<std::string, std::string> param_origin;
  int sms = 0;
  double boost_clock_mhz = 0;
  double dram_bandwidth_gbs = 0;
  double l2_mb = 0;
  double memory_gb = 0;   // device memory; 0 = not given (no fit check)
  double smem_per_sm_kb = 0;
  int max_ctas_per_sm = 0;
  std::map<DType, PrecisionSpec> precisions;  // GEMM path per dtype
  std::map<DType, double> cuda_core_tflops;   // non-tensor peak per dtype
  std::map<std::string, double> params;       // complete: defaults filled in
  // Parameters fitted on one runtime's kernels, by runtime name; they
  // override `params` for that runtime (for_runtime()).
  std::map<std::string, std::map<std::string, double>> runtime_params;
  std::string runtime;                        // the runtime whose set is applied; "" = base
  std::map<std::string, std::string> sources; // fact -> where it comes from

  double param(const std::string& name) const;
  // This GPU with a runtime's parameter set applied (the base set if it has none).
  GpuModel for_runtime(const std::string& runtime) const;
  bool has_runtime_params(const std::string& runtime) const { return runtime_params.count(runtime) > 0; }
  const PrecisionSpec& precision(DType d) const;  // throws InputError if absent
  double cuda_core_peak_flops(DType d) const;
  // The headline peak utilization is measured against: the GEMM path's unit.
  double peak_flops(DType d) const { return precision(d).peak_tflops * 1e12; }
};

// Loads a GPU by id (a stem in `db_dir`) or by path to a .json file.
GpuModel load_gpu(const std::string& id_or_path, const std::string& db_dir);
GpuModel gpu_from_json(const nlohmann::json& j, const std::string& id, const std::string& where,
                       const std::string& arch_dir);
// The architecture folder a GPU file at `gpu_file` reads: an `arch/` beside it, else `db_dir`'s.
std::string gpu_arch_dir(const std::string& gpu_file, const std::string& db_dir);
// The GPU database directory: $TILEWAVE_GPU_DIR, else $TILEWAVE_DATA/gpu_models,
// else <prefix>/share/tilewave/gpu_models of the installed copy this code was
// loaded from (the CLI or the Python module), else the source tree's
// (compiled in), else ./gpu_models. --gpu-dir overrides all.
std::string default_gpu_dir();
// The search spaces' directory, found the same way ($TILEWAVE_DATA/spaces,
// <prefix>/share/tilewave/spaces, the source tree's onnx_models/spaces).
std::string default_space_dir();
std::vector<std::string> list_gpu_ids(const std::string& db_dir);
// Every GPU file of the database, by id (`tilewave gpus`); InputError naming
// the directory when it holds none.
std::vector<GpuModel> load_gpu_database(const std::string& db_dir);

}  // namespace tilewave
