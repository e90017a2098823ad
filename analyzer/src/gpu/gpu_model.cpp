#include "tilewave/text.h"
#include "tilewave/gpu_model.h"
#include "tilewave/gpu_params.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/error.h"
#include "tilewave/json_input.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tilewave {

const char* trust_name(Trust t) {
  switch (t) {
    case Trust::calibrated: return "calibrated";
    case Trust::fitted_from_benchmark: return "fitted-from-benchmark";
    case Trust::carried_over: return "carried-over";
    case Trust::datasheet: return "datasheet";
  }
  return "datasheet";
}

Trust trust_named(const std::string& s, const std::string& where) {
  for (Trust t : {Trust::calibrated, Trust::fitted_from_benchmark, Trust::carried_over, Trust::datasheet})
    if (s == trust_name(t)) return t;
  throw InputError(where, fmt::format("unknown trust '{}' (calibrated, fitted-from-benchmark, carried-over, datasheet)",
                                      middle_ellipsis(printable(s), 40)));
}

std::string TileShape::name() const { return fmt::format("{}x{}x{}", m, n, k); }

const char* unit_name(Unit u) { return u == Unit::tensor ? "tensor" : "cuda"; }

const char* param_owner_name(ParamOwner o) {
  switch (o) {
    case ParamOwner::architecture: return "architecture";
    case ParamOwner::memory_system: return "memory system";
    case ParamOwner::launch: return "kernel launch";
    case ParamOwner::runtime: return "runtime";
    case ParamOwner::host: return "host";
    case ParamOwner::validation: return "validation";
  }
  return "?";
}

std::string interval_param(std::string_view regime, std::string_view network_class, std::string_view bound) {
  return fmt::format("interval_{}_{}_{}", regime, network_class, bound);
}

std::string interval_of_carried(std::string_view name) {
  constexpr std::string_view carried = "carried_";
  if (name.substr(0, carried.size()) != carried || name.substr(carried.size(), 9) != "interval_") return "";
  return std::string(name.substr(carried.size()));
}

const char* param_scope_name(ParamScope s) {
  switch (s) {
    case ParamScope::layer: return "layer";
    case ParamScope::network_kernel: return "network kernel";
    case ParamScope::network: return "network";
    case ParamScope::runtime: return "runtime";
    case ParamScope::host: return "host";
  }
  return "?";
}

const char* param_scale_name(ParamScale s) {
  switch (s) {
    case ParamScale::none: return "kept";
    case ParamScale::dram_bandwidth: return "with DRAM bandwidth";
    case ParamScale::inverse_sm_clock: return "inversely with SMs x clock";
    case ParamScale::inverse_clock: return "inversely with the clock";
    case ParamScale::sm_limited_rate: return "as an SM-limited rate";
  }
  return "?";
}

const std::vector<ParamInfo>& param_table() {
  static const std::vector<ParamInfo> table(std::begin(kGpuParams), std::end(kGpuParams));
  return table;
}

GpuModel GpuModel::for_runtime(const std::string& runtime) const {
  GpuModel g = *this;
  g.runtime = runtime;
  if (auto it = runtime_params.find(runtime); it != runtime_params.end())
    for (const auto& [k, v] : it->second) g.params[k] = v;
  return g;
}

double GpuModel::param(const std::string& n) const {
  auto it = params.find(n);
  if (it == params.end()) throw std::logic_error("unknown model parameter " + n);
  return it->second;
}

const PrecisionSpec& GpuModel::precision(DType d) const {
  auto it = precisions.find(d);
  if (it == precisions.end())
    throw InputError(source_file, fmt::format("GPU '{}' has no {} path", id, dtype_name(d)));
  return it->second;
}

double GpuModel::cuda_core_peak_flops(DType d) const {
  // tf32 and int8 have no CUDA-core flavour of their own; such kernels run
  // in fp32 or int32 arithmetic.
  DType key = (d == DType::tf32 || d == DType::int8) ? DType::fp32 : d;
  auto it = cuda_core_tflops.find(key);
  if (it == cuda_core_tflops.end()) it = cuda_core_tflops.find(DType::fp32);
  if (it == cuda_core_tflops.end())
    throw InputError(source_file, "no CUDA-core peak (cuda_core_tflops.fp32) given");
  return it->second * 1e12;
}

namespace {

// Architecture files are shared by many GPU files; each is parsed once. Python threads
// (calibrate/'s predictions) reach this with the GIL released, hence the lock; a map's
// elements stay put as others are added, so the reference outlives it.
const json& read_arch_file(const std::string& path) {
  static std::map<std::string, json> parsed;
  static std::mutex lock;
  const std::lock_guard<std::mutex> held(lock);
  auto it = parsed.find(path);
  if (it == parsed.end()) it = parsed.emplace(path, read_json_file(path, "GPU file", kMaxGpuFileBytes)).first;
  return it->second;
}

template <class T>
T get_required(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw InputError(where, fmt::format("missing field '{}'", key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(where, fmt::format("field '{}' has the wrong type", key));
  }
}

template <class T>
T get_optional(const json& j, const char* key, T fallback, const std::string& where) {
  return j.contains(key) ? get_required<T>(j, key, where) : fallback;
}

// A number field checked against its range before any conversion (a double
// outside an int's range must not be cast). Absent: `fallback`, if given.
double number_in(const json& j, const char* key, double lo, double hi, const std::string& where,
                 std::optional<double> fallback = std::nullopt) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    throw InputError(where, fmt::format("missing field '{}'", key));
  }
  const json& v = j.at(key);
  if (!v.is_number()) throw InputError(where, fmt::format("field '{}' must be a number", key));
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) throw InputError(where, fmt::format("field '{}' is {}, outside [{}, {}]", key, x, lo, hi));
  return x;
}

const json& object_field(const json& j, const char* key, const std::string& where) {
  static const json empty = json::object();
  if (!j.contains(key)) return empty;
  if (!j.at(key).is_object()) throw InputError(where, fmt::format("field '{}' must be an object", key));
  return j.at(key);
}

DType dtype_key(const std::string& k, const std::string& where) {
  auto d = parse_dtype(k);
  if (!d) throw InputError(where, fmt::format("unknown precision '{}'", k));
  return *d;
}

std::vector<TileShape> parse_tiles(const json& arr, const std::string& where) {
  std::vector<TileShape> tiles;
  if (!arr.is_array()) throw InputError(where, "tiles must be a list of {m, n, k} objects");
  for (const auto& t : arr) {
    if (!t.is_object()) throw InputError(where, "tiles must be a list of {m, n, k} objects");
    TileShape s;
    s.m = int(number_in(t, "m", 1, 4096, where));
    s.n = int(number_in(t, "n", 1, 4096, where));
    s.k = int(number_in(t, "k", 1, 4096, where));
    s.ctas_per_sm = int(number_in(t, "ctas_per_sm", 1, 64, where, 1));
    tiles.push_back(s);
  }
  if (tiles.empty()) throw InputError(where, "a precision needs at least one tile");
  return tiles;
}

void merge_params(const json& j, std::map<std::string, double>& params, const std::string& where) {
  for (const auto& item : object_field(j, "params", where).items()) {
    const std::string& k = item.key();
    const json& v = item.value();
    if (params.find(k) == params.end())
      throw InputError(where, fmt::format("unknown model parameter '{}'", k));
    if (!v.is_number()) throw InputError(where, fmt::format("parameter '{}' must be a number", k));
    // The table's range is the one the model is defined and fitted on: an
    // efficiency of 0 would give an infinite time, a negative cost a negative one.
    const double x = v.get<double>();
    const auto& table = param_table();
    const auto info = std::find_if(table.begin(), table.end(), [&](const ParamInfo& p) { return p.name == k; });
    if (info != table.end() && !(x >= info->fit_min && x <= info->fit_max))
      throw InputError(where, fmt::format("parameter '{}' is {}, outside its range [{}, {}] {}", k, x, info->fit_min,
                                          info->fit_max, info->unit));
    params[k] = x;
  }
}

}  // namespace

GpuModel gpu_from_json(const json& j, const std::string& id, const std::string& where,
                       const std::string& arch_dir) {
  if (!j.is_object()) throw InputError(where, "a GPU file is a JSON object");
  GpuModel g;
  g.id = id;
  g.source_file = where;
  for (const auto& p : param_table()) g.params[p.name] = p.default_value;

  g.arch = get_required<std::string>(j, "arch", where);
  // A name, not a path: the file is looked up in the architecture directory only.
  if (g.arch.empty() || g.arch.size() > 64 ||
      g.arch.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    throw InputError(where, "field 'arch' must be a lower-case architecture name (a file in gpu_models/arch)");
  // The architecture file holds what all chips of a generation share: tile
  // shapes per precision and parameter defaults. The GPU file overrides.
  const std::string arch_path = (fs::path(arch_dir) / (g.arch + ".json")).string();
  const json& arch = read_arch_file(arch_path);
  if (!arch.is_object()) throw InputError(arch_path, "an architecture file is a JSON object");
  merge_params(arch, g.params, arch_path);
  merge_params(j, g.params, where);
  // Per-runtime sets: parameters fitted on one runtime's own kernels
  // (docs/calibration.md "Runtimes"), over the base set.
  if (j.contains("runtime_params")) {
    if (!j.at("runtime_params").is_object()) throw InputError(where, "'runtime_params' must be an object");
    for (auto& [runtime, set] : j.at("runtime_params").items()) {
      require_display_name(where, "runtime_params", runtime);
      if (!set.is_object()) throw InputError(where, fmt::format("runtime_params.{} must be an object", runtime));
      std::map<std::string, double> merged = g.params;  // validates names and types
      merge_params(set, merged, where + ": runtime_params." + runtime);
      auto& kept = g.runtime_params[runtime];
      if (set.contains("params"))
        for (auto& [k, v] : set.at("params").items()) kept[k] = merged.at(k);
    }
  }

  // The chip's facts, with ranges wide enough for any GPU and narrow enough
  // that no later product or quotient overflows (docs/errors.md).
  g.name = get_optional<std::string>(j, "name", id, where);
  require_display_name(where, "name", g.name);
  g.trust = trust_named(get_optional<std::string>(j, "trust", "datasheet", where), where);
  // The host is the machine that issues the ops, chosen once for a whole run.
  if (j.contains("host"))
    throw InputError(where, "a GPU file does not choose the host: remove 'host' and name it with --host "
                            "(Python: host=; docs/model.md \"Schedule\")");
  auto token = [&](const json& from, const char* key, const std::string& file) {
    const std::string v = get_optional<std::string>(from, key, "", file);
    if (v.size() > 32 || v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                             std::string::npos)
      throw InputError(file, fmt::format("'{}' must be a short name (letters, digits, - _ .)", key));
    return v;
  };
  g.memory_type = token(j, "memory_type", where);
  g.instruction_family = token(arch, "instruction_family", arch_path);
  // Where its parameters came from (docs/calibration.md "Carry-over").
  if (j.contains("carried_over") && j["carried_over"].is_object() && j["carried_over"].contains("params") &&
      j["carried_over"]["params"].is_object()) {
    for (const auto& [k, v] : j["carried_over"]["params"].items())
      if (v.is_string() && g.params.count(k)) g.param_origin[k] = printable(v.get<std::string>());
  }
  if (j.contains("from_benchmark") && j["from_benchmark"].is_object() && j["from_benchmark"].contains("params") &&
      j["from_benchmark"]["params"].is_object()) {
    for (const auto& [k, v] : j["from_benchmark"]["params"].items())
      if (v.is_string() && g.params.count(k)) g.param_origin[k] = printable(v.get<std::string>());
  } else if (g.param_origin.empty() && g.trust == Trust::calibrated && j.contains("params") && j["params"].is_object()) {
    for (const auto& [k, v] : j["params"].items()) g.param_origin[k] = "fitted on this GPU";
  }
  g.sms = int(number_in(j, "sms", 1, 10000, where));
  g.boost_clock_mhz = number_in(j, "boost_clock_mhz", 1, 1e5, where);
  g.dram_bandwidth_gbs = number_in(j, "dram_bandwidth_gbs", 1e-3, 1e7, where);
  g.l2_mb = number_in(j, "l2_mb", 0, 1e5, where, 0.0);
  if (j.contains("memory_gb")) g.memory_gb = number_in(j, "memory_gb", 1e-3, 1e7, where);
  g.smem_per_sm_kb = number_in(j, "smem_per_sm_kb", 0, 1e5, where, 0.0);
  g.max_ctas_per_sm = int(number_in(j, "max_ctas_per_sm", 1, 1024, where, 16.0));

  const json& tensor = object_field(j, "tensor_tflops", where);
  const json& arch_tiles = object_field(arch, "tiles", arch_path);
  const json& arch_align = object_field(arch, "align", arch_path);
  for (auto& [k, v] : tensor.items()) {
    const DType d = dtype_key(k, where);
    PrecisionSpec spec;
    spec.unit = Unit::tensor;
    spec.peak_tflops = number_in(tensor, k.c_str(), 1e-6, 1e6, where + ": tensor_tflops");
    spec.align = int(number_in(arch_align, k.c_str(), 1, 1024, arch_path + ": align", 8.0));
    if (!arch_tiles.contains(k)) throw InputError(arch_path, fmt::format("no tiles for precision '{}'", k));
    spec.tiles = parse_tiles(arch_tiles.at(k), arch_path);
    g.precisions[d] = spec;
  }
  const json& cuda = object_field(j, "cuda_core_tflops", where);
  for (auto& [k, v] : cuda.items())
    g.cuda_core_tflops[dtype_key(k, where)] = number_in(cuda, k.c_str(), 1e-6, 1e6, where + ": cuda_core_tflops");
  // fp32 GEMMs run on CUDA cores (SIMT tiles) unless the GPU file says otherwise.
  if (!g.precisions.count(DType::fp32) && g.cuda_core_tflops.count(DType::fp32)) {
    PrecisionSpec spec;
    spec.unit = Unit::cuda;
    spec.peak_tflops = g.cuda_core_tflops[DType::fp32];
    spec.align = 1;
    if (!arch_tiles.contains("fp32")) throw InputError(arch_path, "no tiles for precision 'fp32'");
    spec.tiles = parse_tiles(arch_tiles.at("fp32"), arch_path);
    g.precisions[DType::fp32] = spec;
  }
  // Notes shown as text: control characters escaped (docs/errors.md "Bytes and locales").
  for (auto& [k, v] : object_field(j, "sources", where).items())
    g.sources[printable(k)] = printable(v.is_string() ? v.get<std::string>() : json_text(v));
  return g;
}

GpuModel load_gpu(const std::string& id_or_path, const std::string& db_dir) {
  const bool is_path = id_or_path.find('/') != std::string::npos ||
                       fs::path(id_or_path).extension() == ".json";
  // An id names a file of the database: letters, digits, '-', '_', '.' only.
  if (!is_path && (id_or_path.empty() || id_or_path.size() > 64 ||
                   id_or_path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                       std::string::npos))
    throw InputError("--gpu", fmt::format("'{}' is neither a GPU id (letters, digits, '-', '_', '.'; at most 64) nor a "
                                          "path to a .json file", printable(id_or_path.substr(0, 80))));
  std::string path = is_path ? id_or_path : (fs::path(db_dir) / (id_or_path + ".json")).string();
  std::error_code exists_error;
  if (!fs::exists(fs::symlink_status(path, exists_error))) {
    if (is_path) throw InputError(path, "GPU file not found");
    const std::vector<std::string> ids = list_gpu_ids(db_dir);
    std::string known;
    for (const auto& id : ids) known += (known.empty() ? "" : ", ") + id;
    const std::string meant = closest_name(id_or_path, ids);
    throw InputError("--gpu", fmt::format("unknown GPU '{}'{} (known: {}; or pass a path to a .json file)", id_or_path,
                                          meant.empty() ? "" : fmt::format("; did you mean '{}'?", meant), known));
  }
  const json j = read_json_file(path, "GPU file", kMaxGpuFileBytes);
  return gpu_from_json(j, fs::path(path).stem().string(), path, gpu_arch_dir(path, db_dir));
}

// A GPU file outside the database still finds its architecture file in the
// database, so a user's own file needs only datasheet facts.
std::string gpu_arch_dir(const std::string& gpu_file, const std::string& db_dir) {
  std::error_code ec;
  const fs::path beside = fs::path(gpu_file).parent_path() / "arch";
  return (fs::is_directory(beside, ec) ? beside : fs::path(db_dir) / "arch").string();
}

std::vector<std::string> list_gpu_ids(const std::string& db_dir) {
  std::vector<std::string> ids;
  // A loop of links or an unreadable folder is the folder's error, not an
  // empty database (docs/errors.md).
  auto unreadable = [&](const std::error_code& ec) {
    return InputError(db_dir, fmt::format("GPU folder cannot be read ({})", ec.message()));
  };
  std::error_code ec;
  const auto st = fs::status(db_dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw unreadable(ec);
  if (!fs::is_directory(st)) return ids;
  fs::directory_iterator it(db_dir, ec);
  if (ec) throw unreadable(ec);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw unreadable(ec);
    std::error_code entry_ec;  // an entry that is a loop of links is no GPU file
    if (it->is_regular_file(entry_ec) && it->path().extension() == ".json") ids.push_back(it->path().stem().string());
  }
  if (ec) throw unreadable(ec);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<GpuModel> load_gpu_database(const std::string& db_dir) {
  const auto ids = list_gpu_ids(db_dir);
  if (ids.empty()) throw InputError(db_dir, "no GPU files (*.json) in this directory");
  std::vector<GpuModel> gpus;
  for (const auto& id : ids) gpus.push_back(load_gpu(id, db_dir));
  return gpus;
}

}  // namespace tilewave
