"""PyTorch networks of the search spaces in this folder, built from a
candidate's encoding (as `tilewave nas` writes it), block for block as
tilewave writes them (analyzer/src/space/write_blocks.cpp): torchvision's
InvertedResidual (with MnasNet's squeeze-excitation), RegNet's
ResBottleneckBlock and ResNet's Bottleneck/BasicBlock, with BatchNorm after
every conv, as users train and run them. Random init; nothing downloaded.

    import space_models
    net = space_models.build("onnx_models/spaces/regnet.json", "d13-w96-a20-m2.5-g32-b1-se0")
"""
import json
import math

import torch
from torch import nn
from torchvision.ops import SqueezeExcitation

# Choice names per family, in encoding order, with their encoding tokens
# (analyzer/src/space/search_space.cpp, rules_of).
TOKENS = {
    "mbconv": [("depth", "d"), ("width", "w"), ("expansion", "e"), ("kernel", "k"), ("se", "se"), ("stride", "s")],
    "regnet": [("depth", "d"), ("w0", "w"), ("wa", "a"), ("wm", "m"), ("group_width", "g"), ("bottleneck", "b"),
               ("se", "se")],
    "resnet": [("depth", "d"), ("width", "w"), ("bottleneck", "b"), ("stride", "s")],
}


def load_space(path):
    with open(path) as f:
        s = json.load(f)
    s.setdefault("activation", "relu6" if s["family"] == "mbconv" else "relu")
    s.setdefault("stem_width", 64 if s["family"] == "resnet" else 32)
    s.setdefault("head_width", 0)
    s.setdefault("classes", 1000)
    s.setdefault("input", [3, 224, 224])
    return s


def decode(space, encoding):
    stages = []
    for part in encoding.split("_"):
        values = []
        for (name, token), item in zip(TOKENS[space["family"]], part.split("-")):
            assert item.startswith(token), (encoding, token)
            values.append(float(item[len(token):]))
        stages.append(values)
    assert len(stages) == len(space["stages"]), encoding
    return stages


def act_layer(name):
    return {"relu": nn.ReLU, "relu6": nn.ReLU6, "silu": nn.SiLU}[name]


def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act(inplace=True))
    return nn.Sequential(*layers)


class MBConv(nn.Module):
    def __init__(self, cin, cout, expansion, k, stride, se, act):
        super().__init__()
        hidden = int(round(cin * expansion))       # round half to even, as tilewave's nearbyint
        layers = []
        if hidden != cin:
            layers.append(conv_bn(cin, hidden, 1, act=act))
        layers.append(conv_bn(hidden, hidden, k, stride, groups=hidden, act=act))
        if se:
            layers.append(SqueezeExcitation(hidden, max(1, cin // 4)))
        layers.append(conv_bn(hidden, cout, 1))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class XBlock(nn.Module):
    """RegNet's ResBottleneckBlock (torchvision.models.regnet)."""

    def __init__(self, cin, cout, stride, group_width, bottleneck, se):
        super().__init__()
        w_b = int(round(cout * bottleneck))
        self.proj = conv_bn(cin, cout, 1, stride) if (cin != cout or stride != 1) else None
        layers = [conv_bn(cin, w_b, 1, act=nn.ReLU), conv_bn(w_b, w_b, 3, stride, max(1, w_b // group_width), nn.ReLU)]
        if se:
            layers.append(SqueezeExcitation(w_b, max(1, int(round(0.25 * cin)))))
        layers.append(conv_bn(w_b, cout, 1))
        self.f = nn.Sequential(*layers)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act((self.proj(x) if self.proj is not None else x) + self.f(x))


class ResBlock(nn.Module):
    """torchvision's Bottleneck (output 4 x width) or BasicBlock."""

    def __init__(self, cin, width, stride, bottleneck):
        super().__init__()
        cout = 4 * width if bottleneck else width
        self.proj = conv_bn(cin, cout, 1, stride) if (cin != cout or stride != 1) else None
        if bottleneck:
            self.f = nn.Sequential(conv_bn(cin, width, 1, act=nn.ReLU), conv_bn(width, width, 3, stride, act=nn.ReLU),
                                   conv_bn(width, cout, 1))
        else:
            self.f = nn.Sequential(conv_bn(cin, width, 3, stride, act=nn.ReLU), conv_bn(width, cout, 3))
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act((self.proj(x) if self.proj is not None else x) + self.f(x))


def make_divisible(v, divisor):
    out = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return out + divisor if out < 0.9 * v else out


def regnet_stages(depth, w0, wa, wm, group_width, bottleneck):
    """RegNet's generator, as torchvision's BlockParams.from_init_params."""
    widths = []
    for j in range(int(depth)):
        u = w0 + wa * j
        s = round(math.log(u / w0) / math.log(wm))
        widths.append(int(round(w0 * wm ** s / 8)) * 8)
    stages = []
    for w in widths:
        if not stages or stages[-1][0] != w:
            stages.append([w, 0, int(group_width)])
        stages[-1][1] += 1
    out = []
    for w, d, g in stages:
        w_bot = math.floor(w * bottleneck)
        g = max(min(g, w_bot), 1)
        out.append((int(make_divisible(w_bot, g) / bottleneck), d, g))
    return out


def build(space_path, encoding):
    space = load_space(space_path)
    values = decode(space, encoding)
    act = act_layer(space["activation"])
    fam = space["family"]
    layers = []
    if fam == "resnet":
        layers += [conv_bn(space["input"][0], space["stem_width"], 7, 2, act=act), nn.MaxPool2d(3, 2, 1)]
    else:
        layers.append(conv_bn(space["input"][0], space["stem_width"], 3, 2, act=act))
    c = space["stem_width"]
    if fam == "mbconv":
        for depth, width, expansion, k, se, stride in values:
            for d in range(int(depth)):
                layers.append(MBConv(c, int(width), expansion, int(k), int(stride) if d == 0 else 1, bool(se), act))
                c = int(width)
    elif fam == "regnet":
        depth, w0, wa, wm, gw, b, se = values[0]
        for width, d_stage, g in regnet_stages(depth, w0, wa, wm, gw, b):
            for d in range(d_stage):
                layers.append(XBlock(c, width, 2 if d == 0 else 1, g, b, bool(se)))
                c = width
    else:
        for depth, width, bottleneck, stride in values:
            for d in range(int(depth)):
                layers.append(ResBlock(c, int(width), int(stride) if d == 0 else 1, bool(bottleneck)))
                c = 4 * int(width) if bottleneck else int(width)
    if space["head_width"]:
        layers.append(conv_bn(c, space["head_width"], 1, act=act))
        c = space["head_width"]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(c, space["classes"])]
    return nn.Sequential(*layers)
