"""tilewave's flags for the harness calibrate/'s runtime, network and NAS sets
were timed with: weights in fp16 (.half()), channels_last, the forward
replayed as a CUDA graph. tilewave's defaults are timm's harness instead
(NCHW, autocast, a plain loop; docs/model.md "Execution configuration"), so
every script that predicts those sets names this one."""
HARNESS = ["--layout", "nhwc", "--no-amp", "--graph"]
