"""calibrate/fit/harness_passes.py: cuDNN's layout transforms pair with tilewave's one to one, per direction,
only where a forward's profile has as many of that direction as tilewave predicts; a --runs folder without
profiles is one line and exit 1."""
import os
import subprocess
import sys

from calibrate.fit import harness_passes
from calibrate.module import ROOT

TO_NHWC = "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true>(int"
TO_NCHW = "void cudnn::engines_precompiled::nhwcToNchwKernel<__half, __half, float, true, false>(int"
CONV = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"


def transform(name, nbytes):
    return {"name": name, "op": "layout_transform", "bytes": nbytes, "layer": {"op": "transform"}}


def test_each_direction_pairs_in_launch_order_where_its_counts_agree():
    layers = [transform("/a/Conv/to_nhwc", 100), transform("/a/Conv/filter_to_nhwc", 10),
              {"name": "/a/Conv", "op": "Conv", "layer": {"op": "conv"}}, transform("/a/Conv/to_nchw", 200)]
    profiled = [[TO_NHWC, 5.0], [TO_NHWC, 1.5], [CONV, 20.0], [TO_NCHW, 7.0]]
    pairs = harness_passes.paired_transforms(profiled, layers)
    assert [(layer["name"], us) for layer, us in pairs] == [
        ("/a/Conv/to_nhwc", 5.0), ("/a/Conv/filter_to_nhwc", 1.5), ("/a/Conv/to_nchw", 7.0)]
    # cuDNN transformed a pointwise convolution tilewave runs on NCHW: two more of each direction in the
    # profile. Neither direction pairs, rather than charging their time to the predicted kernels.
    extra = profiled + [[TO_NHWC, 9.0], [CONV, 4.0], [TO_NCHW, 9.0]]
    assert harness_passes.paired_transforms(extra, layers) == []
    # Only the direction whose counts disagree is left out.
    one_more = profiled + [[TO_NCHW, 9.0]]
    assert [layer["name"] for layer, _ in harness_passes.paired_transforms(one_more, layers)] == [
        "/a/Conv/to_nhwc", "/a/Conv/filter_to_nhwc"]


def test_a_runs_folder_without_profiles_is_one_line_and_exit_1(tmp_path):
    done = subprocess.run([sys.executable, "-m", "calibrate.fit.harness_passes", "build/analyzer/tilewave",
                           "--runs", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              filter(None, [ROOT, os.environ.get("PYTHONPATH")]))))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("harness_passes.py: ")
    assert str(tmp_path) in done.stderr
