#!/usr/bin/env python3
"""Writes the small ONNX models of testdata/onnx_styles/ (see its README):
graphs shaped as two exporters write them, with tiny deterministic weights.

- yolov8_style.onnx: as Ultralytics' YOLOv8 export (opset 17): names with
  `/` (`/model.0/conv/Conv`), SiLU as a Sigmoid and a Mul that reads the
  Conv's output as well, a C2f-like block whose Split outputs bypass the
  bottleneck to a Concat, weights as initializers, metadata_props.
- paddle2onnx_style.onnx: as paddle2onnx writes (opset 11): every weight a
  `Constant` node (`p2o.Constant.N`) read by the operator, Paddle's value
  names (`conv2d_0.w_0`, `conv2d_0.tmp_0`).

usage: make_models.py OUT_DIR   (needs the onnx and numpy packages)
"""

import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weights(shape, seed):
    """Small values, the same on every run."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 0.1).astype(np.float32)


def yolov8_style():
    nodes, inits = [], []
    seed = [0]

    def conv_silu(prefix, x, cin, cout, k, stride):
        """`prefix/conv/Conv` then SiLU as `prefix/act/Sigmoid` and
        `prefix/act/Mul` (which reads the Conv's output too)."""
        w = f"{prefix.strip('/').replace('/', '.')}.conv.weight"
        b = w.replace(".weight", ".bias")
        seed[0] += 1
        inits.append(numpy_helper.from_array(weights((cout, cin, k, k), seed[0]), w))
        inits.append(numpy_helper.from_array(weights((cout,), seed[0] + 100), b))
        c = f"{prefix}/conv/Conv_output_0"
        nodes.append(helper.make_node("Conv", [x, w, b], [c], name=f"{prefix}/conv/Conv",
                                      kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4, dilations=[1, 1], group=1))
        s = f"{prefix}/act/Sigmoid_output_0"
        nodes.append(helper.make_node("Sigmoid", [c], [s], name=f"{prefix}/act/Sigmoid"))
        m = f"{prefix}/act/Mul_output_0"
        nodes.append(helper.make_node("Mul", [c, s], [m], name=f"{prefix}/act/Mul"))
        return m

    x = conv_silu("/model.0", "images", 3, 8, 3, 2)
    # C2f: cv1, Split in two halves, a bottleneck on the second, Concat of
    # both halves and the bottleneck's output, cv2
    y = conv_silu("/model.1/cv1", x, 8, 8, 1, 1)
    inits.append(numpy_helper.from_array(np.array([4, 4], dtype=np.int64), "onnx::Split_64"))
    halves = ["/model.1/Split_output_0", "/model.1/Split_output_1"]
    nodes.append(helper.make_node("Split", [y, "onnx::Split_64"], halves, name="/model.1/Split", axis=1))
    m = conv_silu("/model.1/m.0/cv1", halves[1], 4, 4, 3, 1)
    m = conv_silu("/model.1/m.0/cv2", m, 4, 4, 3, 1)
    cat = "/model.1/Concat_output_0"
    nodes.append(helper.make_node("Concat", [*halves, m], [cat], name="/model.1/Concat", axis=1))
    out = conv_silu("/model.1/cv2", cat, 12, 8, 1, 1)
    nodes.append(helper.make_node("Identity", [out], ["output0"], name="/model.2/Identity"))
    graph = helper.make_graph(
        nodes, "main_graph",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 8, 16, 16])],
        inits)
    model = helper.make_model(graph, producer_name="pytorch", producer_version="2.1.0",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"author": "Ultralytics", "task": "detect", "stride": "32",
                                   "names": "{0: 'person', 1: 'bicycle'}"})
    return model


def paddle2onnx_style():
    nodes, k = [], [0]

    def constant(name, value):
        """`name`'s value as a Constant node, as paddle2onnx writes weights."""
        nodes.append(helper.make_node("Constant", [], [name], name=f"p2o.Constant.{k[0]}",
                                      value=numpy_helper.from_array(value, name)))
        k[0] += 1
        return name

    w = constant("conv2d_0.w_0", weights((8, 3, 3, 3), 1))
    b = constant("conv2d_0.b_0", weights((8,), 2))
    nodes.append(helper.make_node("Conv", ["x", w, b], ["conv2d_0.tmp_0"], name="p2o.Conv.0",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                  dilations=[1, 1], group=1))
    nodes.append(helper.make_node("Relu", ["conv2d_0.tmp_0"], ["relu_0.tmp_0"], name="p2o.Relu.0"))
    shape = constant("p2o.Constant.shape", np.array([-1, 8 * 8 * 8], dtype=np.int64))
    nodes.append(helper.make_node("Reshape", ["relu_0.tmp_0", shape], ["reshape2_0.tmp_0"],
                                  name="p2o.Reshape.0"))
    fw = constant("linear_0.w_0", weights((8 * 8 * 8, 4), 3))
    nodes.append(helper.make_node("MatMul", ["reshape2_0.tmp_0", fw], ["linear_0.tmp_0"],
                                  name="p2o.MatMul.0"))
    fb = constant("linear_0.b_0", weights((4,), 4))
    nodes.append(helper.make_node("Add", ["linear_0.tmp_0", fb], ["linear_0.tmp_1"], name="p2o.Add.0"))
    batch = "p2o.DynamicDimension.0"  # paddle2onnx's name of an open dimension
    graph = helper.make_graph(
        nodes, "paddle_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 16, 16])],
        [helper.make_tensor_value_info("linear_0.tmp_1", TensorProto.FLOAT, [batch, 4])])
    model = helper.make_model(graph, producer_name="PaddlePaddle",
                              opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 6
    return model


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, model in [("yolov8_style.onnx", yolov8_style()),
                        ("paddle2onnx_style.onnx", paddle2onnx_style())]:
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, str(out / name))
        print(name, (out / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
