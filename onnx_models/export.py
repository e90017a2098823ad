#!/usr/bin/python3
"""Export torchvision CNNs to weight-stripped ONNX graphs.

Usage:  /usr/bin/python3 onnx_models/export.py [--out DIR] [--opset N] [names...]

(Use Debian's /usr/bin/python3: torch/torchvision/onnx come from apt.)

Each model is exported in eval mode with random weights (no downloads) and a
symbolic batch dimension. Float weights are then moved to an external data
file which is deleted, so the .onnx keeps only the graph plus each
initializer's name/dtype/dims and an external-data reference.
"""
import argparse
import io
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper, shape_inference
from onnx.external_data_helper import set_external_data

import zoo

HERE = os.path.dirname(os.path.abspath(__file__))

FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE,
               TensorProto.BFLOAT16}


def strip_weights(model, path, strip_all=False):
    """Save `model` to `path` with weights as (deleted) external data.

    Integer initializers are kept inline by default: after constant folding
    they are Reshape targets, Unsqueeze axes, Slice bounds, Pad amounts...
    i.e. graph structure that shape inference needs, and they are tiny.
    """
    location = os.path.splitext(os.path.basename(path))[0] + ".weights"
    for t in model.graph.initializer:
        if t.HasField("raw_data") and (strip_all or t.data_type in FLOAT_TYPES):
            set_external_data(t, location)
    # onnx.save writes the raw bytes of tensors marked external into
    # <dir>/<location> and fills in offset/length; then we drop that file.
    onnx.save(model, path)
    weights = os.path.join(os.path.dirname(path), location)
    if os.path.exists(weights):
        os.remove(weights)


def export(name, out_dir, opset, strip_all):
    res = zoo.INPUT_SIZE.get(name, 224)
    torch.manual_seed(0)
    net = zoo.build(name).eval()
    # Fresh init leaves many tensors identical (BN stats, zero biases, layer
    # scales); the exporter then deduplicates them into one initializer plus
    # Identity nodes, which a pretrained export would not have. Tiny noise
    # keeps every tensor distinct (and running_var stays positive).
    with torch.no_grad():
        for t in net.state_dict().values():
            if t.is_floating_point():
                t.add_(torch.rand_like(t) * 1e-3)
    x = torch.randn(1, 3, res, res)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(
            net, x, buf, opset_version=opset, do_constant_folding=True,
            input_names=["input"], output_names=["output"],
            dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    model = onnx.load_from_string(buf.getvalue())
    path = os.path.join(out_dir, name + ".onnx")
    strip_weights(model, path, strip_all)
    return path


def _fix_batch(model, batch):
    for vi in list(model.graph.input) + list(model.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if len(dims) and dims[0].dim_param:
            dims[0].dim_value = batch  # clears dim_param (oneof)


def _unresolved(model):
    """Node outputs of an inferred model without a fully static shape."""
    g = model.graph
    known = set(t.name for t in g.initializer)
    for vi in list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            known.add(vi.name)
    return [f"{o} ({n.op_type})" for n in g.node for o in n.output
            if o and o not in known]


def _eval_shape_op(node, vals, shapes):
    """numpy value of a shape-computation node, or None if not foldable."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    ins = [vals.get(i) for i in node.input]
    op = node.op_type
    if op == "Constant":
        return numpy_helper.to_array(attrs["value"]) if "value" in attrs else None
    if op == "Shape":
        s = shapes.get(node.input[0])
        return None if s is None else np.array(s, dtype=np.int64)
    if any(v is None for v in ins):
        return None
    if op == "Gather":
        return np.take(ins[0], ins[1], axis=attrs.get("axis", 0))
    if op == "Unsqueeze":
        return np.expand_dims(ins[0], tuple(int(a) for a in ins[1]))
    if op == "Squeeze":
        return np.squeeze(ins[0], tuple(int(a) for a in ins[1]) if len(ins) > 1 else None)
    if op == "Concat":
        return np.concatenate(ins, axis=attrs["axis"])
    if op == "Cast":
        return ins[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[attrs["to"]])
    if op in ("Add", "Sub", "Mul", "Div") and ins[0].dtype.kind == "i":
        f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply,
             "Div": lambda a, b: np.trunc(a / b).astype(a.dtype)}[op]
        return f(ins[0], ins[1])
    if op == "Slice" and ins[0].ndim == 1 and len(ins) <= 4:
        return ins[0][int(ins[1][0]):int(ins[2][0])]
    return None


def fold_shape_values(model, max_rounds=100):
    """Reference for what the C++ side must do: repeatedly infer shapes and
    fold integer shape computations (Shape/Gather/Div/...) into
    initializers, until nothing changes. Needs a static batch."""
    for _ in range(max_rounds):
        model = shape_inference.infer_shapes(model, strict_mode=True)
        g = model.graph
        shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim]
                  for vi in list(g.value_info) + list(g.input)
                  if vi.type.tensor_type.HasField("shape") and all(
                      d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)}
        vals = {t.name: numpy_helper.to_array(t) for t in g.initializer
                if t.data_type == TensorProto.INT64 and not t.external_data}
        folded = []
        for node in g.node:
            v = _eval_shape_op(node, vals, shapes)
            if v is not None:
                vals[node.output[0]] = v
                folded.append(node)
        if not folded:
            return model
        for node in folded:
            g.initializer.append(numpy_helper.from_array(
                np.asarray(vals[node.output[0]]), node.output[0]))
            g.node.remove(node)
    return model


def check_shapes(path, batch=16):
    """(unresolved with onnx data_prop, unresolved after shape folding)."""
    model = onnx.load(path, load_external_data=False)
    _fix_batch(model, batch)
    bad = _unresolved(shape_inference.infer_shapes(
        model, strict_mode=True, data_prop=True))
    bad_folded = _unresolved(fold_shape_values(model)) if bad else []
    return bad, bad_folded


def main():
    ap = argparse.ArgumentParser(description="Export torchvision CNNs to "
                                 "weight-stripped ONNX graphs.")
    ap.add_argument("--out", default=HERE, help="output directory")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--strip-all", action="store_true",
                    help="also externalize integer initializers (breaks "
                         "static shape inference of Reshape targets)")
    ap.add_argument("names", nargs="*", help="models (default: the 23 of this folder; "
                    "a set name of zoo.VALIDATION_SETS: its members, use with --out onnx_models/<set>)")
    args = ap.parse_args()

    names = zoo.expand(args.names) if args.names else list(zoo.BUNDLED)
    unknown = [n for n in names if n not in zoo.ALL]
    if unknown:
        ap.error("unknown model(s): " + ", ".join(unknown))
    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
          f"onnx {onnx.__version__}, opset {args.opset}")

    failed = []
    for name in names:
        try:
            path = export(name, args.out, args.opset, args.strip_all)
            nodes = len(onnx.load(path, load_external_data=False).graph.node)
            bad, bad_folded = check_shapes(path)
        except Exception as e:  # keep going; report at the end
            failed.append(name)
            print(f"{name:22s} FAILED: {type(e).__name__}: {e}", flush=True)
            continue
        note = ""
        if bad:  # onnx's data propagation is limited (see README.md)
            note = (f"  {len(bad)} shapes unresolved by onnx data_prop, "
                    f"{len(bad_folded)} after folding shape computations")
        print(f"{name:22s} {nodes:5d} nodes {os.path.getsize(path) / 1024:8.1f} KB"
              f"{note}", flush=True)
        if bad_folded:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
