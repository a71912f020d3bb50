#!/usr/bin/env python3
"""Writes if_select.onnx: `out = Sigmoid(If(Greater(flag, 0), Relu(x * 2), Tanh(x + w)))`,
an `If` whose condition is computed at run time from the input `flag`, with branches of one
shape. usage: make_if_select.py OUTDIR (needs onnx, numpy)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper


def main(out):
    vi = helper.make_tensor_value_info
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t_out"]), helper.make_node("Relu", ["t_out"], ["t_relu"])],
        "then", [], [vi("t_relu", T.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    else_g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["e_out"]), helper.make_node("Tanh", ["e_out"], ["e_tanh"])],
        "else", [], [vi("e_tanh", T.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("Greater", ["flag", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], name="branchy", then_branch=then_g, else_branch=else_g),
        helper.make_node("Sigmoid", ["y"], ["out"]),
    ]
    g = helper.make_graph(
        nodes, "g", [vi("x", T.FLOAT, [2, 3]), vi("flag", T.FLOAT, [1])], [vi("out", T.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array([0.0], np.float32), "zero"),
         numpy_helper.from_array(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32), "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_if_select.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "if_select.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
