"""calibrate/validate/attention_paths.py: the kernel names that say how PyTorch ran attention, and the summary
that tells hand-written attention, the math fallback and agreement apart."""
from calibrate.pair.kernel_names import kernel_class
from calibrate.validate import attention_paths


def test_sdpa_path_names_the_fused_kernels_and_the_math_paths_softmax():
    assert kernel_class("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>(Flash_fwd_params)",
                        "sdpa_path") == "fused"
    assert kernel_class("fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
                        "sdpa_path") == "fused"
    assert kernel_class("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
                        "isneginf_kernel_impl", "sdpa_path") == "math softmax"
    assert kernel_class("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8", "sdpa_path") == "other"


def test_the_summary_counts_each_kind_of_network_once():
    result = [("timm/nest", 24, 24, 0, 24), ("timm/swin", 13, 0, 0, 0), ("timm/deit", 12, 12, 12, 0),
              ("timm/davit", 24, 12, 12, 0), ("timm/hiera", 16, 12, 12, 4)]
    text = "\n".join(attention_paths.lines(result, ["timm/broken"]))
    assert "| `timm/nest` | 24 | 24 | 0 | 24 |" in text
    assert "5 networks with attention. Eager tilewave costs some chains op by op in 3 (`timm/swin`, `timm/davit`, " \
           "`timm/hiera`)" in text
    assert "which 2 networks' profiles show (`timm/nest`, `timm/hiera`)" in text
    assert "In 4 the predicted fused kernels are the measured ones, one for one; they differ in `timm/nest`" in text
    assert "left out, tilewave cannot analyse them: timm/broken" in text


def test_each_sdpa_case_is_named_by_the_path_its_kernels_show(tmp_path):
    import json
    import pytest
    path = tmp_path / "sdpa_paths.jsonl"
    rows = [{"header": True},
            {"case": "plain", "q": [2, 4, 8, 16], "k": [2, 4, 8, 16], "mask": None, "call_us": 10.0,
             "kernels": [["void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>", 1, 9.0]]},
            {"case": "5-D", "q": [2, 3, 4, 8, 16], "k": [2, 3, 4, 8, 16], "mask": ["torch.bool", [2, 1, 8, 8]],
             "call_us": 50.0, "kernels": [["sm80_xmma_gemm_f32f32_f32f32_f32_nn_n", 2, 20.0],
                                          ["void at::native::vectorized_elementwise_kernel<4, isneginf_kernel_impl",
                                           1, 1.0]]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = "\n".join(attention_paths.case_lines(str(path)))
    assert "| plain | 2\u00d74\u00d78\u00d716 | 2\u00d74\u00d78\u00d716 | - | fused | 10.0 |" in text
    assert "| 5-D | 2\u00d73\u00d74\u00d78\u00d716 | 2\u00d73\u00d74\u00d78\u00d716 | torch.bool 2\u00d71\u00d78\u00d78 | math | 50.0 |" in text
    path.write_text('{"header": true}\n{"case": "x"}\n')
    with pytest.raises(attention_paths.InputError, match="not an sdpa_paths.py file"):
        attention_paths.case_lines(str(path))
    path.write_text('{"header": true}\n')
    with pytest.raises(attention_paths.InputError, match="no case rows"):
        attention_paths.case_lines(str(path))
