"""The network sets of onnx_models/zoo.py, for the pair, fit and validate steps, without
importing torch (what the measure step wrote is read by calibrate/jsonl.py)."""
import sys


def zoo_sets():
    """Set membership without importing torch (zoo.py imports it at the top)."""
    import types
    for mod in ("torch", "torchvision"):
        if mod not in sys.modules:
            stub = types.ModuleType(mod)
            stub.nn = types.SimpleNamespace(Module=object)
            sys.modules[mod] = stub
    from onnx_models import zoo
    fit, held, _, _ = zoo.runtime_split()
    return zoo, {"fit": set(fit), "heldout": set(held), "fresh": set(zoo.RUNTIME_FRESH),
                 "fresh2": set(zoo.RUNTIME_FRESH2)}

