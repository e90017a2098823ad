"""The GPU's state as nvidia-smi reports it, for the rows the measure scripts write."""
import os
import subprocess


def nvidia_smi(fields, index=None):
    """nvidia-smi's `--query-gpu=FIELDS` values, comma-separated as it prints them, for
    GPU `index` (default: the first of CUDA_VISIBLE_DEVICES, else 0); None where
    nvidia-smi is missing or fails, since a row is still worth writing without it."""
    if index is None:
        index = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    cmd = ["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits"]
    if str(index).isdigit():
        cmd += ["-i", str(index)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = r.stdout.strip().splitlines()
    return lines[0].strip() if r.returncode == 0 and lines else None


def profiled_header(tool, reps, **fields):
    """The header row of a profiled measure script's JSON lines (strided_inputs.py, attention_sweep.py): the
    tool, PyTorch, CUDA and cuDNN, the GPU and its state, the repetitions, then the script's own fields."""
    import torch  # on the GPU machine only: the rest of calibrate/ runs without it
    return {"header": True, "tool": tool, "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(), "gpu": torch.cuda.get_device_name(),
            "gpu_state": nvidia_smi("driver_version,clocks.max.sm,clocks.sm,power.limit"), "reps": reps, **fields}
