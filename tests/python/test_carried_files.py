"""Every carried GPU file is what `calibrate carry` makes of today's donors, in the order its own
`carried_over.from` names them: a refit of a donor that is not carried on leaves the file stale
(calibrate/reproduce_runtimes.sh step 2b carries the H200's; calibrate/validate/other_gpus.py --write
the Blackwell files from the fitted RTX cards and the H200)."""
import glob
import json
import os
import subprocess

import pytest
import tilewave

HERE = os.path.dirname(__file__)
CLI = os.environ.get("TILEWAVE_CLI", os.path.join(HERE, "..", "..", "build", "analyzer", "tilewave"))
GPU_DIR = os.path.join(HERE, "..", "..", "gpu_models")


def carried_files():
    out = []
    for path in sorted(glob.glob(os.path.join(GPU_DIR, "*.json"))):
        with open(path) as f:
            record = json.load(f)
        if record.get("trust") == "carried-over":
            out.append((os.path.basename(path)[:-len(".json")], record["carried_over"]["from"]))
    return out


CARRIED = carried_files()
DATABASE = {g["id"]: g for g in tilewave.gpu_database()}


def test_the_carried_files_include_those_from_the_h200_and_from_the_fitted_rtx_cards():
    donors = dict(CARRIED)
    assert {"h100", "a100", "l4"} <= {g for g, d in donors.items() if d == ["h200"]}
    assert donors.get("rtx5090") == ["rtx4090", "rtx3090", "h200"]


@pytest.mark.parametrize("gpu,donors", CARRIED, ids=[g for g, _ in CARRIED])
def test_a_carried_file_holds_what_carrying_from_its_donors_gives_now(gpu, donors):
    carried = json.loads(subprocess.run([CLI, "calibrate", "carry", "--gpu", ",".join(donors), "--to", gpu],
                                        check=True, capture_output=True, text=True).stdout)
    held = DATABASE[gpu]

    def values(of, names):  # the database fills what a file leaves out with defaults
        return {k: of.get(k) for k in names}
    assert values(held["params"], carried["params"]) == pytest.approx(carried["params"], abs=1e-4)
    assert held["runtime_params"].keys() == carried["runtime_params"].keys()
    for name, set_ in carried["runtime_params"].items():
        assert values(held["runtime_params"][name], set_["params"]) == pytest.approx(set_["params"], abs=1e-4), name
