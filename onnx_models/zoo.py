"""The networks of onnx_models/, in one place: the 23 bundled ones, the
validation-only sets (onnx_models/<set>/, never used to fit anything;
docs/validation.md says in which order they met the model) and how each is
built with random weights. Read by export.py here and by
calibrate/netbench on the GPU machine, so both build the same networks."""
import torch
import torchvision

BUNDLED = ["resnet18", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
           "wide_resnet50_2", "vgg16", "alexnet", "squeezenet1_1", "googlenet",
           "inception_v3", "densenet121", "mobilenet_v2", "mobilenet_v3_small",
           "mobilenet_v3_large", "mnasnet1_0", "shufflenet_v2_x1_0",
           "efficientnet_b0", "efficientnet_b4", "efficientnet_v2_s",
           "regnet_y_400mf", "regnet_x_3_2gf", "convnext_tiny"]

VALIDATION_SETS = {
    "unseen": ["resnet34", "vgg11", "squeezenet1_0", "densenet169", "resnext101_32x8d",
               "wide_resnet101_2", "regnet_x_400mf", "regnet_x_1_6gf", "regnet_x_8gf",
               "regnet_y_800mf", "regnet_y_3_2gf", "shufflenet_v2_x2_0", "mnasnet0_5",
               "efficientnet_b2", "efficientnet_v2_m", "convnext_small"],
    "unseen2": ["vgg13", "vgg19", "densenet161", "densenet201", "resnext101_64x4d", "regnet_x_800mf",
                "regnet_x_16gf", "regnet_y_1_6gf", "regnet_y_8gf", "shufflenet_v2_x0_5", "shufflenet_v2_x1_5",
                "mnasnet0_75", "mnasnet1_3", "efficientnet_b1", "efficientnet_b3", "convnext_base"],
    "unseen3": ["regnet_x_32gf", "regnet_y_16gf", "regnet_y_32gf", "efficientnet_b5", "efficientnet_b6",
                "efficientnet_b7", "efficientnet_v2_l", "convnext_large"],
    # Segmentation networks (dilated convs, upsampling), on their main output.
    "unseen4": ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
                "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"],
}
SEGMENTATION = set(VALIDATION_SETS["unseen4"])
ALL = BUNDLED + [n for names in VALIDATION_SETS.values() for n in names]

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


def build(name):
    """Random-init torchvision model; no weight download ever happens."""
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
