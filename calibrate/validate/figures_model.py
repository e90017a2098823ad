"""Figures of docs/model.md that calibrate/validate/doc_figures.py reprints and checks: the fitted terms the
model's sections name, as the shipped H200 file holds them, with each parameter's unit from its one definition."""
import json

from calibrate import module

H200 = "gpu_models/h200.json"


def model_runtime_terms(runs):
    """docs/model.md: the runtime and layout/precision sets of gpu_models/h200.json (`tilewave params` gives each unit), intervals left to "Prediction intervals"."""
    params = [p for p in module.tilewave_module(runs.tw).params() if p["file"] == "gpu"]
    units = {p["name"]: p["unit"] for p in params}
    intervals = {p["name"] for p in params if p["owner"] == "validation"}
    sets = json.load(open(H200))["runtime_params"]
    lines = ["| set | parameter | value | unit |", "| --- | --- | ---: | --- |"]
    for name, entry in sets.items():
        for param, value in sorted(entry["params"].items()):
            if param not in intervals:
                lines.append(f"| {name} | `{param}` | {value:g} | {units.get(param, '?')} |")
    return lines


FIGURES = {"model-runtime-terms": model_runtime_terms}
