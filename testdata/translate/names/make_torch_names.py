#!/usr/bin/env python3
"""Writes torch_names.onnx: a small Conv + SiLU (Mul(Sigmoid)) + Concat + Gemm network named the
way torch.onnx 2.x names tensors (`/model.0/conv/Conv_output_0`) and initializers
(`/model.0/conv/weight`, `model.1.bias`, `/model.2/Constant_output_0`), and torch_names.io.npz:
a fixed input and the output onnxruntime computes from it (keys `images`, `output0`).
Needs onnx, onnxruntime and numpy.  usage: make_torch_names.py OUTDIR"""
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(31)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


inits = [
    init("/model.0/conv/weight", rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3),
    init("model.0.conv.bias", rng.standard_normal(4).astype(np.float32) * 0.1),
    init("/model.1/Constant_output_0", np.array([1, -1], dtype=np.int64)),
    init("model.1.weight", rng.standard_normal((5, 7 * 6 * 6)).astype(np.float32) * 0.05),
    init("model.1.bias", rng.standard_normal(5).astype(np.float32) * 0.1),
    init("/model.2/Constant_output_0", np.array([[0.5, -1.0, 2.0, 0.25, 1.5]], dtype=np.float32)),
]
nodes = [
    helper.make_node("Conv", ["images", "/model.0/conv/weight", "model.0.conv.bias"],
                     ["/model.0/conv/Conv_output_0"], name="/model.0/conv/Conv",
                     kernel_shape=[3, 3], pads=[0, 0, 0, 0], strides=[1, 1]),
    helper.make_node("Sigmoid", ["/model.0/conv/Conv_output_0"],
                     ["/model.0/act/Sigmoid_output_0"], name="/model.0/act/Sigmoid"),
    helper.make_node("Mul", ["/model.0/conv/Conv_output_0", "/model.0/act/Sigmoid_output_0"],
                     ["/model.0/act/Mul_output_0"], name="/model.0/act/Mul"),
    helper.make_node("Slice", ["images", "/model.0/Slice_starts", "/model.0/Slice_ends",
                               "/model.0/Slice_axes"],
                     ["/model.0/Slice_output_0"], name="/model.0/Slice"),
    helper.make_node("Concat", ["/model.0/act/Mul_output_0", "/model.0/Slice_output_0"],
                     ["/model.1/Concat_output_0"], name="/model.1/Concat", axis=1),
    helper.make_node("Reshape", ["/model.1/Concat_output_0", "/model.1/Constant_output_0"],
                     ["/model.1/Reshape_output_0"], name="/model.1/Reshape"),
    helper.make_node("Gemm", ["/model.1/Reshape_output_0", "model.1.weight", "model.1.bias"],
                     ["/model.1/Gemm_output_0"], name="/model.1/Gemm", transB=1),
    helper.make_node("Mul", ["/model.1/Gemm_output_0", "/model.2/Constant_output_0"],
                     ["output0"], name="/model.2/Mul"),
]
inits += [
    init("/model.0/Slice_starts", np.array([1, 1], dtype=np.int64)),
    init("/model.0/Slice_ends", np.array([7, 7], dtype=np.int64)),
    init("/model.0/Slice_axes", np.array([2, 3], dtype=np.int64)),
]
graph = helper.make_graph(
    nodes, "main_graph",
    [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 5])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="pytorch", producer_version="2.1.0")
model.ir_version = 8
onnx.checker.check_model(model, full_check=True)
path = os.path.join(out, "torch_names.onnx")
onnx.save(model, path)

import onnxruntime as ort
x = np.random.default_rng(7).standard_normal((1, 3, 8, 8)).astype(np.float32)
sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
(y,) = sess.run(None, {"images": x})
np.savez(os.path.join(out, "torch_names.io.npz"), images=x, output0=y)
print("onnxruntime", ort.__version__, "output0", y.tolist())
