// The layer-set format (docs/layerset.md): JSON Lines of kernel problems,
// shared by `tilewave layers`, `--extract` and the calibration tools.
#pragma once
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tilewave/kernel_cost.h"
#include "tilewave/layer.h"

namespace tilewave {

// Throws std::invalid_argument with a message naming the field at fault.
Layer layer_from_json(const nlohmann::json& j);
// A line's `l2_hit_bytes` (LayerSetEntry), checked against the layer's bytes.
int64_t l2_hit_bytes_from_json(const nlohmann::json& j, const Layer& layer);
nlohmann::json layer_to_json(const Layer& layer);
// The model's breakdown of one kernel, as fields added to a layer object:
// `"time_us":…,"kernel":…,…` (no braces), and the same as a JSON object.
// deprecated_pred_us: a layer set's prediction also under its former name
// `pred_us`, last written by 0.x (docs/report.md "Field names").
std::string cost_fields(const KernelCost& c, bool deprecated_pred_us = false);
nlohmann::json cost_to_json(const KernelCost& c, bool deprecated_pred_us = false);

struct LayerSetEntry {
  int line = 0;             // 1-based line in the file
  nlohmann::json object;    // as read, extra fields kept
  Layer layer;
  // Bytes of its traffic found in L2 (field `l2_hit_bytes`): a kernel timed
  // by repeating one call on tensors that fit there, as a PyTorch sweep
  // times it. 0: calibration's runner rotates its buffers beyond L2.
  int64_t l2_hit_bytes = 0;
};

// Streams a file line by line (constant memory, for large sets); a bad line
// throws InputError "<file>:<line>: <problem>". Objects with "header": true
// (calibration runs) are skipped. `text` is the line as read.
void scan_layer_set(const std::string& path,
                    const std::function<void(const LayerSetEntry& entry, const std::string& text)>& fn);
// The same over a stream; `path` names it in errors.
void scan_layer_set(std::istream& in, const std::string& path,
                    const std::function<void(const LayerSetEntry& entry, const std::string& text)>& fn);
// The whole file at once.
std::vector<LayerSetEntry> read_layer_set(const std::string& path);
// scan_layer_set with each layer costed on `cost_model` (cost_layer): the
// stream `tilewave layers` presents, costed here so that its views only
// write (constant memory, as the scan).
void scan_costed_layer_set(
    const std::string& path, const CostModel& cost_model,
    const std::function<void(const LayerSetEntry& entry, const std::string& text, const KernelCost& cost)>& fn);
// Appends `fields` (cost_fields text) to the JSON object text `line`,
// keeping the line's own bytes: cheaper than re-serialising it, and exact.
std::string append_fields(const std::string& line, const std::string& fields);

}  // namespace tilewave
