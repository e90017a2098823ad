"""tilewave's settings for the harnesses calibrate/ timed with, in one place, as the
in-process module's keywords (tilewave.analyze(..., **CUDA_GRAPH)) and, through flags(),
as the CLI's flags.

CUDA_GRAPH: the runtime, network and NAS sets: weights in fp16 (.half()), channels_last,
the forward replayed as a CUDA graph. tilewave's defaults are timm's harness instead
(NCHW, autocast, a plain loop; docs/model.md "Execution configuration"), so every
script that predicts those sets names this one.

timm(): timm's benchmark.py harness (calibrate/measure/timm_harness_bench.py) in one of
the CONFIGURATIONS it times: eager, fp16 under autocast over fp32 weights (amp_fp16) or
`.half()` weights (half), in NCHW or channels_last, a plain loop or a CUDA graph."""

CUDA_GRAPH = {"layout": "nhwc", "amp": False, "graph": True}

# (precision, layout) the timm harness times, as its rows name them, and as tables label them.
CONFIGURATIONS = {("amp_fp16", "nchw"): "AMP NCHW", ("amp_fp16", "channels_last"): "AMP channels_last",
                  ("half", "channels_last"): ".half() channels_last"}
LAYOUT = {"nchw": "nchw", "channels_last": "nhwc"}  # a row's layout -> tilewave's


def timm(layout, amp=True, launch="loop"):
    """The keywords of one timm-harness setting: `layout` as its rows name it (nchw, channels_last),
    amp (autocast over fp32 weights) or .half() weights, launch "loop" or "graph"."""
    return {"runtime": "eager", "dtype": "fp16", "amp": amp, "layout": LAYOUT[layout], "graph": launch == "graph"}


def timm_row(row):
    """timm() of a timm-harness row (its precision and layout; amp_fp16 where a row predates the field)."""
    return timm(row["layout"], amp=row.get("precision", "amp_fp16") == "amp_fp16")


def flags(keywords):
    """The CLI's flags for module keywords: --name VALUE, and --name / --no-name for a bool."""
    out = []
    for name, value in keywords.items():
        out += [("--" if value else "--no-") + name] if isinstance(value, bool) else ["--" + name, str(value)]
    return out
