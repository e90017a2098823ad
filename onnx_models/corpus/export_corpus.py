#!/usr/bin/env python3
"""Build a real-world ONNX corpus: timm CNN/ViT models and two transformers
models, each exported with the legacy (TorchScript) and the dynamo exporter,
plus ONNX Runtime transformer-optimizer and int8-quantized variants.
All weights are stripped (external data whose file is deleted).

Usage (on a machine with torch, timm, transformers, onnx, onnxruntime):
  python3 onnx_models/corpus/export_corpus.py --out DIR [--workers 14]
      [--deadline-s 420] [--hard-deadline-s 500] [--log-copy FILE]
      [--only NAME ...]

Output under DIR:
  legacy/<model>.onnx        torch.onnx.export(dynamo=False, opset 17), batch dim "batch"
  dynamo/<model>.onnx        torch.onnx.export(dynamo=True) at its default opset
  ort/<model>_optimized.onnx onnxruntime.transformers optimize_model output
  ort/<model>_int8_qdq.onnx  onnxruntime.quantization.quantize_static, QDQ format
  ort/<model>_int8_qop.onnx  same, QOperator format
  manifest.jsonl, failures.jsonl, versions.json, ops.json, log.txt

Every export runs in a pool of long-lived worker processes (one thread each);
a task that overruns its time limit gets its worker killed and replaced.
torch & co. are imported only inside functions, so `--help` works without them.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
import traceback

# --------------------------------------------------------------------------
# The model list (deterministic data).  (timm name, family, kind)
# kind: cnn | vit | hybrid | transformer
# --------------------------------------------------------------------------
TIMM_MODELS = [
    # resnet family
    ("resnet18", "resnet", "cnn"), ("resnet34", "resnet", "cnn"),
    ("resnet50", "resnet", "cnn"), ("resnet101", "resnet", "cnn"),
    ("resnet18d", "resnet", "cnn"), ("resnet26t", "resnet", "cnn"),
    ("resnet50d", "resnet", "cnn"), ("wide_resnet50_2", "resnet", "cnn"),
    ("resnetrs50", "resnet", "cnn"), ("resnetblur50", "resnet", "cnn"),
    ("resnetaa50d", "resnet", "cnn"), ("seresnet50", "resnet", "cnn"),
    ("ecaresnet26t", "resnet", "cnn"), ("ecaresnet50d", "resnet", "cnn"),
    ("gcresnet50t", "resnet", "cnn"), ("legacy_seresnet18", "resnet", "cnn"),
    ("resnet51q", "resnet", "cnn"), ("tresnet_m", "resnet", "cnn"),
    # resnetv2
    ("resnetv2_50", "resnetv2", "cnn"), ("resnetv2_50d_gn", "resnetv2", "cnn"),
    ("resnetv2_50x1_bit", "resnetv2", "cnn"), ("resnetv2_50d_evos", "resnetv2", "cnn"),
    # resnext / seresnext
    ("resnext50_32x4d", "resnext", "cnn"), ("resnext26ts", "resnext", "cnn"),
    ("resnext50d_32x4d", "resnext", "cnn"), ("resnext101_32x4d", "resnext", "cnn"),
    ("seresnext26d_32x4d", "seresnext", "cnn"), ("seresnext50_32x4d", "seresnext", "cnn"),
    ("seresnext26t_32x4d", "seresnext", "cnn"), ("seresnext26ts", "seresnext", "cnn"),
    # regnet
    ("regnetx_002", "regnet", "cnn"), ("regnety_002", "regnet", "cnn"),
    ("regnetz_b16", "regnet", "cnn"), ("regnetx_004", "regnet", "cnn"),
    ("regnety_004", "regnet", "cnn"), ("regnetz_c16", "regnet", "cnn"),
    ("regnetx_008", "regnet", "cnn"), ("regnety_008", "regnet", "cnn"),
    ("regnetz_d8", "regnet", "cnn"), ("regnetx_016", "regnet", "cnn"),
    ("regnety_016", "regnet", "cnn"), ("regnetx_032", "regnet", "cnn"),
    ("regnety_032", "regnet", "cnn"), ("regnetv_040", "regnet", "cnn"),
    # efficientnet (PyTorch-style padding)
    ("efficientnet_b0", "efficientnet", "cnn"), ("efficientnet_b1", "efficientnet", "cnn"),
    ("efficientnet_b3_pruned", "efficientnet", "cnn"), ("efficientnet_lite0", "efficientnet", "cnn"),
    ("efficientnet_b2", "efficientnet", "cnn"), ("efficientnet_es", "efficientnet", "cnn"),
    ("efficientnet_b3", "efficientnet", "cnn"), ("efficientnet_em", "efficientnet", "cnn"),
    ("efficientnetv2_rw_t", "efficientnet", "cnn"), ("gc_efficientnetv2_rw_t", "efficientnet", "cnn"),
    ("efficientnetv2_rw_s", "efficientnet", "cnn"),
    # TF ports with TF "same" padding
    ("tf_efficientnet_b0", "efficientnet_tf", "cnn"),
    ("tf_mobilenetv3_large_minimal_100", "efficientnet_tf", "cnn"),
    ("tf_efficientnet_lite0", "efficientnet_tf", "cnn"),
    ("tf_efficientnetv2_b0", "efficientnet_tf", "cnn"),
    ("tf_mobilenetv3_large_100", "efficientnet_tf", "cnn"),
    ("tf_efficientnet_b1", "efficientnet_tf", "cnn"),
    ("tf_mixnet_s", "efficientnet_tf", "cnn"),
    ("tf_efficientnet_es", "efficientnet_tf", "cnn"),
    ("tf_mobilenetv3_small_minimal_100", "efficientnet_tf", "cnn"),
    ("tf_efficientnet_cc_b0_4e", "efficientnet_tf", "cnn"),
    ("tf_efficientnet_b3", "efficientnet_tf", "cnn"),
    ("tf_efficientnetv2_s", "efficientnet_tf", "cnn"),
    # mobilenet
    ("mobilenetv2_100", "mobilenet", "cnn"), ("mobilenetv3_large_100", "mobilenet", "cnn"),
    ("mobilenetv3_small_100", "mobilenet", "cnn"), ("mobilenetv4_conv_small", "mobilenet", "cnn"),
    ("mobilenetv1_100", "mobilenet", "cnn"), ("mobilenetv2_050", "mobilenet", "cnn"),
    ("mobilenetv2_140", "mobilenet", "cnn"), ("mobilenetv2_110d", "mobilenet", "cnn"),
    ("mobilenetv3_small_050", "mobilenet", "cnn"), ("mobilenetv3_rw", "mobilenet", "cnn"),
    ("mobilenetv4_conv_medium", "mobilenet", "cnn"),
    ("mobilenetv4_hybrid_medium", "mobilenet", "hybrid"),
    # mnasnet / fbnet / nas
    ("mnasnet_100", "mnasnet", "cnn"), ("semnasnet_100", "mnasnet", "cnn"),
    ("mnasnet_small", "mnasnet", "cnn"), ("spnasnet_100", "mnasnet", "cnn"),
    ("fbnetc_100", "fbnet", "cnn"), ("fbnetv3_b", "fbnet", "cnn"), ("fbnetv3_d", "fbnet", "cnn"),
    ("hardcorenas_a", "hardcorenas", "cnn"), ("hardcorenas_f", "hardcorenas", "cnn"),
    ("tinynet_a", "tinynet", "cnn"), ("tinynet_e", "tinynet", "cnn"),
    ("lcnet_050", "lcnet", "cnn"), ("lcnet_100", "lcnet", "cnn"),
    ("mixnet_s", "mixnet", "cnn"), ("mixnet_m", "mixnet", "cnn"),
    # ghostnet / rexnet
    ("ghostnet_100", "ghostnet", "cnn"), ("ghostnetv2_100", "ghostnet", "cnn"),
    ("repghostnet_100", "ghostnet", "cnn"),
    ("rexnet_100", "rexnet", "cnn"), ("rexnet_150", "rexnet", "cnn"), ("rexnetr_100", "rexnet", "cnn"),
    # densenet / dla / dpn / hrnet
    ("densenet121", "densenet", "cnn"), ("densenetblur121d", "densenet", "cnn"),
    ("densenet169", "densenet", "cnn"),
    ("dla34", "dla", "cnn"), ("dla46_c", "dla", "cnn"), ("dla60x_c", "dla", "cnn"),
    ("dla60", "dla", "cnn"), ("dla102", "dla", "cnn"),
    ("dpn68", "dpn", "cnn"), ("dpn68b", "dpn", "cnn"), ("dpn92", "dpn", "cnn"),
    ("hrnet_w18_small", "hrnet", "cnn"), ("hrnet_w18_small_v2", "hrnet", "cnn"),
    ("hrnet_w18", "hrnet", "cnn"),
    # inception / xception
    ("inception_v3", "inception", "cnn"), ("inception_v4", "inception", "cnn"),
    ("inception_resnet_v2", "inception", "cnn"), ("inception_next_tiny", "inception", "cnn"),
    ("legacy_xception", "xception", "cnn"), ("xception41", "xception", "cnn"),
    ("xception41p", "xception", "cnn"), ("xception65", "xception", "cnn"),
    # vgg / repvgg / mobileone
    ("vgg11", "vgg", "cnn"), ("vgg11_bn", "vgg", "cnn"), ("vgg13_bn", "vgg", "cnn"), ("vgg16", "vgg", "cnn"),
    ("repvgg_a0", "repvgg", "cnn"), ("repvgg_b0", "repvgg", "cnn"), ("repvgg_a2", "repvgg", "cnn"),
    ("repvgg_b1g4", "repvgg", "cnn"),
    ("mobileone_s0", "mobileone", "cnn"), ("mobileone_s1", "mobileone", "cnn"),
    # cspnet / darknet / vovnet / selecsls
    ("cspresnet50", "cspnet", "cnn"), ("cs3darknet_m", "cspnet", "cnn"),
    ("cspdarknet53", "cspnet", "cnn"), ("cspresnext50", "cspnet", "cnn"),
    ("cs3darknet_focus_m", "cspnet", "cnn"), ("cs3sedarknet_l", "cspnet", "cnn"),
    ("darknet53", "darknet", "cnn"), ("darknet17", "darknet", "cnn"),
    ("darknet21", "darknet", "cnn"), ("sedarknet21", "darknet", "cnn"),
    ("ese_vovnet19b_dw", "vovnet", "cnn"), ("ese_vovnet39b", "vovnet", "cnn"), ("vovnet39a", "vovnet", "cnn"),
    ("selecsls42b", "selecsls", "cnn"), ("selecsls60", "selecsls", "cnn"),
    # res2net / resnest / skresnet
    ("res2net50_26w_4s", "res2net", "cnn"), ("res2next50", "res2net", "cnn"),
    ("res2net50_14w_8s", "res2net", "cnn"), ("res2net50d", "res2net", "cnn"),
    ("resnest14d", "resnest", "cnn"), ("resnest26d", "resnest", "cnn"), ("resnest50d", "resnest", "cnn"),
    ("skresnet18", "skresnet", "cnn"), ("skresnet34", "skresnet", "cnn"), ("skresnext50_32x4d", "skresnet", "cnn"),
    # nfnet (weight-standardised convs, no BN)
    ("nf_resnet50", "nfnet", "cnn"), ("dm_nfnet_f0", "nfnet", "cnn"), ("nf_regnet_b1", "nfnet", "cnn"),
    ("eca_nfnet_l0", "nfnet", "cnn"), ("nfnet_l0", "nfnet", "cnn"),
    # gernet
    ("gernet_s", "gernet", "cnn"), ("gernet_m", "gernet", "cnn"), ("gernet_l", "gernet", "cnn"),
    # convnext
    ("convnext_atto", "convnext", "cnn"), ("convnext_tiny", "convnext", "cnn"),
    ("convnext_femto", "convnext", "cnn"), ("convnext_pico", "convnext", "cnn"),
    ("convnext_nano", "convnext", "cnn"), ("convnext_small", "convnext", "cnn"),
    ("convnextv2_atto", "convnextv2", "cnn"), ("convnextv2_nano", "convnextv2", "cnn"),
    ("convnextv2_tiny", "convnextv2", "cnn"),
    ("hgnet_tiny", "hgnet", "cnn"), ("hgnetv2_b0", "hgnet", "cnn"),
    ("repvit_m1", "repvit", "cnn"),
    ("poolformer_s12", "poolformer", "cnn"), ("poolformerv2_s12", "poolformer", "cnn"),
    # hybrids (conv + attention)
    ("efficientformer_l1", "efficientformer", "hybrid"), ("efficientformerv2_s0", "efficientformer", "hybrid"),
    ("levit_128s", "levit", "hybrid"), ("levit_conv_128s", "levit", "hybrid"), ("levit_128", "levit", "hybrid"),
    ("mobilevit_s", "mobilevit", "hybrid"), ("mobilevit_xxs", "mobilevit", "hybrid"),
    ("mobilevitv2_050", "mobilevit", "hybrid"), ("mobilevit_xs", "mobilevit", "hybrid"),
    ("edgenext_xx_small", "edgenext", "hybrid"), ("edgenext_small", "edgenext", "hybrid"),
    ("fastvit_t8", "fastvit", "hybrid"),
    ("efficientvit_b0", "efficientvit", "hybrid"), ("efficientvit_m0", "efficientvit", "hybrid"),
    ("coatnet_nano_rw_224", "maxvit", "hybrid"), ("maxvit_nano_rw_256", "maxvit", "hybrid"),
    ("maxvit_tiny_tf_224", "maxvit", "hybrid"),
    ("tiny_vit_5m_224", "tiny_vit", "hybrid"),
    ("botnet26t_256", "byoanet", "hybrid"), ("halonet26t", "byoanet", "hybrid"),
    ("lambda_resnet26t", "byoanet", "hybrid"),
    ("vit_tiny_r_s16_p8_224", "vit_hybrid", "hybrid"), ("vit_small_r26_s32_224", "vit_hybrid", "hybrid"),
    ("focalnet_tiny_srf", "focalnet", "hybrid"), ("gcvit_xxtiny", "gcvit", "hybrid"),
    ("visformer_tiny", "visformer", "hybrid"), ("coat_lite_tiny", "coat", "hybrid"),
    ("sequencer2d_s", "sequencer", "hybrid"),
    # vision transformers / MLP mixers
    ("vit_tiny_patch16_224", "vit", "vit"), ("vit_small_patch16_224", "vit", "vit"),
    ("vit_base_patch16_224", "vit", "vit"), ("vit_base_patch32_224", "vit", "vit"),
    ("vit_relpos_small_patch16_224", "vit", "vit"),
    ("deit_tiny_patch16_224", "deit", "vit"), ("deit_small_patch16_224", "deit", "vit"),
    ("deit_tiny_distilled_patch16_224", "deit", "vit"), ("deit3_small_patch16_224", "deit", "vit"),
    ("swin_tiny_patch4_window7_224", "swin", "vit"), ("swinv2_tiny_window8_256", "swin", "vit"),
    ("swinv2_cr_tiny_ns_224", "swin", "vit"),
    ("convit_tiny", "convit", "vit"), ("pit_ti_224", "pit", "vit"), ("pit_xs_224", "pit", "vit"),
    ("crossvit_tiny_240", "crossvit", "vit"), ("crossvit_9_240", "crossvit", "vit"),
    ("cait_xxs24_224", "cait", "vit"), ("xcit_nano_12_p16_224", "xcit", "vit"),
    ("eva02_tiny_patch14_224", "eva", "vit"), ("beit_base_patch16_224", "beit", "vit"),
    ("twins_svt_small", "twins", "vit"), ("twins_pcpvt_small", "twins", "vit"),
    ("pvt_v2_b0", "pvt", "vit"), ("nest_tiny_jx", "nest", "vit"), ("davit_tiny", "davit", "vit"),
    ("mvitv2_tiny", "mvit", "vit"), ("tnt_s_patch16_224", "tnt", "vit"),
    ("mixer_b16_224", "mlp_mixer", "vit"), ("resmlp_12_224", "mlp_mixer", "vit"),
    ("gmlp_s16_224", "mlp_mixer", "vit"),
]

# transformers models built from configs (random weights, no downloads).
HF_MODELS = [
    {"stem": "hf_bert_L4_H256_sdpa", "arch": "bert", "attn": "sdpa"},
    {"stem": "hf_gpt2_L2_H256_sdpa", "arch": "gpt2", "attn": "sdpa"},
    {"stem": "hf_bert_L4_H256_eager", "arch": "bert", "attn": "eager"},
    {"stem": "hf_gpt2_L2_H256_eager", "arch": "gpt2", "attn": "eager"},
]
HF_SEQ = 128

# models whose legacy task also runs the ORT transformer optimizer:
# stem -> (model_type, num_heads, hidden_size)
ORT_OPTIMIZE = {
    "hf_bert_L4_H256_sdpa": ("bert", 4, 256),
    "hf_bert_L4_H256_eager": ("bert", 4, 256),
    "hf_gpt2_L2_H256_sdpa": ("gpt2", 4, 256),
    "hf_gpt2_L2_H256_eager": ("gpt2", 4, 256),
    "vit_tiny_patch16_224": ("vit", 3, 192),
}
# models whose legacy task also produces int8 quantized variants
QUANTIZE = ["resnet18", "mobilenetv2_100"]

LEGACY_OPSET = 17
SIZE_THRESHOLD = 1024          # bytes; larger initializers are stripped
TIMEOUT = {"legacy": 90, "legacy+": 180, "dynamo": 120, "dynamo_static": 90}


# --------------------------------------------------------------------------
# helpers shared by parent and worker (no torch)
# --------------------------------------------------------------------------
def stem_of(name):
    return name.replace("/", "_")


_ABS_RE = re.compile(r"(?<![\w.<$])/(?:root|tmp|home|opt|usr|var|work|mnt|srv|proc|dev)(?:/[^\s/'\"():,]+)*")


def sanitize(text, prefixes=()):
    """Remove absolute paths from text (for committed logs)."""
    if not isinstance(text, str):
        return text
    for p, repl in prefixes:
        if p:
            text = text.replace(p, repl)
    return _ABS_RE.sub(lambda m: "<abs>/" + m.group(0).rsplit("/", 1)[-1], text)


def path_prefixes(out_dir, work_dir):
    import site
    import tempfile
    pre = []
    try:
        for d in site.getsitepackages() + [site.getusersitepackages()]:
            pre.append((d.rstrip("/") + "/", "<site-packages>/"))
    except Exception:
        pass
    pre += [(os.path.abspath(out_dir) + "/", ""), (os.path.abspath(out_dir), "."),
            (os.path.abspath(work_dir) + "/", "<work>/"), (os.path.abspath(work_dir), "<work>"),
            (os.getcwd() + "/", ""), (sys.prefix.rstrip("/") + "/", "<python>/"),
            (tempfile.gettempdir().rstrip("/") + "/", "<tmp>/")]
    pre = [(a, b) for a, b in pre if len(a) > 1]
    return sorted(pre, key=lambda ab: -len(ab[0]))


def last_line(text):
    lines = [l for l in str(text).strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


# --------------------------------------------------------------------------
# worker side (imports torch lazily)
# --------------------------------------------------------------------------
_TORCH_READY = []


def _torch_setup():
    """One thread per worker. set_num_interop_threads may be called once per
    process only (a second call aborts the process), hence the guard."""
    import torch
    if not _TORCH_READY:
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except Exception:
            pass
        _TORCH_READY.append(True)
    return torch


def add_noise(model):
    """Fresh init leaves many tensors identical (BN stats, zero biases,
    layer scales) which the exporters deduplicate into one initializer;
    tiny noise keeps every tensor distinct as in a trained model."""
    import torch
    with torch.no_grad():
        for t in model.state_dict().values():
            if t.is_floating_point():
                t.add_(torch.rand_like(t) * 1e-3)


def build_timm(name):
    import torch
    import timm
    torch.manual_seed(0)
    m = timm.create_model(name, pretrained=False)
    m.eval()
    cfg = getattr(m, "pretrained_cfg", None) or getattr(m, "default_cfg", None) or {}
    inp = tuple(int(v) for v in cfg.get("input_size", (3, 224, 224)))
    add_noise(m)

    def make(b, device="cpu"):
        g = torch.Generator().manual_seed(b)
        return (torch.randn((b,) + inp, generator=g).to(device),)
    return m, make, ["input"], ["output"], {"input_size": list(inp)}


def build_hf(spec):
    import torch
    import transformers
    torch.manual_seed(0)
    arch, attn = spec["arch"], spec["attn"]
    if arch == "bert":
        kw = dict(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                  intermediate_size=1024)
        Cfg, Model = transformers.BertConfig, transformers.BertModel
    else:
        kw = dict(n_layer=2, n_embd=256, n_head=4)
        Cfg, Model = transformers.GPT2Config, transformers.GPT2Model
    try:
        cfg = Cfg(attn_implementation=attn, **kw)
    except Exception:
        cfg = Cfg(**kw)
        cfg._attn_implementation = attn
    try:
        m = Model(cfg)
    except Exception:
        cfg = Cfg(**kw)
        cfg._attn_implementation = "eager"
        m = Model(cfg)
    actual = getattr(m.config, "_attn_implementation", None)
    if actual != attn and hasattr(m, "set_attn_implementation"):
        try:
            m.set_attn_implementation(attn)
            actual = getattr(m.config, "_attn_implementation", None)
        except Exception:
            pass
    m.eval()
    add_noise(m)
    vocab = cfg.vocab_size

    if arch == "bert":
        class Wrap(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask):
                out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
                return out[0]
        names = ["input_ids", "attention_mask"]

        def make(b, device="cpu"):
            g = torch.Generator().manual_seed(b)
            ids = torch.randint(0, vocab, (b, HF_SEQ), generator=g, dtype=torch.int64)
            return (ids.to(device), torch.ones((b, HF_SEQ), dtype=torch.int64, device=device))
    else:
        class Wrap(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids):
                out = self.inner(input_ids=input_ids, use_cache=False)
                return out[0]
        names = ["input_ids"]

        def make(b, device="cpu"):
            g = torch.Generator().manual_seed(b)
            ids = torch.randint(0, vocab, (b, HF_SEQ), generator=g, dtype=torch.int64)
            return (ids.to(device),)
    w = Wrap(m).eval()
    info = {"attn_implementation": actual, "attn_requested": attn,
            "seq_len": HF_SEQ, "config": kw}
    return w, make, names, ["last_hidden_state"], info


def build(task):
    if task["source"] == "hf":
        return build_hf(task["hf"])
    return build_timm(task["model"])


def count_params(model):
    return int(sum(p.numel() for p in model.parameters()))


def count_flops(model, make):
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(dev)
    res = {"flops_device": dev}
    try:
        for b in (1, 16):
            args = make(b, dev)
            fc = FlopCounterMode(display=False)
            with torch.no_grad(), fc:
                model(*args)
            res["flops_b%d" % b] = int(fc.get_total_flops())
            if b == 1:
                glob = fc.get_flop_counts().get("Global", {})
                res["flops_by_op_b1"] = {str(k): int(v) for k, v in sorted(glob.items(), key=lambda kv: str(kv[0]))}
        if dev == "cuda":
            res["gpu"] = torch.cuda.get_device_name(0)
    finally:
        model.to("cpu")
        if dev == "cuda":
            torch.cuda.empty_cache()
    return res


def tensor_nbytes(t):
    from onnx import numpy_helper
    if t.HasField("raw_data"):
        return len(t.raw_data)
    try:
        return int(numpy_helper.to_array(t).nbytes)
    except Exception:
        return 0


def lift_large_constants(graph):
    """Top-level Constant nodes with a tensor > SIZE_THRESHOLD become
    initializers (so they can be stripped like weights)."""
    from onnx import numpy_helper
    lifted = 0
    keep = []
    for n in graph.node:
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.attribute) == 1 \
                and n.attribute[0].name == "value" and tensor_nbytes(n.attribute[0].t) > SIZE_THRESHOLD:
            t = n.attribute[0].t
            if not t.HasField("raw_data"):
                t = numpy_helper.from_array(numpy_helper.to_array(t))
            t.name = n.output[0]
            graph.initializer.append(t)
            lifted += 1
        else:
            keep.append(n)
    if lifted:
        del graph.node[:]
        graph.node.extend(keep)
    return lifted


def to_raw(graph):
    """Initializers stored in typed fields (float_data...) -> raw_data, so the
    external-data converter sees them."""
    from onnx import numpy_helper
    for i, t in enumerate(graph.initializer):
        if not t.HasField("raw_data") and not len(t.external_data) and tensor_nbytes(t) > SIZE_THRESHOLD:
            nt = numpy_helper.from_array(numpy_helper.to_array(t), t.name)
            graph.initializer[i].CopyFrom(nt)


def drop_bulky_metadata(mp):
    """The dynamo exporter annotates every node with its Python stack trace
    and FX node text; drop those two keys (namespace / class hierarchy stay)."""
    dropped = 0
    for n in mp.graph.node:
        keep = [p for p in n.metadata_props if not ("stack_trace" in p.key or p.key.endswith("fx_node"))]
        if len(keep) != len(n.metadata_props):
            dropped += len(n.metadata_props) - len(keep)
            del n.metadata_props[:]
            n.metadata_props.extend(keep)
    return dropped


def rename_batch_dim(mp, input_names):
    """Make the dynamic batch dim's name 'batch' (the dynamo exporter may
    name it after a torch symbol)."""
    g = mp.graph
    old = None
    for vi in g.input:
        if vi.name in input_names:
            d = vi.type.tensor_type.shape.dim
            if len(d) and d[0].HasField("dim_param"):
                old = d[0].dim_param
                break
    if not old or old == "batch":
        return old
    pat = re.compile(r"(?<![\w])" + re.escape(old) + r"(?![\w])")
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and pat.search(d.dim_param):
                d.dim_param = pat.sub("batch", d.dim_param)
    return old


def default_opset(mp):
    for o in mp.opset_import:
        if o.domain in ("", "ai.onnx"):
            return int(o.version)
    return None


def io_dims(mp):
    inits = {t.name for t in mp.graph.initializer}

    def dims(vi):
        out = []
        for d in vi.type.tensor_type.shape.dim:
            out.append(d.dim_param if d.HasField("dim_param") else (int(d.dim_value) if d.HasField("dim_value") else "?"))
        return out
    ins = {vi.name: dims(vi) for vi in mp.graph.input if vi.name not in inits}
    outs = {vi.name: dims(vi) for vi in mp.graph.output}
    return ins, outs


def strip_and_save(mp, out_dir, rel):
    """Save `mp` to out_dir/rel with every initializer > 1 KiB as external
    data in <stem>.weights, then delete that file. Returns manifest bits."""
    import onnx
    from onnx.external_data_helper import convert_model_to_external_data
    path = os.path.join(out_dir, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    lifted = lift_large_constants(mp.graph)
    to_raw(mp.graph)
    location = os.path.splitext(os.path.basename(path))[0] + ".weights"
    convert_model_to_external_data(mp, all_tensors_to_one_file=True, location=location,
                                   size_threshold=SIZE_THRESHOLD, convert_attribute=False)
    onnx.save_model(mp, path)
    wpath = os.path.join(os.path.dirname(path), location)
    if os.path.exists(wpath):
        os.remove(wpath)
    return describe_stripped(path, rel, lifted)


def describe_stripped(path, rel, lifted):
    """The manifest bits of a saved stripped file (which must load without
    its weights); `lifted` is the number of Constants lifted before."""
    import onnx
    chk = onnx.load(path, load_external_data=False)     # must load without weights
    n_ext = sum(1 for t in chk.graph.initializer if len(t.external_data))
    n_inl = len(chk.graph.initializer) - n_ext
    big_const = sum(1 for n in chk.graph.node if n.op_type == "Constant" and n.attribute
                    and n.attribute[0].name == "value" and tensor_nbytes(n.attribute[0].t) > SIZE_THRESHOLD)
    ins, outs = io_dims(chk)
    return {"file": rel, "opset": default_opset(chk), "inputs": ins, "outputs": outs,
            "bytes": os.path.getsize(path), "nodes": len(chk.graph.node),
            "initializers_external": n_ext, "initializers_inline": n_inl,
            "constants_lifted": lifted, "large_constants_left": big_const,
            "ir_version": int(chk.ir_version),
            "opset_imports": {(o.domain or "ai.onnx"): int(o.version) for o in chk.opset_import}}


def export_legacy(torch, model, args, in_names, out_names, path, dynamic=True):
    import inspect
    import onnx
    kw = dict(opset_version=LEGACY_OPSET, input_names=in_names, output_names=out_names,
              do_constant_folding=True)
    if dynamic:
        kw["dynamic_axes"] = {n: {0: "batch"} for n in list(in_names) + list(out_names)}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kw["dynamo"] = False
    with torch.no_grad():
        torch.onnx.export(model, args, path, **kw)
    return onnx.load(path)


def export_dynamo(torch, model, args, in_names, out_names, dynamic=True):
    ds = None
    if dynamic:
        batch = torch.export.Dim("batch", min=1, max=1024)
        ds = tuple({0: batch} for _ in args)
    with torch.no_grad():
        prog = torch.onnx.export(model, args, dynamo=True, dynamic_shapes=ds,
                                 input_names=in_names, output_names=out_names)
    return prog.model_proto


def make_reader(name, shape):
    """A CalibrationDataReader feeding 8 torch.randn inputs."""
    import torch
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            g = torch.Generator().manual_seed(123)
            self.data = [{name: torch.randn(shape, generator=g).numpy()} for _ in range(8)]

        def get_next(self):
            return self.data.pop(0) if self.data else None

        def rewind(self):
            pass
    return Reader()


def run_task(task, out_dir, work_dir):
    """Run one task in this worker; returns result dict (never raises)."""
    import gc
    torch = _torch_setup()
    t0 = time.time()
    res = {"id": task["id"], "entries": [], "failures": [], "model_info": {}}
    base = {"model": task["model"], "family": task["family"], "kind": task["kind"]}
    stem = task["stem"]

    def fail(exporter, err, tb=""):
        res["failures"].append(dict(base, exporter=exporter, error=last_line(err) or str(err)[:300],
                                    detail=tb[-800:] if tb else ""))

    try:
        model, make, in_names, out_names, info = build(task)
    except Exception as e:
        fail(task["exporter_main"], "build: %s: %s" % (type(e).__name__, e), traceback.format_exc())
        return res
    params = count_params(model)
    res["model_info"].update(info)
    res["model_info"]["params"] = params
    base["params"] = params
    kind = task["type"]

    try:
        if kind == "legacy":
            full_path = full = os.path.join(work_dir, stem + ".legacy.onnx")
            try:
                ts = time.time()
                mp = export_legacy(torch, model, make(1), in_names, out_names, full, dynamic=True)
                e = strip_and_save(mp, out_dir, "legacy/%s.onnx" % stem)
                e.update(base, exporter="legacy", static_batch=False, export_s=round(time.time() - ts, 2))
                e.update({k: v for k, v in info.items() if k != "input_size"})
                res["entries"].append(e)
            except Exception as ex:
                full = None
                fail("legacy", "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
            # ORT transformer optimizer on the full-weight legacy export
            if stem in ORT_OPTIMIZE:
                if full is None:
                    fail("ort-optimizer", "skipped: legacy export failed")
                else:
                    mt, nh, hs = ORT_OPTIMIZE[stem]
                    try:
                        from onnxruntime.transformers.optimizer import optimize_model
                        ts = time.time()
                        opt = optimize_model(full, model_type=mt, num_heads=nh, hidden_size=hs)
                        stats = {k: int(v) for k, v in (opt.get_fused_operator_statistics() or {}).items() if v}
                        e = strip_and_save(opt.model, out_dir, "ort/%s_optimized.onnx" % stem)
                        e.update(base, exporter="ort-optimizer", static_batch=False,
                                 export_s=round(time.time() - ts, 2),
                                 ort_model_type=mt, ort_num_heads=nh, ort_hidden_size=hs,
                                 fused_ops=stats, source="legacy/%s.onnx" % stem)
                        e.update({k: v for k, v in info.items() if k != "input_size"})
                        res["entries"].append(e)
                    except Exception as ex:
                        fail("ort-optimizer", "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
            if os.path.exists(full_path):
                os.remove(full_path)
            # int8 static quantization from a static batch-1 legacy export
            if stem in QUANTIZE:
                qin = os.path.join(work_dir, stem + ".b1.onnx")
                try:
                    export_legacy(torch, model, make(1), in_names, out_names, qin, dynamic=False)
                except Exception as ex:
                    qin = None
                    for ex_name in ("ort-quant-qdq", "ort-quant-qop"):
                        fail(ex_name, "static legacy export: %s: %s" % (type(ex).__name__, ex), traceback.format_exc())
                if qin:
                    try:
                        import onnx
                        from onnxruntime.quantization import quantize_static, QuantFormat
                    except Exception as ex:
                        for ex_name in ("ort-quant-qdq", "ort-quant-qop"):
                            fail(ex_name, "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
                        os.remove(qin)
                        qin = None
                if qin:
                    shape = tuple(make(1)[0].shape)
                    for fmt, ex_name, suffix in ((QuantFormat.QDQ, "ort-quant-qdq", "int8_qdq"),
                                                 (QuantFormat.QOperator, "ort-quant-qop", "int8_qop")):
                        qout = os.path.join(work_dir, "%s.%s.onnx" % (stem, suffix))
                        try:
                            ts = time.time()
                            quantize_static(qin, qout, make_reader(in_names[0], shape),
                                            quant_format=fmt, per_channel=True)
                            e = strip_and_save(onnx.load(qout), out_dir, "ort/%s_%s.onnx" % (stem, suffix))
                            e.update(base, exporter=ex_name, static_batch=True,
                                     export_s=round(time.time() - ts, 2), per_channel=True,
                                     calibration="8 x torch.randn, MinMax",
                                     source="legacy export at static batch 1, opset %d" % LEGACY_OPSET)
                            res["entries"].append(e)
                        except Exception as ex:
                            fail(ex_name, "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
                        if os.path.exists(qout):
                            os.remove(qout)
                    if os.path.exists(qin):
                        os.remove(qin)
            # FLOP reference (GPU if present), unmodified fp32 model
            try:
                res["model_info"].update(count_flops(model, make))
            except Exception as ex:
                fail("flops", "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
        elif kind in ("dynamo", "dynamo_static"):
            dynamic = kind == "dynamo"
            try:
                ts = time.time()
                args = make(2 if dynamic else 1)
                mp = export_dynamo(torch, model, args, in_names, out_names, dynamic=dynamic)
                dropped = drop_bulky_metadata(mp)
                renamed = rename_batch_dim(mp, in_names) if dynamic else None
                e = strip_and_save(mp, out_dir, "dynamo/%s.onnx" % stem)
                e.update(base, exporter="dynamo", static_batch=not dynamic,
                         export_s=round(time.time() - ts, 2), metadata_props_dropped=dropped)
                if renamed and renamed != "batch":
                    e["batch_dim_renamed_from"] = renamed
                e.update({k: v for k, v in info.items() if k != "input_size"})
                if dynamic and not any("batch" in d for d in e["inputs"].values()):
                    e["warning"] = "no input dim named batch"
                res["entries"].append(e)
            except Exception as ex:
                fail("dynamo" if dynamic else "dynamo-static-retry",
                     "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
                if dynamic:
                    res["retry_static"] = True
    except Exception as ex:   # keep what was produced; record the rest
        fail(task["exporter_main"], "%s: %s" % (type(ex).__name__, ex), traceback.format_exc())
    finally:
        del model
        gc.collect()
        try:
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except Exception:
            pass
    res["seconds"] = round(time.time() - t0, 2)
    return res


def worker_pipes(args):
    """A worker's ends: a line-buffered copy of stdout for its JSON replies,
    stdout and stderr themselves sent to --worker-log. Returns (replies,
    path prefixes for sanitize)."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    logf = open(args.worker_log, "a", buffering=1)
    os.dup2(logf.fileno(), 1)
    os.dup2(logf.fileno(), 2)
    return proto, path_prefixes(args.out, args.work)


def serve_tasks(proto, args, run, crashed, clean):
    """Answer each task line on stdin with one JSON line on proto:
    run(task, out, work); crashed(task, exc) if run raised all the same;
    clean(result) just before it is written."""
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        print("=== task %s" % task["id"], flush=True)
        try:
            res = run(task, args.out, args.work)
        except BaseException as e:   # run should not raise; be safe
            res = crashed(task, e)
        clean(res)
        proto.write(json.dumps(res) + "\n")
    return 0


def worker_main(args):
    proto, prefixes = worker_pipes(args)
    try:
        _torch_setup()
        import warnings
        warnings.simplefilter("ignore")
        for mod in ("timm", "transformers", "onnx", "onnxruntime", "onnxscript"):
            try:
                __import__(mod)
            except Exception as e:
                print("preload %s failed: %s" % (mod, e), flush=True)
    except Exception as e:
        proto.write(json.dumps({"ready": False, "error": sanitize(str(e), prefixes)}) + "\n")
        return 1
    proto.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")

    def crashed(task, e):
        return {"id": task["id"], "entries": [], "model_info": {},
                "failures": [{"model": task["model"], "family": task["family"], "kind": task["kind"],
                              "exporter": task["exporter_main"],
                              "error": "%s: %s" % (type(e).__name__, e), "detail": traceback.format_exc()[-800:]}]}

    def clean(res):
        for f in res.get("failures", []):
            f["error"] = sanitize(f.get("error", ""), prefixes)
            f["detail"] = sanitize(f.get("detail", ""), prefixes)
    return serve_tasks(proto, args, run_task, crashed, clean)


# --------------------------------------------------------------------------
# parent side
# --------------------------------------------------------------------------
class Log:
    def __init__(self, paths, prefixes):
        self.files = [open(p, "a", buffering=1) for p in paths]
        self.t0 = time.time()
        self.lock = threading.Lock()
        self.prefixes = prefixes

    def __call__(self, msg):
        line = "[%7.1fs] %s" % (time.time() - self.t0, sanitize(msg, self.prefixes))
        with self.lock:
            print(line, flush=True)
            for f in self.files:
                f.write(line + "\n")


class Worker:
    """A worker process (`script --worker`), one thread, talking JSON lines."""
    script = os.path.abspath(__file__)
    env_extra = dict(TOKENIZERS_PARALLELISM="false", TF_CPP_MIN_LOG_LEVEL="3", TRANSFORMERS_OFFLINE="1")

    def __init__(self, idx, args, log):
        self.idx, self.args, self.log = idx, args, log
        self.p = None
        self.buf = b""
        self.ready = None

    def start(self):
        env = dict(os.environ)
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   PYTHONUNBUFFERED="1", HF_HUB_OFFLINE="1", **self.env_extra)
        wlog = os.path.join(self.args.work, "logs", "worker%02d.log" % self.idx)
        self.p = subprocess.Popen(
            [sys.executable, self.script, "--worker", "--out", self.args.out,
             "--work", self.args.work, "--worker-log", wlog],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.buf = b""
        msg = self.read(self.args.worker_start_s)
        if msg is None or not msg.get("ready"):
            self.kill()
            raise RuntimeError("worker %d did not start: %s" % (self.idx, msg))
        self.ready = msg

    def read(self, timeout):
        end = time.time() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], min(left, 5.0))
            if r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return {"eof": True}
                self.buf += chunk
            elif self.p.poll() is not None:
                return {"eof": True}
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line.decode())

    def send(self, task):
        self.p.stdin.write((json.dumps(task) + "\n").encode())
        self.p.stdin.flush()

    def kill(self):
        if self.p and self.p.poll() is None:
            self.p.kill()   # our own child, by its handle
            try:
                self.p.wait(10)
            except Exception:
                pass


WAIT = object()     # next_task's answer when a task is left but must wait


def start_worker(make, idx, log, what="start"):
    """make(idx).start(), or None (logged) if that fails."""
    w = make(idx)
    try:
        w.start()
    except Exception as e:
        log("worker %d %s failed: %s" % (idx, what, e))
        return None
    return w


def run_slot(idx, args, log, t_start, make, next_task, done, lost, go_on, started=None, renew=None):
    """One slot of the pool: a worker make(idx) runs next_task()'s tasks (None:
    stop; WAIT: ask again soon) under each task's "timeout" and the hard
    deadline. A reply goes to done(task, msg, seconds). A worker that overran
    (msg None) or died goes to lost(task, worker, msg, seconds, hard), which
    kills it; it is replaced while go_on(). started(idx, worker) follows the
    first start; renew(task) true: replace the worker after that task."""
    w = start_worker(make, idx, log)
    if w is None:
        return
    if started:
        started(idx, w)
    while True:
        task = next_task()
        if task is None:
            break
        if task is WAIT:
            time.sleep(0.5)
            continue
        ts = time.time()
        limit = min(task["timeout"], args.hard_deadline_s - (ts - t_start))
        try:
            w.send(task)
            msg = w.read(max(limit, 1))
        except Exception as e:
            msg = {"eof": True, "err": str(e)}
        dt = time.time() - ts
        if msg is None or msg.get("eof"):
            lost(task, w, msg, dt, time.time() - t_start >= args.hard_deadline_s - 1)
            if not go_on():
                break
        else:
            done(task, msg, dt)
            if not (renew and renew(task)):
                continue
            w.kill()
            if not go_on():
                return
        w = start_worker(make, idx, log, "restart")
        if w is None:
            return
    w.kill()


def run_slots(n, slot):
    """slot(0) ... slot(n - 1) in threads, started 0.2 s apart; wait for all."""
    threads = [threading.Thread(target=slot, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
        time.sleep(0.2)
    for t in threads:
        t.join()


def start_run(args, subdirs=(), packages=None):
    """Make OUT, OUT/<subdir>s and WORK/logs; open the progress log (OUT/log.txt
    and --log-copy) and log the package versions there.
    Returns (prefixes, log, t_start, versions)."""
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(os.path.join(args.work, "logs"), exist_ok=True)
    for d in subdirs:
        os.makedirs(os.path.join(args.out, d), exist_ok=True)
    prefixes = path_prefixes(args.out, args.work)
    logs = [os.path.join(args.out, "log.txt")] + ([args.log_copy] if args.log_copy else [])
    log = Log(logs, prefixes)
    t_start = time.time()
    versions = pkg_versions(packages or PACKAGES)
    log("versions: " + json.dumps(versions))
    return prefixes, log, t_start, versions


def split_missing(items, name_of, what, log, label=None):
    """(the items whose name_of(item) timm.list_models() has, the others),
    logged; all items if timm's list cannot be had."""
    label = label or name_of
    try:
        import timm
        avail = set(timm.list_models())
    except Exception as e:
        log("timm list_models failed: %s" % e)
        return list(items), []
    missing = [m for m in items if name_of(m) not in avail]
    present = [m for m in items if name_of(m) in avail]
    log("timm: %d %s requested, %d missing: %s" % (len(items), what, len(missing),
                                                   ", ".join(label(m) for m in missing)))
    return present, missing


def write_jsonl(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)


def make_tasks(models, hf_models):
    """Ordered task list: special models first, then the timm models with one
    per family before the second of any family, so a deadline cuts redundancy
    rather than whole families. Each model: a legacy and a dynamo task."""
    specials = set(QUANTIZE) | set(ORT_OPTIMIZE)
    items = []
    for h in hf_models:
        items.append(((-1, 0), dict(source="hf", model="transformers:%s(%s,attn=%s)" % (
            "BertModel" if h["arch"] == "bert" else "GPT2Model",
            "L4,H256,A4,I1024" if h["arch"] == "bert" else "L2,H256,A4", h["attn"]),
            family=h["arch"], kind="transformer", stem=h["stem"], hf=h)))
    rank = {}
    for i, (name, fam, kind) in enumerate(models):
        r = rank.get(fam, 0)
        rank[fam] = r + 1
        key = (-1, i) if name in specials else (r, i)
        items.append((key, dict(source="timm", model=name, family=fam, kind=kind, stem=stem_of(name))))
    items.sort(key=lambda kv: kv[0])
    tasks = []
    for _, m in items:
        heavy = m["stem"] in specials
        tasks.append(dict(m, type="legacy", exporter_main="legacy", id="legacy:" + m["stem"],
                          timeout=TIMEOUT["legacy+" if heavy else "legacy"]))
        tasks.append(dict(m, type="dynamo", exporter_main="dynamo", id="dynamo:" + m["stem"],
                          timeout=TIMEOUT["dynamo"]))
    return tasks


PACKAGES = ("torch", "torchvision", "timm", "transformers", "onnx", "onnxruntime",
            "onnxscript", "onnx-ir", "numpy", "protobuf")


def pkg_versions(packages=PACKAGES):
    from importlib import metadata
    out = {}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except Exception:
            out[p] = None
    out["python"] = sys.version.split()[0]
    return out


def walk_nodes(graph):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == 5:  # GRAPH
                yield from walk_nodes(a.g)
            elif a.type == 10:  # GRAPHS
                for g in a.graphs:
                    yield from walk_nodes(g)


def ops_summary(out_dir, entries):
    import onnx
    by_op = {}
    per_file = {}
    for e in entries:
        try:
            m = onnx.load(os.path.join(out_dir, e["file"]), load_external_data=False)
        except Exception:
            continue
        opsets = {(o.domain or "ai.onnx"): int(o.version) for o in m.opset_import}
        counts = {}
        nodes = list(walk_nodes(m.graph))
        for f in m.functions:
            for n in f.node:
                nodes.append(n)
        for n in nodes:
            dom = n.domain or "ai.onnx"
            key = n.op_type if dom == "ai.onnx" else "%s::%s" % (dom, n.op_type)
            counts[key] = counts.get(key, 0) + 1
            rec = by_op.setdefault((dom, n.op_type), {"domain": dom, "op": n.op_type, "opsets": set(),
                                                      "count": 0, "files": set(), "by_exporter": {}})
            rec["count"] += 1
            rec["files"].add(e["file"])
            if dom in opsets:
                rec["opsets"].add(opsets[dom])
            rec["by_exporter"][e["exporter"]] = rec["by_exporter"].get(e["exporter"], 0) + 1
        per_file[e["file"]] = dict(sorted(counts.items()))
    ops = []
    for (dom, op), r in sorted(by_op.items()):
        ops.append({"domain": dom, "op": op, "opset": sorted(r["opsets"]), "count": r["count"],
                    "files": len(r["files"]), "by_exporter": dict(sorted(r["by_exporter"].items()))})
    return {"ops": ops, "per_file": per_file}


def parent_main(args):
    prefixes, log, t_start, versions = start_run(args, ("legacy", "dynamo", "ort"))

    failures = []
    models = list(TIMM_MODELS)
    hf = list(HF_MODELS)
    if args.only:
        models = [m for m in models if m[0] in args.only]
        hf = [h for h in hf if h["stem"] in args.only]
    models, missing = split_missing(models, lambda m: m[0], "models", log)
    for name, fam, kind in missing:
        failures.append({"model": name, "family": fam, "kind": kind, "exporter": "all",
                         "error": "not in timm %s list_models()" % versions.get("timm"),
                         "reason": "missing"})
    tasks = make_tasks(models, hf)
    log("%d tasks (%d timm models, %d transformers models), %d workers, deadline %ds, hard %ds"
        % (len(tasks), len(models), len(hf), args.workers, args.deadline_s, args.hard_deadline_s))

    lock = threading.Lock()
    queue = list(tasks)
    results = []
    started = set()

    def next_task():
        with lock:
            if time.time() - t_start > args.deadline_s or not queue:
                return None
            t = queue.pop(0)
            started.add(t["id"])
            return t

    def lost(task, w, msg, dt, hard):
        reason = ("killed at hard deadline" if hard and msg is None else
                  "timeout after %.0fs (limit %ds)" % (dt, task["timeout"]) if msg is None else
                  "worker died (exit %s)" % w.p.poll())
        w.kill()
        with lock:
            failures.append({"model": task["model"], "family": task["family"], "kind": task["kind"],
                             "exporter": task["exporter_main"] if task["type"] != "dynamo_static"
                             else "dynamo-static-retry",
                             "error": reason, "reason": "timeout" if msg is None else "crash",
                             "seconds": round(dt, 1)})
        log("FAIL %-40s %s" % (task["id"], reason))

    def done(task, msg, dt):
        with lock:
            results.append((task, msg))
            for f in msg.get("failures", []):
                f.setdefault("reason", "exception")
                f["seconds"] = round(dt, 1)
                failures.append(f)
            if msg.get("retry_static"):
                for f in msg.get("failures", []):
                    if f["exporter"] == "dynamo":
                        f["retried_static"] = True
                queue.insert(0, dict(task, type="dynamo_static", id="dynamo_static:" + task["stem"],
                                     timeout=TIMEOUT["dynamo_static"]))
        files = ", ".join("%s(%dKB)" % (e["file"], e["bytes"] // 1024) for e in msg.get("entries", []))
        errs = "; ".join("%s: %s" % (f["exporter"], f["error"][:160]) for f in msg.get("failures", []))
        log("done %-40s %5.1fs %s%s" % (task["id"], dt, files, (" | FAILED " + errs) if errs else ""))

    def slot(idx):
        run_slot(idx, args, log, t_start, lambda i: Worker(i, args, log), next_task, done, lost,
                 lambda: time.time() - t_start <= args.deadline_s)

    run_slots(args.workers, slot)

    for t in queue:
        failures.append({"model": t["model"], "family": t["family"], "kind": t["kind"],
                         "exporter": t["exporter_main"], "error": "not started before the deadline",
                         "reason": "deadline"})

    # merge model info (flops, params) into every entry of the model
    info = {}
    for task, msg in results:
        mi = info.setdefault(task["model"], {})
        for k, v in msg.get("model_info", {}).items():
            if k not in mi or k.startswith("flops"):
                mi[k] = v
    entries = []
    for task, msg in results:
        for e in msg.get("entries", []):
            mi = info.get(e["model"], {})
            rec = {"file": e["file"], "model": e["model"], "family": e["family"], "kind": e["kind"],
                   "exporter": e["exporter"], "opset": e["opset"], "inputs": e["inputs"],
                   "flops_b1": mi.get("flops_b1"), "flops_b16": mi.get("flops_b16"),
                   "flops_by_op_b1": mi.get("flops_by_op_b1"), "static_batch": e["static_batch"],
                   "params": e.get("params", mi.get("params")), "bytes": e["bytes"]}
            for k, v in e.items():
                if k not in rec and k not in ("model_info",):
                    rec[k] = v
            if "input_size" in mi:
                rec["input_size"] = mi["input_size"]
            rec["flops_device"] = mi.get("flops_device")
            entries.append(rec)
    entries.sort(key=lambda r: r["file"])
    write_jsonl(os.path.join(args.out, "manifest.jsonl"), entries)
    failures.sort(key=lambda r: (r["model"], r["exporter"]))
    write_jsonl(os.path.join(args.out, "failures.jsonl"),
                [{k: sanitize(v, prefixes) if isinstance(v, str) else v for k, v in r.items()} for r in failures])

    dyn_opsets = sorted({e["opset"] for e in entries if e["exporter"] == "dynamo"})
    gpu = next((mi.get("gpu") for mi in info.values() if mi.get("gpu")), None)
    versions.update({"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t_start)),
                     "legacy_opset": LEGACY_OPSET, "dynamo_default_opset": dyn_opsets,
                     "flops_gpu": gpu, "workers": args.workers,
                     "wall_s": round(time.time() - t_start, 1)})
    write_json(os.path.join(args.out, "versions.json"), versions)
    try:
        ops = ops_summary(args.out, entries)
        with open(os.path.join(args.out, "ops.json"), "w") as f:   # one op / file a line
            f.write('{"ops": [\n' + ",\n".join(json.dumps(o) for o in ops["ops"]) + '\n],\n"per_file": {\n'
                    + ",\n".join("%s: %s" % (json.dumps(k), json.dumps(v)) for k, v in ops["per_file"].items())
                    + "\n}}\n")
    except Exception as e:
        log("ops summary failed: %s" % e)
    counts = {}
    for e in entries:
        counts[e["exporter"]] = counts.get(e["exporter"], 0) + 1
    log("files per exporter: %s; failures: %d; total bytes %d; wall %.0fs"
        % (json.dumps(counts), len(failures), sum(e["bytes"] for e in entries), time.time() - t_start))
    return 0


def new_parser(doc):
    """An argument parser whose description is doc's first paragraph and
    whose epilog is the rest."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter,
                                   epilog=doc.split("\n\n", 1)[1])


def add_run_args(ap, out_default, work_name, only_help, extra=None):
    """The options of a pool run: --out, --work, --workers, the deadlines,
    --worker-start-s, then extra(ap), --log-copy, --only and the worker's
    hidden ones."""
    ap.add_argument("--out", default=out_default, help="output folder")
    ap.add_argument("--work", default=None, help="scratch folder (default: OUT/../%s)" % work_name)
    ap.add_argument("--workers", type=int, default=14)
    ap.add_argument("--deadline-s", type=float, default=420,
                    help="start no new export after this many seconds")
    ap.add_argument("--hard-deadline-s", type=float, default=500,
                    help="kill exports still running after this many seconds")
    ap.add_argument("--worker-start-s", type=float, default=180)
    if extra:
        extra(ap)
    ap.add_argument("--log-copy", default=None, help="also append the progress log here")
    ap.add_argument("--only", nargs="*", default=None, help=only_help)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--worker-log", default=None, help=argparse.SUPPRESS)


def dispatch(ap, argv, work_name, worker, parent):
    """Parse argv; --work defaults to OUT/../<work_name>; run worker(args)
    with --worker, else parent(args)."""
    args = ap.parse_args(argv)
    if args.work is None:
        args.work = os.path.join(os.path.dirname(os.path.abspath(args.out)), work_name)
    if args.worker:
        return worker(args)
    return parent(args)


def main(argv=None):
    ap = new_parser(__doc__)
    add_run_args(ap, "corpus_out", "_corpus_work", "restrict to these model names / stems")
    return dispatch(ap, argv, "_corpus_work", worker_main, parent_main)


if __name__ == "__main__":
    sys.exit(main())
