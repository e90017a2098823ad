// GPU files as the calibration commands write them (docs/calibration.md):
// the file a GpuModel was loaded from, with fitted or carried parameters and
// the record that says where they came from. Library code: the CLI only
// writes what these return, and tests read it back (tests/test_carry_over.cpp).
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tilewave/carry_over.h"
#include "tilewave/gpu_model.h"

namespace tilewave {

// Parameters as GPU files store them: rounded to 1e-5 (the fits' own
// precision is coarser), so a file reads back to the values it prints.
double stored_param(double value);

// `gpu`'s own file (gpu.source_file) with `fitted` parameters and the
// provenance record `key` (calibration, network_calibration,
// from_benchmark, carried_over), its trust set, and its facts and sources
// kept as they were. replace_params: the file's parameters become `fitted`
// alone (carry-over rewrites the whole set); otherwise `fitted` is merged
// over them. A null runtime_params keeps the file's runtime sets.
// InputError naming the file if it cannot be read back.
nlohmann::json gpu_file_with_params(const GpuModel& gpu, const std::map<std::string, double>& fitted,
                                    const std::string& key, const nlohmann::json& provenance,
                                    Trust trust = Trust::calibrated,
                                    const nlohmann::json& runtime_params = nullptr, bool replace_params = false);

// The file `calibrate carry` writes for `target`: carry_over()'s values
// (base and runtime sets), each with its origin, the donors' facts, and
// `date` (ISO 8601) in the carried_over record; trust "carried-over".
nlohmann::json carried_gpu_file(const GpuModel& target, const std::vector<GpuModel>& donors, const CarryOver& carried,
                                const std::string& date);

// The one GPU-file writer (the calibration commands, `tilewave.write_gpu` and
// every script that writes a GPU file go through it): `j` is first read back
// as a GPU file would be (its architecture from `arch_dir`), so a file that
// `analyze` would refuse is never written; then it is written atomically
// (write_output). InputError naming `path` otherwise.
void write_gpu_file(const std::string& path, const nlohmann::json& j, const std::string& arch_dir);

}  // namespace tilewave
