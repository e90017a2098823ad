"""The in-process tilewave module (analyzer/python, CMake target tilewave_python), found once
for every script: on the path (PYTHONPATH=build/analyzer/python), else built beside the CLI."""
import glob
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CLI = os.path.join(ROOT, "build", "analyzer", "tilewave")


def tilewave_module(cli=None):
    """`import tilewave`; where it is not on the path, the build's copy beside `cli` (the CLI
    at build/analyzer/tilewave has the module in build/analyzer/python). ImportError, naming
    where it looked, when neither is there."""
    try:
        import tilewave
        return tilewave
    except ImportError:
        pass
    folder = os.path.join(os.path.dirname(os.path.abspath(cli or DEFAULT_CLI)), "python")
    built = sorted(glob.glob(os.path.join(folder, "tilewave.*.so")))
    if not built:
        raise ImportError("the tilewave Python module is neither on PYTHONPATH nor in %s "
                          "(cmake --build build --target tilewave_python)" % os.path.relpath(folder))
    spec = importlib.util.spec_from_file_location("tilewave", built[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["tilewave"] = module  # later `import tilewave` gets this one
    return module
