"""The GPU files carried from the H200 alone are what `calibrate carry` makes of today's h200.json: a refit
of the H200 that is not carried on leaves them stale (calibrate/reproduce_runtimes.sh step 2b carries them)."""
import json
import os
import subprocess

import pytest
import tilewave

CLI = os.environ.get("TILEWAVE_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "analyzer",
                                                  "tilewave"))
FROM_H200 = [g for g in tilewave.gpu_database() if g["trust"] == "carried-over" and g["param_origin"]
             and all(origin.startswith("h200: ") for origin in g["param_origin"].values())]


def test_some_files_are_carried_from_the_h200():
    assert {"h100", "a100", "l4"} <= {g["id"] for g in FROM_H200}


@pytest.mark.parametrize("gpu", FROM_H200, ids=lambda g: g["id"])
def test_a_file_carried_from_the_h200_holds_what_carrying_gives_now(gpu):
    carried = json.loads(subprocess.run([CLI, "calibrate", "carry", "--gpu", "h200", "--to", gpu["id"]],
                                        check=True, capture_output=True, text=True).stdout)
    def held(values, names):  # the database fills what a file leaves out with defaults
        return {k: values.get(k) for k in names}
    assert held(gpu["params"], carried["params"]) == pytest.approx(carried["params"], abs=1e-4)
    assert gpu["runtime_params"].keys() == carried["runtime_params"].keys()
    for name, values in carried["runtime_params"].items():
        assert held(gpu["runtime_params"][name], values["params"]) == pytest.approx(values["params"], abs=1e-4), name
