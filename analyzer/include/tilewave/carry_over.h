// Carrying calibrated parameters to a GPU that was never measured, by what
// each parameter is a property of (ParamOwner; docs/calibration.md
// "Carry-over"). Library code: the CLI's `calibrate carry` only writes it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tilewave/gpu_model.h"

namespace tilewave {

struct CarriedParam {
  double value = 0;
  std::string from;  // the donor GPU's id
  std::string rule;  // why that donor: "same instruction family (mma-sm80)" …
  std::string origin() const { return from + ": " + rule; }
};

struct CarryOver {
  // Every parameter a donor gave; one absent keeps the target's own value
  // (its architecture default, when no donor shares its instruction family).
  std::map<std::string, CarriedParam> params;
  // Per runtime parameter set (runtime_params key), the same rules.
  std::map<std::string, std::map<std::string, CarriedParam>> runtime_params;
  std::vector<std::string> donors;  // ids, in the order of preference given
};

// The memory family of a memory type: "hbm" (HBM2, HBM2e, HBM3, HBM3e),
// "gddr" (GDDR6, GDDR6X, GDDR7), "" for none given.
std::string memory_family(const std::string& memory_type);

// Each parameter from the first donor (in the order given) that the rule of
// its owner accepts:
// - architecture: a donor of the same instruction family, else none;
// - memory system: the same memory type, else the same memory family, else
//   the first donor (its rule then says so);
// - kernel launch, runtime: the first donor of the same architecture, else
//   the first donor.
// Values scale by ParamInfo::scale. Donors must be calibrated on the card
// or fitted from a published benchmark (trust "calibrated" or
// "fitted-from-benchmark"); InputError naming the file otherwise.
CarryOver carry_over(const GpuModel& target, const std::vector<GpuModel>& donors);

// The target with the carried values in place (and their origins), as the
// file `calibrate carry` writes would load.
GpuModel with_carried(const GpuModel& target, const CarryOver& c);

// The GPU without any interval parameter (owner validation) in its runtime
// sets: a file fitted to a GPU's own results is no longer the carried file
// whose misses its carried interval stated.
GpuModel without_intervals(GpuModel g);

}  // namespace tilewave
