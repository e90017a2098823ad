"""The networks of onnx_models/, in one place: the 23 bundled ones, the
validation-only sets (onnx_models/<set>/, never used to fit anything;
docs/validation.md says in which order they met the model) and how each is
built with random weights. Read by export.py here and by
calibrate/measure/netbench on the GPU machine, so both build the same networks."""
import torch
import torchvision

BUNDLED = ["resnet18", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
           "wide_resnet50_2", "vgg16", "alexnet", "squeezenet1_1", "googlenet",
           "inception_v3", "densenet121", "mobilenet_v2", "mobilenet_v3_small",
           "mobilenet_v3_large", "mnasnet1_0", "shufflenet_v2_x1_0",
           "efficientnet_b0", "efficientnet_b4", "efficientnet_v2_s",
           "regnet_y_400mf", "regnet_x_3_2gf", "convnext_tiny"]

VALIDATION_SETS = {
    "heldout_variants": ["resnet34", "vgg11", "squeezenet1_0", "densenet169", "resnext101_32x8d",
               "wide_resnet101_2", "regnet_x_400mf", "regnet_x_1_6gf", "regnet_x_8gf",
               "regnet_y_800mf", "regnet_y_3_2gf", "shufflenet_v2_x2_0", "mnasnet0_5",
               "efficientnet_b2", "efficientnet_v2_m", "convnext_small"],
    "heldout_variants_more": ["vgg13", "vgg19", "densenet161", "densenet201", "resnext101_64x4d", "regnet_x_800mf",
                "regnet_x_16gf", "regnet_y_1_6gf", "regnet_y_8gf", "shufflenet_v2_x0_5", "shufflenet_v2_x1_5",
                "mnasnet0_75", "mnasnet1_3", "efficientnet_b1", "efficientnet_b3", "convnext_base"],
    "heldout_largest": ["regnet_x_32gf", "regnet_y_16gf", "regnet_y_32gf", "efficientnet_b5", "efficientnet_b6",
                "efficientnet_b7", "efficientnet_v2_l", "convnext_large"],
    # Segmentation networks (dilated convs, upsampling), on their main output.
    "heldout_segmentation": ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
                "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"],
}
SEGMENTATION = set(VALIDATION_SETS["heldout_segmentation"])

# Runtime-profile networks (issue 7): torchvision and timm CNNs as users run
# them, grouped by architecture family. Whole families are held out of every
# fit; which ones is decided by RUNTIME_SPLIT_SEED alone (runtime_split()),
# fixed before the first measurement. timm names carry the "timm/" prefix.
RUNTIME_FAMILIES = {
    "resnet": ["resnet18", "resnet50", "timm/resnet26d", "timm/resnet50d"],
    "resnext": ["resnext50_32x4d", "timm/seresnext26d_32x4d"],
    "wide_resnet": ["wide_resnet50_2"],
    "vgg": ["vgg11", "vgg16"],
    "densenet": ["densenet121", "densenet169"],
    "mobilenet_v2": ["mobilenet_v2", "timm/mobilenetv2_140"],
    "mobilenet_v3": ["mobilenet_v3_large", "mobilenet_v3_small"],
    "efficientnet": ["efficientnet_b0", "timm/efficientnet_b2", "efficientnet_b4"],
    "efficientnet_v2": ["efficientnet_v2_s", "timm/efficientnetv2_rw_s"],
    "regnet": ["regnet_y_400mf", "regnet_x_3_2gf", "timm/regnety_016"],
    "convnext": ["convnext_tiny", "timm/convnext_nano"],
    "shufflenet": ["shufflenet_v2_x1_0"],
    "mnasnet": ["mnasnet1_0", "timm/spnasnet_100"],
    "squeezenet": ["squeezenet1_1"],
    "inception": ["googlenet", "inception_v3"],
    "dla": ["timm/dla34", "timm/dla60"],
    "cspnet": ["timm/cspresnet50", "timm/cspdarknet53"],
    "repvgg": ["timm/repvgg_a2"],
    "ghostnet": ["timm/ghostnet_100"],
    "mixnet": ["timm/mixnet_s", "timm/mixnet_m"],
    "rexnet": ["timm/rexnet_100"],
    "hrnet": ["timm/hrnet_w18_small"],
    "res2net": ["timm/res2net50_26w_4s"],
    "dpn": ["timm/dpn68"],
    "resnest": ["timm/resnest14d"],
    "selecsls": ["timm/selecsls42b"],
    "lcnet": ["timm/lcnet_100"],
    "fbnet": ["timm/fbnetc_100"],
    "gernet": ["timm/gernet_s"],
    "efficientnet_lite": ["timm/efficientnet_lite0", "timm/tinynet_a"],
}
RUNTIME_SPLIT_SEED = 7
# Measured once, after the runtime model was frozen: networks no run had seen.
RUNTIME_FRESH = ["resnet34", "timm/resnet101d", "timm/ecaresnet50d", "timm/skresnet18", "densenet201",
                 "timm/regnetx_016", "regnet_y_800mf", "timm/efficientnet_b1", "timm/mobilenetv3_large_100",
                 "timm/mnasnet_100", "timm/semnasnet_100", "timm/hardcorenas_a", "timm/dla46_c",
                 "timm/cspresnext50", "timm/darknet53", "timm/ese_vovnet19b_dw", "shufflenet_v2_x2_0",
                 "timm/repvgg_b0", "convnext_small", "timm/resnet18d"]

# Measured once, after the eager BatchNorm-pass and reduction terms were
# frozen (docs/validation.md "Runtimes"): networks no earlier run had seen.
RUNTIME_FRESH2 = ["timm/resnet34d", "timm/resnet152d", "timm/seresnet50", "timm/ecaresnet26t", "timm/res2next50",
                  "timm/dla102", "timm/gernet_m", "timm/ese_vovnet39b", "timm/hrnet_w18", "timm/regnety_032",
                  "timm/efficientnet_b3", "timm/tf_efficientnet_lite1", "timm/mixnet_l", "timm/rexnet_150",
                  "timm/mobilenetv2_100", "timm/mobilenetv3_small_100", "timm/lcnet_075", "timm/tinynet_b",
                  "efficientnet_b3", "regnet_x_800mf", "mnasnet0_75", "shufflenet_v2_x1_5"]


def runtime_split(seed=RUNTIME_SPLIT_SEED, held_out_share=0.4):
    """(fit networks, held-out networks): whole families, chosen by seed."""
    import random
    families = sorted(RUNTIME_FAMILIES)
    random.Random(seed).shuffle(families)
    n_held = round(len(families) * held_out_share)
    held = sorted(families[:n_held])
    fit = sorted(families[n_held:])
    members = lambda fams: [m for f in fams for m in RUNTIME_FAMILIES[f]]
    return members(fit), members(held), fit, held


def family_of(name):
    if name.startswith("space/"):   # a search-space candidate: space/<space>/<encoding>
        return "/".join(name.split("/")[:2])
    for fam, members in RUNTIME_FAMILIES.items():
        if name in members:
            return fam
    return None


VALIDATION_SETS["runtime_fit"], VALIDATION_SETS["runtime_heldout"] = runtime_split()[:2]
VALIDATION_SETS["runtime_fresh"] = RUNTIME_FRESH
VALIDATION_SETS["runtime_fresh2"] = RUNTIME_FRESH2
ALL = BUNDLED + [n for names in VALIDATION_SETS.values() for n in names if n not in BUNDLED]

# init_weights=False avoids scipy (truncnorm init); aux heads are
# training-only and would only add dead outputs.
EXTRA_KWARGS = {
    "googlenet": {"aux_logits": False, "init_weights": False},
    "inception_v3": {"aux_logits": False, "init_weights": False},
}
INPUT_SIZE = {"inception_v3": 299}   # everything else: 224


def expand(names):
    """A list of names, where a lone set name stands for its members."""
    return list(VALIDATION_SETS[names[0]]) if len(names) == 1 and names[0] in VALIDATION_SETS else names


class MainOutput(torch.nn.Module):
    """A segmentation network's "out" map alone, as its ONNX export has it."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def file_stem(name):
    """File-name form of a network name: "timm/dla34" -> "timm_dla34"."""
    return name.replace("/", "_")


def input_size(name, model=None):
    """Square input side the network is run at: timm's own default for timm
    networks, torchvision's (224, inception_v3 299) otherwise."""
    if name.startswith("space/"):
        import space_models
        return int(space_models.load_space(_space_file(name))["input"][2])
    if name.startswith("timm/") and model is not None:
        cfg = getattr(model, "pretrained_cfg", None) or getattr(model, "default_cfg", {})
        return int(cfg.get("input_size", (3, 224, 224))[-1])
    return INPUT_SIZE.get(name, 224)


def _space_file(name):
    import os
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "spaces", name.split("/")[1] + ".json")


def build(name):
    """Random-init torchvision or timm model; no weight download ever happens.
    space/<space>/<encoding>: a candidate of onnx_models/spaces/<space>.json."""
    if name.startswith("space/"):
        import os
        import sys
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "spaces"))
        import space_models
        return space_models.build(_space_file(name), name.split("/", 2)[2])
    if name.startswith("timm/"):
        import timm
        return timm.create_model(name[len("timm/"):], pretrained=False)
    if name in SEGMENTATION:
        seg = torchvision.models.segmentation
        return MainOutput(getattr(seg, name)(weights=None, weights_backbone=None, aux_loss=False))
    kw = dict(EXTRA_KWARGS.get(name, {}))
    models = torchvision.models
    if hasattr(models, "get_model"):
        make = lambda **k: models.get_model(name, weights=None, **k)
    else:   # very old torchvision
        make = lambda **k: getattr(models, name)(pretrained=False, **k)
    try:
        return make(**kw)
    except TypeError:
        # a renamed/removed keyword (e.g. init_weights) in some version:
        # aux_logits=False alone still gives the single-output network.
        return make(**{k: v for k, v in kw.items() if k == "aux_logits"})
