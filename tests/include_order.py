#!/usr/bin/env python3
"""ctest include_order (docs/model.md "Pipeline"): the analyzer's stages, in
the order of the flow, and their public headers; no file includes a header of
a later stage, and no stage includes another stage's private header (a
quoted `../stage/x.h`).

usage: tests/include_order.py REPO_ROOT    (exit 1 naming each violation)
"""
import os
import re
import sys

# The flow, earliest first (docs/model.md "Pipeline"). A stage may include
# its own headers and those of any stage before it.
STAGES = ["core", "ir", "gpu", "load", "ops", "shape", "graph", "lower", "passes", "cost", "schedule", "layerset",
          "pipeline", "check", "space", "advise", "calibrate", "views", "cli", "python"]
# Stages that sit side by side after the pipeline: none includes another of them.
APPLICATIONS = {"check", "space", "advise", "calibrate"}
# Each public header of include/tilewave/ and the stage that owns it.
HEADERS = {
    "dtype.h": "core", "error.h": "core", "text.h": "core", "json_input.h": "core", "output_file.h": "core",
    "progress.h": "core", "version.h": "core", "exec_axes.h": "core",
    "ir/kernel_graph.h": "ir", "layer.h": "ir",
    "gpu_model.h": "gpu", "gpu_params.h": "gpu",
    "model.h": "load",
    "op_registry.h": "ops", "shape_context.h": "ops", "tensor_values.h": "ops",
    "shape_inference.h": "shape",
    "node_graph.h": "graph",
    "lowering.h": "lower", "exec_config.h": "lower",
    "passes.h": "passes",
    "kernel_cost.h": "cost",
    "schedule.h": "schedule", "network_cost.h": "schedule",
    "pipeline.h": "pipeline", "analysis.h": "pipeline", "run_options.h": "pipeline", "comparison.h": "pipeline",
    "ranking.h": "pipeline", "exec_options.h": "pipeline",
    "layer_set.h": "layerset",
    "trace_check.h": "check", "kernel_names.h": "check",
    "search_space.h": "space", "layer_list.h": "space", "space_cost.h": "space", "search.h": "space",
    "advise.h": "advise",
    "calibration.h": "calibrate", "benchmark_fit.h": "calibrate", "carry_over.h": "calibrate", "gpu_file.h": "calibrate",
    "report.h": "views", "html_report.h": "views",
}
EXTERNAL = {"tilewave_onnx.pb.h"}  # the protobuf classes generated at build time
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def stage_of(rel):
    """The stage of a file of analyzer/, by its folder (src/STAGE/, cli/, python/) or its header's entry."""
    parts = rel.split("/")
    if parts[0] == "src":
        return parts[1]
    if parts[0] in ("cli", "python"):
        return parts[0]
    if parts[0] == "include":
        return HEADERS.get("/".join(parts[2:]))
    return None


def main():
    root = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "analyzer")
    bad = []
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith((".h", ".cpp")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            own = stage_of(rel)
            if own is None or own not in STAGES:
                bad.append(f"analyzer/{rel}: in no stage (add its folder or header to tests/include_order.py)")
                continue
            for target in INCLUDE.findall(open(path, encoding="utf-8").read()):
                if target in EXTERNAL:
                    continue
                if target.startswith("tilewave/"):
                    other = HEADERS.get(target[len("tilewave/"):])
                    if other is None:
                        bad.append(f"analyzer/{rel}: includes {target}, a header of no stage")
                        continue
                elif "/" in target:
                    bad.append(f"analyzer/{rel}: includes {target}, another folder's private header")
                    continue
                else:
                    continue  # its own folder's private header
                if STAGES.index(other) > STAGES.index(own) or (
                        other != own and other in APPLICATIONS and own in APPLICATIONS):
                    bad.append(f"analyzer/{rel} ({own}): includes {target} of a later stage ({other})")
    for line in bad:
        print(line)
    print(f"include_order: {len(bad)} violation(s)" if bad else "include_order: every include runs down the flow")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
