"""analyzer/data/kernel_names.json is read twice: by the C++ `check`
(compiled in, here through the module) and by calibrate/'s scripts
(calibrate/pair/kernel_names.py). Both readers must give every kernel name
the project has profiled the same class in every vocabulary (issue 22: the
C++ and Python kernel classifiers agree)."""
import pytest

import tilewave
from calibrate.pair import kernel_names


def test_the_cpp_and_python_readers_classify_every_profiled_name_alike():
    names = kernel_names.profiled_names()
    assert len(names) > 3000  # the runtime, harness and network profiles are all there
    vocabularies = tilewave.kernel_name_vocabularies()
    assert vocabularies == list(kernel_names.vocabularies())
    for vocabulary in vocabularies:
        cpp = [tilewave.kernel_class_of_name(n, vocabulary) for n in names]
        py = [kernel_names.kernel_class(n, vocabulary) for n in names]
        differ = [(n, c, p) for n, c, p in zip(names, cpp, py) if c != p]
        assert not differ, f"{vocabulary}: {len(differ)} names differ, first {differ[0]}"
        assert len(set(cpp)) >= 3, f"{vocabulary}: the names fall in too few classes to test anything"


@pytest.mark.parametrize("name,vocabulary,expected", [
    ("sm90_xmma_fprop_implicit_gemm_f16f16", "check", "compute"),
    ("triton_poi_fused_add_relu_0", "check", "elementwise"),
    ("triton_poi_fused_add_relu_0", "runtime_fit", "fused"),
    ("cublasLt::splitKreduce_kernel", "runtime_fit", "library"),  # before the reduce rule it also matches
    ("at::native::reduce_kernel<512>", "runtime_fit", "reduce"),
    ("max_pool_forward_nhwc", "runtime_fit", "pool"),
    ("void at::native::direct_copy_kernel_cuda Half", "harness", "cast"),
    ("void at::native::direct_copy_kernel_cuda float", "harness", "other"),
    ("bn_fw_inf_1C11_kernel_NCHW", "harness", "bn"),
    # PyTorch's upsampling moves data, as the Resize it runs is predicted (a copy), not elementwise work.
    ("void at::native::(anonymous namespace)::upsample_bilinear2d_out_frame<float, float>", "pairing", "copy"),
    ("void at::native::(anonymous namespace)::upsample_nearest2d_nhwc_out_frame<c10::Half>", "check", "copy"),
])
def test_rules_read_in_order_with_their_case(name, vocabulary, expected):
    assert tilewave.kernel_class_of_name(name, vocabulary) == expected
    assert kernel_names.kernel_class(name, vocabulary) == expected


def test_an_unknown_vocabulary_is_an_error():
    with pytest.raises(ValueError):
        tilewave.kernel_class_of_name("x", "no_such")
