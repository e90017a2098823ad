"""calibrate/validate/gpu_pair.py: two GPUs on the same networks."""
import gzip
import json

import pytest

from calibrate.validate import gpu_pair
from calibrate.cli import InputError

H200 = {"id": "a", "sms": 132, "boost_clock_mhz": 1980.0, "dram_bandwidth_gbs": 4800.0}
H100 = {"id": "b", "sms": 132, "boost_clock_mhz": 1980.0, "dram_bandwidth_gbs": 3350.0}


def test_the_dram_share_is_zero_when_the_sms_set_the_rate_and_one_when_dram_does():
    assert gpu_pair.dram_share(1.0, H200, H100) == pytest.approx(0.0)
    assert gpu_pair.dram_share(4800 / 3350, H200, H100) == pytest.approx(1.0)
    assert gpu_pair.dram_share(1 + 0.5 * (4800 / 3350 - 1), H200, H100) == pytest.approx(0.5)


def test_no_dram_share_where_the_sm_rates_differ_or_the_bandwidths_do_not():
    assert gpu_pair.dram_share(1.1, H200, dict(H100, sms=114)) is None
    assert gpu_pair.dram_share(1.1, H200, dict(H200)) is None


def test_an_unknown_gpu_is_one_error_naming_it():
    with pytest.raises(InputError, match="no GPU file nosuchgpu"):
        gpu_pair.gpu_facts(None, ["h200", "nosuchgpu"])


def test_folders_with_no_setting_in_common_are_one_error(tmp_path):
    for name, model in (("a", "timm/x"), ("b", "timm/y")):
        (tmp_path / name).mkdir()
        row = {"model": model, "precision": "amp_fp16", "layout": "nchw", "batch": 1, "status": "ok",
               "step_ms_median": 1.0, "graph_ms": 0.5, "host_ms": 1.0}
        with gzip.open(tmp_path / name / "bench_median.jsonl.gz", "wt") as f:
            f.write(json.dumps(row) + "\n")
    with pytest.raises(InputError, match="no setting measured in both"):
        gpu_pair.setting_lines(None, str(tmp_path / "a"), str(tmp_path / "b"), "h200", "h100")
