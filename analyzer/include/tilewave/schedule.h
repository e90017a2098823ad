// Stage 9: the host against the GPU queue (docs/model.md "Schedule"). Each
// kernel's device time comes in from the cost stage; the host's cost to
// issue it from the host description; the launch mode decides how they
// overlap. Needs no ONNX and no GPU file.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tilewave/exec_axes.h"
#include "tilewave/gpu_model.h"
#include "tilewave/ir/kernel_graph.h"

namespace tilewave {

// Every host parameter (scope ParamScope::host), as param_table() is for the GPU.
const std::vector<ParamInfo>& host_param_table();

// The CPU and framework that issue the kernels: gpu_models/hosts/<id>.json.
// The host is an axis of its own, never chosen by a GPU file: every GPU and
// network of one run is issued by the same host (docs/model.md "Schedule").
struct HostModel {
  std::string id, name, source_file, trust;   // trust: calibrated | default
  std::map<std::string, double> params;       // complete: defaults filled in
  std::map<std::string, std::string> sources; // param or fact -> where it comes from
  // Machines of this host's kind take between spread_low and spread_high
  // times this one's time to issue the same ops, as calibration measured
  // them (1, 1: not measured). Host-bound steps are stated as a range from it.
  double spread_low = 1, spread_high = 1;
  double param(const std::string& name) const;
  // Host time to issue a kernel of this call class, µs.
  double call_us(HostCall c) const;
};
// The host every command uses when none is named (--host, Python's host=).
const char* default_host_id();
// By id (a stem in <gpu_dir>/hosts/, or "builtin") or by path to a .json file.
HostModel load_host(const std::string& id_or_path, const std::string& gpu_dir);
HostModel host_from_json(const nlohmann::json& j, const std::string& id, const std::string& where);
// The one writer of host files: what host_from_json reads back to `h`
// (name, trust, every parameter, machine_spread when measured, sources).
nlohmann::json host_to_json(const HostModel& h);
// host_param_table()'s starting values alone (id "builtin", trust "default"):
// the fits' start, and library callers that pass no host.
HostModel builtin_host();

struct LaunchItem {
  double device_us = 0;  // the kernel's own time on the GPU
  HostCall call = HostCall::op;
  int host_views = 0;  // view ops the host runs before launching it
};

// One kernel on both timelines, µs from the step's start.
struct ScheduledKernel {
  int kernel = -1;  // index in the kernel graph (cost_network fills it)
  double host_start_us = 0, host_end_us = 0;  // the host issuing it (graph: 0, 0)
  double gpu_start_us = 0, gpu_end_us = 0;
  double gpu_wait_us = 0;  // the GPU idle just before it: launch gap, or waiting on the host
};

struct Schedule {
  Launch launch = Launch::graph;
  double step_us = 0;       // the step as a user times it
  double gpu_busy_us = 0;   // sum of the kernels' device times
  double gpu_idle_us = 0;   // step_us - gpu_busy_us
  double host_busy_us = 0;  // the host's issue time (loop: every op; graph: one graph launch)
  bool host_bound = false;  // the host's issue time exceeds the GPU's busy time: the host sets the pace
  // step_us on the fastest and the slowest machines of the host's kind
  // (HostModel::spread_low/high; both step_us under graph replay).
  double step_low_us = 0, step_high_us = 0;
  std::vector<ScheduledKernel> kernels;  // in launch order, one per item
};

// graph: kernels back to back, each after `launch_gap_us` (replays timed
// back to back, so the host's graph launch overlaps the replay before).
// loop: the host issues each op in turn; a kernel starts once it is issued
// (plus the launch latency) and the kernel before it ends; the step ends at
// the synchronize after the last kernel.
// timeline = false: the totals alone (Schedule::kernels left empty), as the search needs them.
Schedule schedule_step(const std::vector<LaunchItem>& items, Launch launch, const HostModel& host,
                       double launch_gap_us, bool timeline = true);

}  // namespace tilewave
