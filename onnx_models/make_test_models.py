#!/usr/bin/python3
"""Build the tiny hand-made ONNX fixtures used by the C++ unit tests.

Usage:  /usr/bin/python3 onnx_models/make_test_models.py [--out DIR]

Default output directory is tests/data/ (relative to the repo root).
Everything is deterministic (fixed RNG seed), so regenerating gives
byte-identical files with the same onnx version.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

OPSET = 13
IR_VERSION = 8  # libonnx-dev 1.12 on the C++ side reads IR <= 8
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

rng = np.random.default_rng(1234)


def weight(name, *shape):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def model(graph, extra_opsets=()):
    opsets = [helper.make_opsetid("", OPSET)] + list(extra_opsets)
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="tilewave-fixtures")
    m.ir_version = IR_VERSION
    return m


def save_checked(m, path):
    onnx.checker.check_model(m)
    onnx.save(m, path)


def tiny_cnn(batch):
    """Conv-Relu-Conv-Add(residual)-Relu-MaxPool-GAP-Flatten-Gemm, 32x32 in."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "conv1.w", "conv1.b"], ["c1"], name="conv1",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"], name="relu1"),
        # second conv deliberately has no bias: exercises the 2-input Conv form
        n("Conv", ["r1", "conv2.w"], ["c2"], name="conv2",
          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Add", ["c2", "r1"], ["sum"], name="residual_add"),
        n("Relu", ["sum"], ["r2"], name="relu2"),
        n("MaxPool", ["r2"], ["p"], name="maxpool",
          kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["p"], ["g"], name="gap"),
        n("Flatten", ["g"], ["f"], name="flatten", axis=1),
        n("Gemm", ["f", "fc.w", "fc.b"], ["y"], name="fc", transB=1),
    ]
    inits = [weight("conv1.w", 16, 3, 3, 3), weight("conv1.b", 16),
             weight("conv2.w", 16, 16, 3, 3),
             weight("fc.w", 10, 16), weight("fc.b", 10)]
    g = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
        initializer=inits)
    return model(g)


def depthwise():
    c = 32
    node = helper.make_node("Conv", ["x", "dw.w"], ["y"], name="dwconv",
                            group=c, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g = helper.make_graph(
        [node], "depthwise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 56, 56])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 56, 56])],
        initializer=[weight("dw.w", c, 1, 3, 3)])
    return model(g)


def matmul():
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="bmm")
    g = helper.make_graph(
        [node], "matmul",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["B", 64, 128]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["B", 128, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 64, 256])])
    return model(g)


def shuffle():
    """Channel shuffle (groups=2) as torch.onnx 1.13 exports
    x.view(n, g, c // g, h, w).transpose(1, 2).reshape(n, -1, h, w) with a
    dynamic batch: the Reshape targets are computed from Shape(x) at run
    time (including an integer Div + Cast), so a static analyzer has to
    propagate shape *values*. Note onnx 1.12's own data_prop does NOT
    resolve this (Reshape-13 ignores propagated data; Div has no propagator).
    """
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["shape"], name="shape")]
    for i, dim in enumerate(["n", "c", "h", "w"]):
        nodes.append(n("Gather", ["shape", f"idx{i}"], [dim], name=f"gather_{dim}",
                       axis=0))
    nodes += [
        n("Div", ["c", "groups"], ["cpg_div"], name="div_groups"),
        n("Cast", ["cpg_div"], ["cpg"], name="cast_cpg", to=TensorProto.INT64),
    ]
    for dim in ["n", "cpg", "h", "w"]:
        nodes.append(n("Unsqueeze", [dim, "axes0"], [dim + "_1d"],
                       name=f"unsqueeze_{dim}"))
    nodes += [
        n("Concat", ["n_1d", "groups_1d", "cpg_1d", "h_1d", "w_1d"], ["shape5"],
          name="concat5", axis=0),
        n("Reshape", ["x", "shape5"], ["x5"], name="reshape_split"),
        n("Transpose", ["x5"], ["x5t"], name="transpose", perm=[0, 2, 1, 3, 4]),
        n("Concat", ["n_1d", "minus1", "h_1d", "w_1d"], ["shape4"],
          name="concat4", axis=0),
        n("Reshape", ["x5t", "shape4"], ["y"], name="reshape_merge"),
    ]
    scalar = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    inits = [scalar(f"idx{i}", i) for i in range(4)] + [
        scalar("groups", 2),
        ints("groups_1d", [2]),
        ints("axes0", [0]),
        ints("minus1", [-1]),
    ]
    g = helper.make_graph(
        nodes, "shuffle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 24, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 24, 28, 28])],
        initializer=inits)
    return model(g)


def activations():
    """Exporter decompositions of framework ops (docs/model.md "Framework ops"):
    GELU as five nodes, SiLU as Sigmoid*x, a plain Relu->Sigmoid chain, a
    Linear as MatMul+Add, NCHW<->NHWC permutes and one real transpose."""
    n = helper.make_node
    f = lambda name, v: numpy_helper.from_array(np.asarray(v, dtype=np.float32), name)
    nodes = [
        n("Div", ["x", "sqrt2"], ["g1"]), n("Erf", ["g1"], ["g2"]),
        n("Add", ["g2", "one"], ["g3"]), n("Mul", ["x", "g3"], ["g4"]),
        n("Mul", ["g4", "half"], ["gelu"]),
        n("Relu", ["gelu"], ["r"]), n("Sigmoid", ["r"], ["s"]),
        n("Sigmoid", ["s"], ["sig"]), n("Mul", ["s", "sig"], ["silu"]),
        n("Transpose", ["silu"], ["nhwc"], perm=[0, 2, 3, 1]),
        n("MatMul", ["nhwc", "fc.w"], ["fc"]), n("Add", ["fc", "fc.b"], ["lin"]),
        n("Transpose", ["lin"], ["nchw"], perm=[0, 3, 1, 2]),
        n("Transpose", ["nchw"], ["y"], perm=[0, 1, 3, 2]),
    ]
    g = helper.make_graph(
        nodes, "activations",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, 4, 4])],
        [f("sqrt2", 1.4142135), f("one", 1.0), f("half", 0.5), weight("fc.w", 8, 16), weight("fc.b", 16)])
    return model(g)


def unknown_op():
    n = helper.make_node
    nodes = [
        n("Relu", ["x"], ["a"], name="relu_in"),
        n("Frobnicate", ["a"], ["b"], name="frob", domain="com.example", strength=3),
        n("Relu", ["b"], ["y"], name="relu_out"),
    ]
    shape = [1, 8, 16, 16]
    g = helper.make_graph(
        nodes, "unknown_op",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return model(g, [helper.make_opsetid("com.example", 1)])


def conv3d():
    # A 3-D convolution: tensor-core work tilewave cannot model (only 1-D and
    # 2-D convs are), so analyze must fail rather than leave it out.
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv3d", kernel_shape=[3, 3, 3], pads=[1] * 6)
    g = helper.make_graph(
        [node], "conv3d",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8, 8, 16, 16])],
        initializer=[weight("w", 8, 4, 3, 3, 3)])
    return model(g)


def odd_names(mismatch):
    # Node and tensor names with a newline, a control character and bytes that
    # are not UTF-8, as a broken exporter might write them (patched into the
    # serialized bytes: protobuf's Python API accepts only valid strings).
    # mismatch: a Conv whose input channels do not match its weight.
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["a"], name="NAME_TO_PATCH_1"),
             n("Conv", ["a", "w"], ["y"], name="NAME_TO_PATCH_2", kernel_shape=[1, 1])]
    g = helper.make_graph(
        nodes, "odd_names",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.full((8, 3 if mismatch else 4, 1, 1), 0.5, np.float32), "w")])
    data = model(g).SerializeToString()
    for i in (1, 2):
        data = data.replace(f"NAME_TO_PATCH_{i}".encode(), f"bad\xff\n\x07na{i}".encode("latin-1").ljust(15, b"!"))
    return data


# ---- invalid fixtures: built with helper but saved without the checker ----

def cycle():
    n = helper.make_node
    # a = Add(x, b); b = Relu(a): no topological order exists
    nodes = [n("Add", ["x", "b"], ["a"], name="add"),
             n("Relu", ["a"], ["b"], name="relu")]
    shape = [1, 4]
    g = helper.make_graph(
        nodes, "cycle",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, shape)])
    return model(g)


def dangling():
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["a"], name="relu"),
             n("Add", ["a", "ghost"], ["y"], name="add")]  # 'ghost' has no producer
    shape = [1, 4]
    g = helper.make_graph(
        nodes, "dangling",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return model(g)


def unknown_shape():
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g = helper.make_graph(
        [node], "unknown_shape",
        # shape=None: the TypeProto has elem_type but no 'shape' field at all
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[weight("w", 8, 3, 3, 3)])
    return model(g)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "tests", "data"))
    args = ap.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)

    save_checked(tiny_cnn("batch"), p("tiny_cnn.onnx"))
    save_checked(tiny_cnn(2), p("tiny_cnn_fixed.onnx"))

    # Weight-stripped: initializers point at external data that does not exist
    stripped = tiny_cnn("batch")
    stripped.graph.name = "stripped"
    convert_model_to_external_data(stripped, all_tensors_to_one_file=True,
                                   location="stripped.weights", size_threshold=0)
    onnx.save(stripped, p("stripped.onnx"))
    os.remove(p("stripped.weights"))

    save_checked(depthwise(), p("depthwise.onnx"))
    save_checked(matmul(), p("matmul.onnx"))
    save_checked(shuffle(), p("shuffle.onnx"))
    save_checked(unknown_op(), p("unknown_op.onnx"))

    onnx.save(cycle(), p("cycle.onnx"))
    onnx.save(dangling(), p("dangling.onnx"))
    onnx.save(unknown_shape(), p("unknown_shape.onnx"))
    save_checked(activations(), p("activations.onnx"))  # keeps the earlier fixtures' random weights
    save_checked(conv3d(), p("conv3d.onnx"))
    for name, mismatch in (("odd_names.onnx", False), ("odd_names_mismatch.onnx", True)):
        with open(p(name), "wb") as f:
            f.write(odd_names(mismatch))
    with open(p("not_onnx.onnx"), "w") as f:
        f.write("this is not an ONNX model, just a few bytes of text\n")
    with open(p("tiny_cnn.onnx"), "rb") as f:
        data = f.read()
    with open(p("truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])

    for name in sorted(os.listdir(out)):
        if name.endswith(".onnx"):
            print(f"{name:24s} {os.path.getsize(p(name)):7d} bytes")


if __name__ == "__main__":
    main()
