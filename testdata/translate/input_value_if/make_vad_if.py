"""Makes vad_if.onnx: an `If` on a condition computed from the input `sr` (as the
voice-activity models that branch on the sample rate), whose branches give
outputs of different shapes, so that only `--input-value sr=...` imports it.

    out = Sigmoid(If(Equal(sr, 16000), Reshape(Relu(x * 2), [6]), ReduceSum(Tanh(x + w), axis 1)))

and prints what onnxruntime computes for x (below) with sr = 16000 and 8000.
Needs onnx, onnxruntime, numpy."""
import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

then_g = h.make_graph(
    [
        h.make_node("Mul", ["x", "two"], ["m"]),
        h.make_node("Relu", ["m"], ["r"]),
        h.make_node("Reshape", ["r", "shp"], ["t_out"]),
    ],
    "then",
    [],
    [h.make_tensor_value_info("t_out", T.FLOAT, [6])],
    initializer=[nh.from_array(np.array(2, np.float32), "two"), nh.from_array(np.array([6], np.int64), "shp")],
)
else_g = h.make_graph(
    [
        h.make_node("Add", ["x", "w"], ["a"]),
        h.make_node("Tanh", ["a"], ["e_t"]),
        h.make_node("ReduceSum", ["e_t", "ax"], ["e_out"], keepdims=0),
    ],
    "else",
    [],
    [h.make_tensor_value_info("e_out", T.FLOAT, [2])],
    initializer=[nh.from_array(np.array([1], np.int64), "ax")],
)
g = h.make_graph(
    [
        h.make_node("Equal", ["sr", "k"], ["cond1"]),
        h.make_node("Squeeze", ["cond1"], ["cond"]),
        h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
        h.make_node("Sigmoid", ["y"], ["out"]),
    ],
    "vad",
    [h.make_tensor_value_info("sr", T.INT64, [1]), h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
    [h.make_tensor_value_info("out", T.FLOAT, None)],
    initializer=[
        nh.from_array(np.array([16000], np.int64), "k"),
        nh.from_array(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), "w"),
    ],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8)
onnx.save(m, "vad_if.onnx")
x = np.array([[0.5, -1.0, 2.0], [-0.25, 0.75, -3.0]], np.float32)
s = ort.InferenceSession("vad_if.onnx")
cases = []
for sr in (16000, 8000):
    out = s.run(None, {"sr": np.array([sr], np.int64), "x": x})[0]
    cases.append({"sr": sr, "onnxruntime": out.tolist()})
print(json.dumps({"x": x.tolist(), "cases": cases}))
