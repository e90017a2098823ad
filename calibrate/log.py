"""The one progress-line format of calibrate/'s long-running scripts."""
import datetime
import sys


def log(path, *parts, stream=None):
    """One line, timestamped, on stderr (or `stream`) as it happens, and appended to
    `path` too when one is given (the GPU runs keep it beside their rows)."""
    line = "%s %s" % (datetime.datetime.now().strftime("%H:%M:%S"), " ".join(str(p) for p in parts))
    print(line, file=stream or sys.stderr, flush=True)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")
